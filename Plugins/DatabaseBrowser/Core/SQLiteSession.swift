// The built-in SQLite adapter's session: pages, counts, writes and raw
// statements on one connection. Identifiers are quoted, values bound;
// statements are classified by the engine (sqlite3_stmt_readonly), and
// every write runs in BEGIN IMMEDIATE and is rolled back unless exactly
// the expected row changed.
import CSQLite

final class SQLiteSession: DatabaseSession {
    let connection: SQLiteConnection
    let writable: Bool
    private var described: [String: SQLiteObject] = [:]
    private var schemaVersion: Int64 = -1

    init(path: String, writable: Bool, timeoutMilliseconds: Int) throws(DatabaseError) {
        connection = try SQLiteConnection(path: path, writable: writable, timeoutMilliseconds: timeoutMilliseconds)
        self.writable = writable
    }

    func close() {}

    func cancel() { connection.watchdog.cancel() }

    /// Descriptions are cached until the schema changes (any connection's
    /// change bumps schema_version), so a page costs one query, not six.
    private func object(_ name: String) throws(DatabaseError) -> SQLiteObject {
        let version = try connection.withStatement("PRAGMA schema_version", what: "schema check") { (s) throws(DatabaseError) -> Int64 in
            try s.step() ? s.int(0) : 0
        }
        if version != schemaVersion {
            described = [:]
            schemaVersion = version
        }
        if let o = described[name] { return o }
        let o = try connection.object(name)
        described[name] = o
        return o
    }

    func objects() throws(DatabaseError) -> [ObjectInfo] {
        connection.watchdog.begin()
        return try connection.objectList()
    }

    func describe(_ name: String) throws(DatabaseError) -> ObjectDescription {
        connection.watchdog.begin()
        return try object(name).description
    }

    func count(_ name: String, limit: Int) throws(DatabaseError) -> RowCount {
        connection.watchdog.begin()
        let o = try object(name)
        let table = quoteIdentifier(o.description.name)
        // Counting stops after limit + 1 rows: "at least limit" needs no full scan.
        let sql = limit > 0 ? "SELECT count(*) FROM (SELECT 1 FROM \(table) LIMIT ?)" : "SELECT count(*) FROM \(table)"
        let n = try connection.rows(sql, limit > 0 ? [.integer(Int64(limit) + 1)] : []).first?.first?.asInt ?? 0
        if limit > 0 && n > limit { return RowCount(value: limit, exact: false) }
        return RowCount(value: Int(n), exact: true)
    }

    // MARK: pages

