// What the SQLite adapter knows about an object, read with the engine's own
// table-valued pragmas and bound names (never spliced into SQL).

/// SQL identifier quoting: "name" with inner quotes doubled.
func quoteIdentifier(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard contains(target) else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

/// An object's description plus what building its queries needs.
struct SQLiteObject {
    let description: ObjectDescription
    /// Columns a page shows: all but a virtual table's hidden ones.
    let visibleColumns: [Column]
    /// SQL for each key column (a rowid alias is written bare).
    let keyExpressions: [String]
    /// Key columns that can never be NULL, for the keyset predicate.
    let keyNotNull: [Bool]
    /// The order keyset paging adds to make any order total: the key, then
    /// the rowid where the key may hold NULLs (a rowid table's declared
    /// PRIMARY KEY is UNIQUE, and NULLs never conflict there, so several
    /// rows may share a NULL key). nil when no such order exists (views,
    /// virtual tables, a NULL-able key whose rowid names are all shadowed
    /// by columns): the object pages by offset only.
    let totalOrder: [OrderColumn]?
    /// Why `totalOrder` is nil, for the page's note.
    let noKeysetReason: String?
}

extension SQLiteConnection {
    func objectList() throws(DatabaseError) -> [ObjectInfo] {
        let rows = try rows("""
            SELECT name, type FROM pragma_table_list
            WHERE schema = 'main' AND type IN ('table', 'view', 'virtual') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            ORDER BY name
            """)
        return rows.compactMap { r in
            guard let name = r[0].asText, let type = r[1].asText else { return nil }
            return ObjectInfo(name: name, kind: type == "view" ? .view : type == "virtual" ? .virtualTable : .table)
        }
    }

    func object(_ name: String) throws(DatabaseError) -> SQLiteObject {
        let listed = try rows("SELECT type, wr FROM pragma_table_list WHERE schema = 'main' AND name = ?1", [.text(name)])
        guard let first = listed.first, let type = first[0].asText, ["table", "view", "virtual"].contains(type) else {
            let names = (try? objectList().map(\.name)) ?? []
            throw .notFound("no table or view '\(name)' in \(path)\(Suggest.nearest(name, names))")
        }
        let kind: ObjectKind = type == "view" ? .view : type == "virtual" ? .virtualTable : .table
        let withoutRowid = first[1].asInt == 1

        var columns: [Column] = []
        for r in try rows("SELECT name, type, \"notnull\", dflt_value, pk, hidden FROM pragma_table_xinfo(?1) ORDER BY cid", [.text(name)]) {
            let hidden = r[5].asInt ?? 0
            columns.append(Column(name: r[0].asText ?? "", declaredType: r[1].asText ?? "", defaultSQL: r[3].asText,
                                  primaryKey: Int(r[4].asInt ?? 0), notNull: r[2].asInt == 1, hidden: hidden == 1,
                                  generated: hidden == 2 ? .virtual : hidden == 3 ? .stored : nil))
        }

        var foreignKeys: [ForeignKey] = []
        for r in try rows("SELECT id, \"table\", \"from\", \"to\", on_update, on_delete FROM pragma_foreign_key_list(?1) ORDER BY id, seq", [.text(name)]) {
            let id = r[0].asInt ?? 0
            if foreignKeys.count == Int(id) {
                foreignKeys.append(ForeignKey(table: r[1].asText ?? "", from: [], to: [], onUpdate: r[4].asText, onDelete: r[5].asText))
            }
            guard foreignKeys.indices.contains(Int(id)) else { continue }
            foreignKeys[Int(id)].from.append(r[2].asText ?? "")
            foreignKeys[Int(id)].to.append(r[3].asText)
        }

        var indexes: [Index] = []
        for r in try rows("SELECT name, \"unique\", origin, partial FROM pragma_index_list(?1) ORDER BY seq DESC", [.text(name)]) {
            let indexName = r[0].asText ?? ""
            let cols = try rows("SELECT name FROM pragma_index_info(?1) ORDER BY seqno", [.text(indexName)]).map { $0[0].asText }
            indexes.append(Index(name: indexName, columns: cols, unique: r[1].asInt == 1, partial: r[3].asInt == 1,
                                 primaryKey: r[2].asText == "pk"))
        }

        let ddl = try rows("SELECT sql FROM sqlite_schema WHERE name = ?1 AND type IN ('table', 'view')", [.text(name)]).first?[0].asText

        // Rows are addressed by the primary key where there is one (WITHOUT
        // ROWID tables always have one), else by the rowid under a name no
        // column shadows; views and virtual tables cannot be addressed.
        var identity = Identity.none
        var keyColumns: [String] = []
        var keyExpressions: [String] = []
        var keyNotNull: [Bool] = []
        // A rowid table's rowid under a name no column shadows.
        let rowid = kind == .table && !withoutRowid
            ? ["rowid", "_rowid_", "oid"].first { a in !columns.contains { $0.name.lowercased() == a } } : nil
        var totalOrder: [OrderColumn]?
        var noKeysetReason: String?
        if kind == .table {
            let pk = columns.filter { $0.primaryKey > 0 }.sorted { $0.primaryKey < $1.primaryKey }
            if !pk.isEmpty {
                identity = .primaryKey
                keyColumns = pk.map(\.name)
                keyExpressions = pk.map { quoteIdentifier($0.name) }
                // An INTEGER PRIMARY KEY is the rowid and has no index of its
                // own; "INTEGER PRIMARY KEY DESC" and other spellings get one
                // (origin "pk") and are ordinary columns that take NULLs.
                // WITHOUT ROWID keys are NOT NULL.
                let rowidAlias = !withoutRowid && pk.count == 1 && !indexes.contains { $0.primaryKey }
                keyNotNull = pk.map { $0.notNull || withoutRowid || rowidAlias }
            } else if let rowid {
                identity = .rowid
                keyColumns = [rowid]
                keyExpressions = [rowid]
                keyNotNull = [true]
            }
            let key = zip(keyExpressions, keyNotNull).map { OrderColumn(expression: $0, descending: false, nullable: !$1) }
            if identity == .none {
                noKeysetReason = "\(name) has no primary key and every rowid name (rowid, _rowid_, oid) is a column"
            } else if keyNotNull.allSatisfy({ $0 }) {
                totalOrder = key
            } else if let rowid {
                totalOrder = key + [OrderColumn(expression: rowid, descending: false, nullable: false)]
            } else {
                noKeysetReason = "\(name)'s key (\(keyColumns.joined(separator: ", "))) may be NULL, and every rowid name (rowid, _rowid_, oid) is a column"
            }
        } else {
            noKeysetReason = "\(name) is a \(kind.name), which has no key"
        }
        let description = ObjectDescription(name: name, kind: kind, ddl: ddl, columns: columns, foreignKeys: foreignKeys,
                                            indexes: indexes, identity: identity, keyColumns: keyColumns)
        return SQLiteObject(description: description, visibleColumns: columns.filter { !$0.hidden },
                            keyExpressions: keyExpressions, keyNotNull: keyNotNull, totalOrder: totalOrder, noKeysetReason: noKeysetReason)
    }
}

/// "did you mean" hints for names people type.
public enum Suggest {
    public static func nearest(_ name: String, _ candidates: [String]) -> String {
        if candidates.isEmpty { return "" }
        let lower = name.lowercased()
        if let same = candidates.first(where: { $0.lowercased() == lower }) { return " (did you mean '\(same)'?)" }
        let scored = candidates.map { ($0, distance(lower, $0.lowercased())) }.min { $0.1 < $1.1 }
        if let (best, d) = scored, d <= max(2, name.count / 3) { return " (did you mean '\(best)'?)" }
        let shown = candidates.prefix(12).joined(separator: ", ")
        return " (there are: \(shown)\(candidates.count > 12 ? ", …" : ""))"
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
