import PincerHost
import enum PincerPluginKit.Base64

/// Renders a command's JSON result for people: an array of objects as a
/// table, a table-shaped object (`columns` + `rows`) as a table with its
/// other fields below, an object as aligned name/value lines, scalars as
/// text. Machines get the JSON itself with --json, or CSV with --csv.
enum JSONRendering {
    static func render(_ value: JSON) -> String {
        var out = ""
        render(value, indent: "", into: &out)
        return out
    }

    private static func render(_ value: JSON, indent: String, into out: inout String) {
        switch value {
        case .array(let items):
            if items.isEmpty { out += indent + "(none)\n"; return }
            if items.allSatisfy({ if case .object = $0 { true } else { false } }) {
                table(items, indent: indent, into: &out)
            } else {
                for item in items { out += indent + scalar(item) + "\n" }
            }
        case .object(let fields):
            if let shape = TableShape(value) {
                tableShape(shape, indent: indent, into: &out)
            } else {
                fieldLines(fields, indent: indent, into: &out)
            }
        default:
            out += indent + scalar(value) + "\n"
        }
    }

    /// Scalars as aligned `name  value` lines, non-empty containers nested below their name.
    private static func fieldLines(_ fields: [(String, JSON)], indent: String, into out: inout String) {
        let width = fields.map(\.0.count).max() ?? 0
        for (key, field) in fields {
            if isNonEmptyContainer(field) {
                out += indent + key + ":\n"
                render(field, indent: indent + "  ", into: &out)
            } else {
                out += trimmed(indent + key.padded(to: width) + "  " + scalar(field)) + "\n"
            }
        }
    }

    private static func isNonEmptyContainer(_ value: JSON) -> Bool {
        switch value {
        case .array(let items): !items.isEmpty
        case .object(let fields): !fields.isEmpty
        default: false
        }
    }

    /// Columns are the union of the objects' keys in first-seen order.
    private static func table(_ rows: [JSON], indent: String, into out: inout String) {
        let columns = unionOfKeys(rows)
        let cells: [[String]] = rows.map { row in columns.map { row[$0].map(scalar) ?? "" } }
        aligned(header: columns.map { $0.uppercased() }, cells: cells, indent: indent, into: &out)
    }

    /// The table shape keeps its column names as given (they are data, and
    /// may repeat), shows JSON null as NULL so it differs from the text "-",
    /// and keeps every cell on one bounded line. Below it come the other
    /// scalar fields; arrays and objects beside a table (a page's row keys)
    /// are for machines and appear with --json only.
    private static func tableShape(_ shape: TableShape, indent: String, into out: inout String) {
        let header = shape.columns.map { oneLine($0) }
        let cells = shape.rows.map { row in row.map { oneLine(tableCell($0)) } }
        aligned(header: header, cells: cells, indent: indent, into: &out)
        if shape.rows.isEmpty { out += indent + "(no rows)\n" }
        fieldLines(shape.otherFields.filter { f in
            switch f.1 {
            case .null, .array, .object: false
            default: true
            }
        }, indent: indent, into: &out)
    }

    private static func aligned(header: [String], cells: [[String]], indent: String, into out: inout String) {
        let widths = header.indices.map { c in max(header[c].count, cells.map { $0[c].count }.max() ?? 0) }
        func line(_ values: [String]) -> String {
            var s = indent
            for (i, v) in values.enumerated() {
                s += i == values.count - 1 ? v : v.padded(to: widths[i]) + "  "
            }
            return trimmed(s) + "\n"
        }
        out += line(header)
        for row in cells { out += line(row) }
    }

    /// Empty last cells leave no trailing blanks.
    private static func trimmed(_ line: String) -> String {
        var s = line
        while s.last == " " { s.removeLast() }
        return s
    }

    /// One cell: strings bare, null as "-", nested values as compact JSON.
    private static func scalar(_ value: JSON) -> String {
        switch value {
        case .null: "-"
        case .string(let s): s
        default: value.serialized()
        }
    }

    /// One cell of the table shape: as `scalar`, but null is "NULL".
    private static func tableCell(_ value: JSON) -> String {
        value == .null ? "NULL" : scalar(value)
    }

    static let maxCellWidth = 60

    /// A cell made safe for one aligned line: newlines, tabs and other
    /// control characters become visible escapes, and a long cell is cut
    /// to `maxCellWidth` characters ending in "…". Text tables only: CSV
    /// and --json carry the full value.
    static func oneLine(_ text: String) -> String {
        var s = ""
        for u in text.unicodeScalars {
            switch u {
            case "\n": s += "\\n"
            case "\t": s += "\\t"
            default:
                if u.properties.generalCategory == .control {
                    s += "\\u{\(String(u.value, radix: 16, uppercase: true))}"
                } else {
                    s.unicodeScalars.append(u)
                }
            }
        }
        guard s.count > maxCellWidth else { return s }
        return String(s.prefix(maxCellWidth - 1)) + "…"
    }