    func readPage(_ request: PageRequest) throws(DatabaseError) -> Page {
        guard request.limit >= 1 else { throw .invalid("the page size must be at least 1 (got \(request.limit))") }
        guard request.offset >= 0 else { throw .invalid("the offset must not be negative (got \(request.offset))") }
        connection.watchdog.begin()
        let o = try object(request.object)
        let d = o.description
        let visible = o.visibleColumns

        // The order asked for, then the key, so the order is total and a
        // cursor names exactly one position.
        var order: [OrderColumn] = []
        for term in request.order {
            if let c = d.columns.first(where: { $0.name == term.column }) ?? d.columns.first(where: { $0.name.lowercased() == term.column.lowercased() }) {
                let isKey = d.keyColumns.count == 1 && d.keyColumns[0] == c.name && o.keyNotNull[0]
                order.append(OrderColumn(expression: quoteIdentifier(c.name), descending: term.descending, nullable: !(c.notNull || isKey)))
            } else if let k = d.keyColumns.firstIndex(where: { $0.lowercased() == term.column.lowercased() }), d.identity == .rowid {
                order.append(OrderColumn(expression: o.keyExpressions[k], descending: term.descending, nullable: false))
            } else {
                throw .invalid("cannot order \(d.name) by '\(term.column)': no such column\(Suggest.nearest(term.column, d.columns.map(\.name) + d.keyColumns))")
            }
        }
        // Then the key, and the rowid where the key may be NULL, make the
        // order total, so a cursor names exactly one position. Without one
        // (see noKeysetReason) the key still steadies the order for offsets.
        let keyset = o.totalOrder != nil
        let tail = o.totalOrder ?? zip(o.keyExpressions, o.keyNotNull).map { OrderColumn(expression: $0, descending: false, nullable: !$1) }
        for t in tail where !order.contains(where: { $0.expression == t.expression }) { order.append(t) }

        // The visible columns, then any order or key expression that is not
        // one of them (a rowid): each value is read once.
        var selected = visible.map { quoteIdentifier($0.name) }
        func column(_ expression: String) -> Int {
            if let i = selected.firstIndex(of: expression) { return i }
            selected.append(expression)
            return selected.count - 1
        }
        let orderColumns = order.map { column($0.expression) }
        let keyColumns = o.keyExpressions.map(column)
        var sql = "SELECT " + (selected.isEmpty ? "*" : selected.joined(separator: ", ")) + " FROM \(quoteIdentifier(d.name))"
        var parameters: [DBValue] = []
        if let cursor = request.cursor {
            guard keyset else { throw .invalid("\(o.noKeysetReason ?? d.name): it pages by --offset only") }
            let after = try KeysetCursor.decode(cursor, object: d.name, order: order)
            let p = KeysetCursor.predicate(order: order, after: after)
            sql += " WHERE " + p.sql
            parameters = p.parameters
        }
        if !order.isEmpty {
            sql += " ORDER BY " + order.map { $0.expression + ($0.descending ? " DESC" : "") }.joined(separator: ", ")
        }
        // One row more than asked says whether another page follows.
        sql += " LIMIT ?"
        parameters.append(.integer(Int64(request.limit) + 1))
        if request.cursor == nil && request.offset > 0 {
            sql += " OFFSET ?"
            parameters.append(.integer(Int64(request.offset)))
        }

        let shown = visible.count
        return try connection.withStatement(sql, what: "page query") { (s) throws(DatabaseError) -> Page in
            try s.bind(parameters)
            var rows: [[DBValue]] = []
            var keys: [[DBValue]] = []
            var last: [DBValue] = []
            var more = false
            rows.reserveCapacity(request.limit)
            if !keyColumns.isEmpty { keys.reserveCapacity(request.limit) }
            while try s.step("reading \(d.name)") {
                if rows.count == request.limit { more = true; break }
                var row: [DBValue] = []
                row.reserveCapacity(shown)
                for i in 0..<shown { row.append(s.value(Int32(i))) }
                if !keyColumns.isEmpty {
                    var key: [DBValue] = []
                    key.reserveCapacity(keyColumns.count)
                    for i in keyColumns { key.append(i < shown ? row[i] : s.value(Int32(i))) }
                    keys.append(key)
                }
                // The cursor needs the values of the page's last row only.
                if keyset && rows.count == request.limit - 1 {
                    last = orderColumns.map { $0 < shown ? row[$0] : s.value(Int32($0)) }
                }
                rows.append(row)
            }
            let next = keyset && more ? KeysetCursor.encode(object: d.name, order: order, values: last) : nil
            return Page(columns: visible.map(\.name), rows: rows, keyColumns: d.keyColumns, keys: keys,
                        paging: request.cursor != nil ? .keyset : .offset, nextCursor: next, more: more,
                        note: keyset ? nil : "no cursor: \(o.noKeysetReason ?? d.name), so it pages by --offset only")
        }
    }

    // MARK: writes

    private func requireWritable(_ what: String) throws(DatabaseError) {
        guard writable else { throw .unsupported("\(what): the session is read-only; writes need a session opened for writing (--write)") }
    }

    /// Runs `body` in BEGIN IMMEDIATE; commits only when it returns normally.
    private func transaction<T>(_ body: () throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        try connection.run("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try connection.run("COMMIT")
            return result
        } catch {
            _ = try? connection.run("ROLLBACK")
            throw error
        }
    }

    private func writableColumns(_ o: SQLiteObject, _ values: [(column: String, value: DBValue)], _ what: String) throws(DatabaseError) -> [String] {
        var names: [String] = []
        for (column, _) in values {
            guard let c = o.description.columns.first(where: { $0.name == column }) ?? o.description.columns.first(where: { $0.name.lowercased() == column.lowercased() }) else {
                throw .invalid("\(what): \(o.description.name) has no column '\(column)'\(Suggest.nearest(column, o.description.columns.map(\.name)))")
            }
            if c.generated != nil { throw .invalid("\(what): \(o.description.name).\(c.name) is a generated column and cannot be written") }
            if names.contains(c.name) { throw .invalid("\(what): column '\(c.name)' is given twice") }
            names.append(c.name)
        }
        return names
    }

    private func keyCondition(_ o: SQLiteObject, _ key: [DBValue], _ what: String) throws(DatabaseError) -> String {
        let d = o.description
        guard d.identity != .none else {
            throw .unsupported("\(what): rows of \(d.name) (\(d.kind.name)) have no key; use db.query with --write")
        }
        guard key.count == d.keyColumns.count else {
            throw .invalid("\(what): \(d.name) rows are identified by (\(d.keyColumns.joined(separator: ", "))): give \(d.keyColumns.count) key value\(d.keyColumns.count == 1 ? "" : "s"), not \(key.count)")
        }
        return o.keyExpressions.map { "\($0) IS ?" }.joined(separator: " AND ")
    }

