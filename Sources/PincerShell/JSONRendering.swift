import PincerHost

/// Renders a command's JSON result for people: an array of objects as a
/// table, an object as aligned name/value lines, scalars as text. Machines
/// get the JSON itself with --json.
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
            let width = fields.map(\.0.count).max() ?? 0
            for (key, field) in fields {
                if isNonEmptyContainer(field) {
                    out += indent + key + ":\n"
                    render(field, indent: indent + "  ", into: &out)
                } else {
                    out += trimmed(indent + key.padded(to: width) + "  " + scalar(field)) + "\n"
                }
            }
        default:
            out += indent + scalar(value) + "\n"
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
        var columns: [String] = []
        for case .object(let fields) in rows {
            for (key, _) in fields where !columns.contains(key) { columns.append(key) }
        }
        let cells: [[String]] = rows.map { row in columns.map { row[$0].map(scalar) ?? "" } }
        let widths = columns.indices.map { c in max(columns[c].count, cells.map { $0[c].count }.max() ?? 0) }
        func line(_ values: [String]) -> String {
            var s = indent
            for (i, v) in values.enumerated() {
                s += i == values.count - 1 ? v : v.padded(to: widths[i]) + "  "
            }
            return trimmed(s) + "\n"
        }
        out += line(columns.map { $0.uppercased() })
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
}
