// Keyset paging: a cursor carries the last row's values of the (total)
// order, and the next page seeks past them, so every page costs the same
// however deep it is. Cursors are opaque to callers but checked: one made
// for another object or order is refused rather than silently misread.
import PincerPluginKit

/// One term of a total order, as SQL.
struct OrderColumn: Equatable {
    let expression: String
    let descending: Bool
    /// Whether the column may hold NULL (decides the predicate's shape).
    let nullable: Bool
}

enum KeysetCursor {
    static let prefix = "k1."

    /// FNV-1a over the object and the order, so a cursor is tied to both.
    static func fingerprint(object: String, order: [OrderColumn]) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ s: String) {
            for b in s.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            h = (h ^ 0xff) &* 0x100_0000_01b3
        }
        mix(object)
        for o in order { mix(o.expression); mix(o.descending ? "d" : "a") }
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    static func encode(object: String, order: [OrderColumn], values: [DBValue]) -> String {
        var bytes: [UInt8] = []
        for v in values { ValueCoding.append(v, to: &bytes) }
        return prefix + fingerprint(object: object, order: order) + "." + Base64.encode(bytes, alphabet: .urlSafe)
    }

    static func decode(_ cursor: String, object: String, order: [OrderColumn]) throws(DatabaseError) -> [DBValue] {
        let parts = cursor.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, cursor.hasPrefix(prefix), let bytes = Base64.decode(String(parts[2]), alphabet: .urlSafe) else {
            throw .invalid("the cursor '\(cursor.prefix(40))' is not one this adapter made")
        }
        guard String(parts[1]) == fingerprint(object: object, order: order) else {
            throw .invalid("the cursor was made for another table or order; start again without --after")
        }
        var values: [DBValue] = []
        var reader = ValueCoding.Reader(bytes: bytes)
        while !reader.atEnd {
            guard let v = reader.next() else { throw .invalid("the cursor is damaged") }
            values.append(v)
        }
        guard values.count == order.count else { throw .invalid("the cursor is damaged (\(values.count) values for \(order.count) order terms)") }
        return values
    }

    /// The WHERE condition "after `values` in `order`", with its parameters.
    /// SQLite sorts NULL first ascending and last descending. When every
    /// term has one direction and nothing is NULL, a row value comparison
    /// lets the engine seek in an index; otherwise the expanded form
    /// (a > ?) OR (a IS ? AND b > ?) ... handles NULLs and mixed directions.
    static func predicate(order: [OrderColumn], after values: [DBValue]) -> (sql: String, parameters: [DBValue]) {
        let descending = order.first?.descending ?? false
        let uniform = order.allSatisfy { $0.descending == descending } && !values.contains(.null)
            && (!descending || order.allSatisfy { !$0.nullable })
        if uniform {
            let op = descending ? "<" : ">"
            if order.count == 1 { return ("\(order[0].expression) \(op) ?", values) }
            let columns = order.map(\.expression).joined(separator: ", ")
            let marks = Array(repeating: "?", count: order.count).joined(separator: ", ")
            return ("(\(columns)) \(op) (\(marks))", values)
        }
        var alternatives: [String] = []
        var parameters: [DBValue] = []
        for i in order.indices {
            var parts: [String] = []
            var ps: [DBValue] = []
            for j in 0..<i {
                parts.append("\(order[j].expression) IS ?")
                ps.append(values[j])
            }
            let e = order[i].expression
            switch (order[i].descending, values[i]) {
            case (false, .null): parts.append("\(e) IS NOT NULL")
            case (false, let v): parts.append("\(e) > ?"); ps.append(v)
            case (true, .null): continue // nothing sorts after NULL descending but other NULLs
            case (true, let v): parts.append("(\(e) < ? OR \(e) IS NULL)"); ps.append(v)
            }
            alternatives.append("(" + parts.joined(separator: " AND ") + ")")
            parameters += ps
        }
        if alternatives.isEmpty { return ("0", []) }
        return (alternatives.joined(separator: " OR "), parameters)
    }
}

/// A compact binary form of DBValues: a tag byte, then 8 bytes for numbers
/// or a length and the bytes for text and blobs.
enum ValueCoding {
    static func append(_ v: DBValue, to out: inout [UInt8]) {
        func u64(_ x: UInt64) { for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: x >> (8 * UInt64(i)))) } }
        switch v {
        case .null: out.append(0)
        case .integer(let i): out.append(1); u64(UInt64(bitPattern: i))
        case .real(let d): out.append(2); u64(d.bitPattern)
        case .text(let s): out.append(3); u64(UInt64(s.utf8.count)); out += s.utf8
        case .blob(let b): out.append(4); u64(UInt64(b.count)); out += b
        }
    }

    struct Reader {
        let bytes: [UInt8]
        var at = 0
        var atEnd: Bool { at >= bytes.count }

        mutating func u64() -> UInt64? {
            guard at + 8 <= bytes.count else { return nil }
            var x: UInt64 = 0
            for i in 0..<8 { x |= UInt64(bytes[at + i]) << (8 * UInt64(i)) }
            at += 8
            return x
        }

        mutating func next() -> DBValue? {
            guard at < bytes.count else { return nil }
            let tag = bytes[at]
            at += 1
            switch tag {
            case 0: return .null
            case 1: return u64().map { .integer(Int64(bitPattern: $0)) }
            case 2: return u64().map { .real(Double(bitPattern: $0)) }
            case 3, 4:
                guard let n = u64(), n <= UInt64(bytes.count - at) else { return nil }
                let slice = Array(bytes[at..<at + Int(n)])
                at += Int(n)
                return tag == 3 ? .text(String(decoding: slice, as: UTF8.self)) : .blob(slice)
            default: return nil
            }
        }
    }
}