    func insert(_ name: String, values: [(column: String, value: DBValue)]) throws(DatabaseError) -> Page {
        try requireWritable("insert into \(name)")
        connection.watchdog.begin()
        let o = try object(name)
        guard o.description.kind == .table else { throw .unsupported("insert: \(name) is a \(o.description.kind.name); use db.query with --write") }
        let columns = try writableColumns(o, values, "insert into \(name)")
        let returning = (o.keyExpressions + o.visibleColumns.map { quoteIdentifier($0.name) }).joined(separator: ", ")
        let sql = columns.isEmpty
            ? "INSERT INTO \(quoteIdentifier(name)) DEFAULT VALUES RETURNING \(returning)"
            : "INSERT INTO \(quoteIdentifier(name)) (\(columns.map(quoteIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", "))) RETURNING \(returning)"
        return try transaction { () throws(DatabaseError) -> Page in
            let s = try connection.prepare(sql, what: "insert")
            try s.bind(values.map(\.value))
            var rows: [[DBValue]] = [], keys: [[DBValue]] = []
            let k = o.keyExpressions.count
            while try s.step("insert into \(name)") {
                keys.append((0..<k).map { s.value(Int32($0)) })
                rows.append(s.row(from: k))
            }
            let changed = Int(sqlite3_changes64(connection.db))
            guard changed == 1 else { throw .failed("insert into \(name): \(changed) rows changed instead of 1; rolled back") }
            return Page(columns: o.visibleColumns.map(\.name), rows: rows, keyColumns: o.description.keyColumns, keys: keys, changes: 1, wrote: true)
        }
    }

    func update(_ name: String, key: [DBValue], values: [(column: String, value: DBValue)]) throws(DatabaseError) {
        try requireWritable("update \(name)")
        connection.watchdog.begin()
        let o = try object(name)
        let condition = try keyCondition(o, key, "update \(name)")
        let columns = try writableColumns(o, values, "update \(name)")
        guard !columns.isEmpty else { throw .invalid("update \(name): give at least one column=value") }
        let sql = "UPDATE \(quoteIdentifier(name)) SET \(columns.map { quoteIdentifier($0) + " = ?" }.joined(separator: ", ")) WHERE \(condition)"
        try transaction { () throws(DatabaseError) in
            let changed = try connection.run(sql, values.map(\.value) + key)
            try expectOne(changed, o, key)
        }
    }

    func delete(_ name: String, key: [DBValue]) throws(DatabaseError) {
        try requireWritable("delete from \(name)")
        connection.watchdog.begin()
        let o = try object(name)
        let condition = try keyCondition(o, key, "delete from \(name)")
        try transaction { () throws(DatabaseError) in
            let changed = try connection.run("DELETE FROM \(quoteIdentifier(name)) WHERE \(condition)", key)
            try expectOne(changed, o, key)
        }
    }

    private func expectOne(_ changed: Int, _ o: SQLiteObject, _ key: [DBValue]) throws(DatabaseError) {
        let shown = zip(o.description.keyColumns, key).map { "\($0)=\(Literal.text($1))" }.joined(separator: ", ")
        if changed == 0 { throw .notFound("no row of \(o.description.name) has key (\(shown)); nothing changed") }
        if changed != 1 { throw .failed("\(changed) rows of \(o.description.name) matched key (\(shown)); rolled back") }
    }

    // MARK: statements

    func execute(_ statement: Statement) throws(DatabaseError) -> Page {
        connection.watchdog.begin()
        let s = try connection.prepare(statement.sql, what: "SQL")
        let readOnly = s.isReadOnly
        if !writable && !readOnly {
            throw .unsupported("the statement would write, and the session is read-only; run it with --write")
        }
        guard s.parameterCount == statement.parameters.count else {
            throw .invalid("the statement has \(s.parameterCount) parameter\(s.parameterCount == 1 ? "" : "s"), \(statement.parameters.count) given")
        }
        try s.bind(statement.parameters)
        let columns = s.columnNames
        let limit = statement.rowLimit
        // A write outside a transaction gets one, so a failure part-way
        // (a constraint, a timeout) leaves nothing behind.
        let wrap = !readOnly && connection.isAutocommit
        if wrap { try connection.run("BEGIN IMMEDIATE") }
        var rows: [[DBValue]] = []
        var truncated = false
        do {
            while try s.step("SQL") {
                if limit > 0 && rows.count >= limit {
                    truncated = true
                    if readOnly { break } // a write must run to its end
                    continue
                }
                rows.append(s.row())
            }
            if wrap { try connection.run("COMMIT") }
        } catch {
            if wrap { _ = try? connection.run("ROLLBACK") }
            throw error
        }
        let changes = readOnly ? 0 : Int(sqlite3_changes64(connection.db))
        return Page(columns: columns, rows: rows, changes: changes, truncated: truncated, wrote: !readOnly)
    }
}
