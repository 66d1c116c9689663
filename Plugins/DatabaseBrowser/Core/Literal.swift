// Values as people type them on a command line and read them in JSON.
import PincerPluginKit

/// Shell words to values, in the spirit of sqlite3's `.parameter set`:
/// NULL, integers and reals are themselves, 'quoted' is text (with ''
/// for a quote), x'00ff' is a blob, and any other word is text as typed.
public enum Literal {
    public static func parse(_ word: String) -> DBValue {
        if word.uppercased() == "NULL" { return .null }
        if let i = Int64(word) { return .integer(i) }
        if looksNumeric(word), let d = Double(word), d.isFinite { return .real(d) }
        if word.count >= 2, word.hasPrefix("'"), word.hasSuffix("'") {
            let inner = word.dropFirst().dropLast()
            return .text(inner.split(separator: "''", omittingEmptySubsequences: false).joined(separator: "'"))
        }
        let lower = word.lowercased()
        if lower.hasPrefix("x'"), word.hasSuffix("'"), word.count >= 3, let bytes = hex(String(word.dropFirst(2).dropLast())) {
            return .blob(bytes)
        }
        return .text(word)
    }

    /// Only plain decimal notation is a real: "inf", "nan" and hex floats are text.
    private static func looksNumeric(_ w: String) -> Bool {
        !w.isEmpty && w.utf8.allSatisfy { b in (b >= 48 && b <= 57) || b == UInt8(ascii: ".") || b == UInt8(ascii: "e")
            || b == UInt8(ascii: "E") || b == UInt8(ascii: "-") || b == UInt8(ascii: "+") }
            && w.utf8.contains { $0 >= 48 && $0 <= 57 }
    }

    static func hex(_ s: String) -> [UInt8]? {
        let digits = Array(s.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 65...70: c - 55
            case 97...102: c - 87
            default: nil
            }
        }
        var i = 0
        while i < digits.count {
            guard let hi = nibble(digits[i]), let lo = nibble(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// A value written the way `parse` reads it back (for messages).
    public static func text(_ v: DBValue) -> String {
        switch v {
        case .null: return "NULL"
        case .integer(let i): return String(i)
        case .real(let d): return String(d)
        case .text(let s): return "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
        case .blob(let b):
            let digits = Array("0123456789abcdef".utf8)
            var out: [UInt8] = Array("x'".utf8)
            for byte in b { out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 15)]) }
            out.append(UInt8(ascii: "'"))
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// "column=literal" words, as db.insert and db.update take them.
    public static func assignments(_ words: [String]) throws(DatabaseError) -> [(column: String, value: DBValue)] {
        var out: [(column: String, value: DBValue)] = []
        for w in words {
            guard let eq = w.firstIndex(of: "="), eq != w.startIndex else {
                throw .invalid("'\(w)' is not column=value (for example Name='Jazz' or Price=0.99)")
            }
            out.append((String(w[..<eq]), parse(String(w[w.index(after: eq)...]))))
        }
        return out
    }

    /// A row key as one word: literals separated by commas, in key order,
    /// each optionally named ("PlaylistId=1,TrackId=3402" or "1,3402").
    /// A quoted text may contain commas.
    public static func key(_ word: String, columns: [String]) throws(DatabaseError) -> [DBValue] {
        var parts: [String] = []
        var current = ""
        var quoted = false
        for ch in word {
            if ch == "'" { quoted.toggle() }
            if ch == "," && !quoted { parts.append(current); current = "" } else { current.append(ch) }
        }
        parts.append(current)
        var values = [DBValue?](repeating: nil, count: columns.count)
        guard parts.count == columns.count else {
            throw .invalid("the key '\(word)' has \(parts.count) value\(parts.count == 1 ? "" : "s"); rows are identified by (\(columns.joined(separator: ", ")))")
        }
        for (i, part) in parts.enumerated() {
            if let eq = part.firstIndex(of: "="), !part.hasPrefix("'"), !part.lowercased().hasPrefix("x'") {
                let name = String(part[..<eq])
                guard let at = columns.firstIndex(where: { $0.lowercased() == name.lowercased() }) else {
                    throw .invalid("the key names '\(name)', which is not a key column (\(columns.joined(separator: ", ")))")
                }
                values[at] = parse(String(part[part.index(after: eq)...]))
            } else {
                values[i] = parse(part)
            }
        }
        let complete = values.compactMap { $0 }
        guard complete.count == columns.count else {
            throw .invalid("the key '\(word)' does not give every key column (\(columns.joined(separator: ", ")))")
        }
        return complete
    }
}

extension DBValue {
    /// JSON without loss: integers beyond ±2^53 as strings (a double cannot
    /// hold them), blobs as {"base64": …}, non-finite reals as {"real": "NaN"}.
    public var json: JSON {
        switch self {
        case .null: return .null
        case .integer(let i): return i >= -(1 << 53) && i <= 1 << 53 ? .int(i) : .string(String(i))
        case .real(let d):
            if d.isNaN { return .object([("real", .string("NaN"))]) }
            if d.isInfinite { return .object([("real", .string(d > 0 ? "Infinity" : "-Infinity"))]) }
            return .double(d)
        case .text(let s): return .string(s)
        case .blob(let b): return .object([("base64", .string(Base64.encode(b)))])
        }
    }
}

extension Page {
    /// The browser's page document: {"columns", "rows", and, where rows
    /// can be addressed, "key_columns" and "keys"}, plus paging fields:
    /// "next_cursor" to continue by keyset, and "next_offset" when more rows
    /// follow a page read by offset, and "paging_note" when the object
    /// cannot be paged by cursor.
    public func json(extra: [(String, JSON)] = [], offset: Int? = nil) -> JSON {
        var fields: [(String, JSON)] = extra
        fields.append(("columns", .array(columns.map(JSON.string))))
        fields.append(("rows", .array(rows.map { .array($0.map(\.json)) })))
        if !keyColumns.isEmpty {
            fields.append(("key_columns", .array(keyColumns.map(JSON.string))))
            fields.append(("keys", .array(keys.map { .array($0.map(\.json)) })))
        }
        if let paging { fields.append(("paging", .string(paging == .keyset ? "keyset" : "offset"))) }
        if paging != nil { fields.append(("next_cursor", nextCursor.map(JSON.string) ?? .null)) }
        if paging == .offset, more, let offset { fields.append(("next_offset", .int(Int64(offset + rows.count)))) }
        if let note { fields.append(("paging_note", .string(note))) }
        return .object(fields)
    }
}