    private static func unionOfKeys(_ rows: [JSON]) -> [String] {
        var columns: [String] = []
        for case .object(let fields) in rows {
            for (key, _) in fields where !columns.contains(key) { columns.append(key) }
        }
        return columns
    }

    // MARK: CSV

    /// RFC 4180 CSV of a table result (with "\n" line ends), or nil when the
    /// value holds no table. A table is, in this order: the table shape; an
    /// array of objects (columns: the union of their keys); an object with
    /// one field that is an array of objects (`flags.list`: its other,
    /// scalar fields are left out); an object of scalars (`servers.vars`),
    /// as `name,value` rows.
    static func csv(_ value: JSON) -> String? {
        let header: [String]
        let rows: [[JSON?]]
        if let shape = TableShape(value) {
            header = shape.columns
            rows = shape.rows.map { $0.map(Optional.some) }
        } else if let items = arrayOfObjects(value) {
            header = unionOfKeys(items)
            rows = items.map { item in header.map { item[$0] } }
        } else if case .object(let fields) = value {
            let tables = fields.compactMap { arrayOfObjects($0.1) }
            if tables.count == 1, fields.allSatisfy({ arrayOfObjects($0.1) != nil || isScalar($0.1) }) {
                header = unionOfKeys(tables[0])
                rows = tables[0].map { item in header.map { item[$0] } }
            } else if tables.isEmpty, fields.allSatisfy({ isScalar($0.1) }) {
                header = ["name", "value"]
                rows = fields.map { [.string($0.0), $0.1] }
            } else {
                return nil
            }
        } else {
            return nil
        }
        var out = ""
        if !header.isEmpty { out += csvLine(header) }
        for row in rows { out += csvLine(row.map { $0.map(csvCell) ?? "" }) }
        return out
    }

    private static func arrayOfObjects(_ value: JSON) -> [JSON]? {
        guard case .array(let items) = value, items.allSatisfy({ if case .object = $0 { true } else { false } }) else { return nil }
        return items
    }

    private static func isScalar(_ value: JSON) -> Bool {
        switch value {
        case .array, .object: false
        default: true
        }
    }

    /// Null is an empty field; strings are written in full. The two values
    /// JSON cannot hold, as result sets carry them: a non-finite real
    /// ({"real": "NaN"}) is `NaN`, `Infinity` or `-Infinity` (what Python's
    /// float() and JavaScript's Number() read), a blob ({"base64": …}) is
    /// `\x` and its bytes in lowercase hex (PostgreSQL's bytea form).
    /// Everything else is its JSON text.
    static func csvCell(_ value: JSON) -> String {
        switch value {
        case .null: return ""
        case .string(let s): return s
        case .object(let fields) where fields.count == 1:
            if fields[0].0 == "real", case .string(let s) = fields[0].1, ["NaN", "Infinity", "-Infinity"].contains(s) { return s }
            if fields[0].0 == "base64", case .string(let s) = fields[0].1, let bytes = Base64.decode(s) {
                let digits = Array("0123456789abcdef".utf8)
                var out: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
                for b in bytes { out += [digits[Int(b >> 4)], digits[Int(b & 15)]] }
                return String(decoding: out, as: UTF8.self)
            }
            return value.serialized()
        default: return value.serialized()
        }
    }

    private static func csvLine(_ fields: [String]) -> String {
        fields.map(csvField).joined(separator: ",") + "\n"
    }

    /// Quoted when it holds a separator, a quote or a line break, or when
    /// spaces at either end would be lost by readers that trim.
    static func csvField(_ field: String) -> String {
        let needsQuotes = field.unicodeScalars.contains { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" }
            || field.unicodeScalars.first.map(isBlank) == true || field.unicodeScalars.last.map(isBlank) == true
        guard needsQuotes else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private static func isBlank(_ u: Unicode.Scalar) -> Bool { u == " " || u == "\t" }
}

/// `{"columns": [names...], "rows": [[cells...]...], ...}`: how a command
/// returns a result set whose columns may repeat or be ordered (a SQL
/// query). Columns are positional; every row has exactly one cell per
/// column, otherwise the object is rendered as an ordinary object.
struct TableShape {
    let columns: [String]
    let rows: [[JSON]]
    /// The object's fields other than `columns` and `rows`, in order.
    let otherFields: [(String, JSON)]

    init?(_ value: JSON) {
        guard case .object(let fields) = value,
              case .array(let names)? = value["columns"], case .array(let rowValues)? = value["rows"] else { return nil }
        var columns: [String] = []
        for case .string(let name) in names { columns.append(name) }
        guard columns.count == names.count else { return nil }
        var rows: [[JSON]] = []
        for row in rowValues {
            guard case .array(let cells) = row, cells.count == columns.count else { return nil }
            rows.append(cells)
        }
        self.columns = columns
        self.rows = rows
        otherFields = fields.filter { $0.0 != "columns" && $0.0 != "rows" }
    }
}
