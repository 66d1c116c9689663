// The db.* commands. Each opens a session for the one call (read-only
// unless --write is given), runs it and closes it; results are JSON
// documents the shell renders as tables, or prints with --json / --csv.
import DatabaseKit
import PincerPluginKit

struct DatabaseCommands {
    let registry: DatabaseRegistry
    let places: SQLitePlaces
    let host: PluginHost

    static let defaultTimeout: Int64 = 5000

    /// Opens `name`, runs `body` on the session and closes it.
    private func withSession<T>(_ name: String, write: Bool = false, timeout: Int64,
                                _ body: (any DatabaseSession) throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        guard timeout >= 0 else { throw .invalid("--timeout must be 0 (no limit) or a number of milliseconds, not \(timeout)") }
        let (_, session) = try registry.open(name, write: write, timeoutMilliseconds: Int(clamping: timeout))
        defer { session.close() }
        return try body(session)
    }

    private static func rest(_ args: Arguments, from index: Int) -> [String] {
        index < args.count ? (index..<args.count).map { args[$0].string } : []
    }

    func register() throws {
        let timeoutHelp = "--timeout bounds the call in milliseconds (default 5000; 0 for none)."

        try host.addCommand("list() -> string", summary: "List the databases every adapter offers", details: """
            SQLite files come from the folders and files added with db.add-path (and those an app offers);
            other adapters are plugins. Name a database by its name, by adapter:name when two adapters
            share a name, or give a path to any SQLite file.
            """, jsonResult: true) { _ in
            let listing = registry.listing()
            for f in listing.failures { host.log(.warning, "adapter \(f.adapter) could not list its databases: \(f.message)") }
            return .string(JSON.array(listing.databases.map { d in
                .object([("name", .string(d.info.name)), ("adapter", .string(d.adapter.id)),
                         ("location", d.info.location.map(JSON.string) ?? .null), ("detail", d.info.detail.map(JSON.string) ?? .null),
                         ("capabilities", .string(d.info.capabilities.names.joined(separator: ",")))])
            }).serialized())
        }

        try host.addCommand("tables(db: string, timeout: i64 = 5000) -> string", summary: "List a database's tables, views and virtual tables",
                            details: timeoutHelp, jsonResult: true) { args in
            let objects = try withSession(args[0].string, timeout: args[1].i64) { s throws(DatabaseError) in try s.objects() }
            return .string(JSON.array(objects.map { .object([("name", .string($0.name)), ("kind", .string($0.kind.name))]) }).serialized())
        }

        try host.addCommand("schema(db: string, table: string, timeout: i64 = 5000) -> string",
                            summary: "Columns, keys, foreign keys, indexes and DDL of a table or view", details: timeoutHelp, jsonResult: true) { args in
            let d = try withSession(args[0].string, timeout: args[2].i64) { s throws(DatabaseError) in try s.describe(args[1].string) }
            return .string(DatabaseCommands.schemaJSON(d).serialized())
        }

        try host.addCommand("rows(db: string, table: string, order: string = \"\", desc: bool = false, limit: i64 = 50, after: string = \"\", offset: i64 = 0, timeout: i64 = 5000) -> string",
                            summary: "A page of a table's rows, by keyset cursor or offset", details: """
            --order takes column names separated by commas, each optionally followed by :asc or :desc
            (--desc makes descending the default). The key, and the rowid where the key may be NULL, are
            added to make the order total. The result's next_cursor, passed back as --after, continues where
            the page ended and costs the same at any depth; --offset skips rows instead (cost grows with the
            offset). Views, and tables without a total order, page by --offset only (paging_note says why).
            \(timeoutHelp)
            """, jsonResult: true) { args in
            let order = try DatabaseCommands.order(args[2].string, descending: args[3].bool)
            guard args[4].i64 >= 1 else { throw DatabaseError.invalid("--limit must be at least 1, not \(args[4].i64)") }
            guard args[6].i64 >= 0 else { throw DatabaseError.invalid("--offset must not be negative, not \(args[6].i64)") }
            let after = args[5].string
            if !after.isEmpty && args[6].i64 > 0 { throw DatabaseError.invalid("give --after or --offset, not both") }
            var request = PageRequest(object: args[1].string, order: order, limit: Int(clamping: args[4].i64),
                                      cursor: after.isEmpty ? nil : after, offset: Int(clamping: args[6].i64))
            let page = try withSession(args[0].string, timeout: args[7].i64) { s throws(DatabaseError) in
                // --desc alone: the natural order (the key), reversed.
                if order.isEmpty && args[3].bool {
                    request.order = try s.describe(request.object).keyColumns.map { OrderTerm($0, descending: true) }
                }
                return try s.readPage(request)
            }
            return .string(page.json(offset: request.offset).serialized())
        }

        try host.addCommand("count(db: string, table: string, limit: i64 = 0, timeout: i64 = 5000) -> string",
                            summary: "Count a table's rows, or stop at --limit and say \"at least\"", details: timeoutHelp, jsonResult: true) { args in
            guard args[2].i64 >= 0 else { throw DatabaseError.invalid("--limit must be 0 (count all) or positive, not \(args[2].i64)") }
            let n = try withSession(args[0].string, timeout: args[3].i64) { s throws(DatabaseError) in
                try s.count(args[1].string, limit: Int(clamping: args[2].i64))
            }
            return .string(JSON.object([("table", .string(args[1].string)), ("count", .int(Int64(n.value))), ("exact", .bool(n.exact))]).serialized())
        }

        let literalHelp = """
            Values are written as in sqlite3's .parameter set: NULL, 42 and 4.2 are themselves, 'quoted' is text
            ('' for a quote), x'00ff' is a blob, and any other word is text as typed.
            """
        try host.addCommand("insert(db: string, table: string, write: bool = false, timeout: i64 = 5000, values: string...) -> string",
                            summary: "Insert one row: column=value ... (needs --write)", details: """
            The session is read-only unless --write is given. The row is inserted in one transaction and
            shown as stored, with its key and generated values. \(literalHelp)
            """, changesState: true, jsonResult: true) { args in
            let values = try Literal.assignments(DatabaseCommands.rest(args, from: 4))
            let page = try withSession(args[0].string, write: args[2].bool, timeout: args[3].i64) { s throws(DatabaseError) in
                try s.insert(args[1].string, values: values)
            }
            return .string(page.json(extra: [("inserted", .int(1))]).serialized())
        }

        try host.addCommand("update(db: string, table: string, key: string, write: bool = false, timeout: i64 = 5000, values: string...) -> string",
                            summary: "Update the row with this key: column=value ... (needs --write)", details: """
            The key is the row's key values in key order, separated by commas ("1,3402"), or named
            ("PlaylistId=1,TrackId=3402"); db.schema shows the key. Exactly one row must match, or nothing
            changes. \(literalHelp)
            """, changesState: true, jsonResult: true) { args in
            let values = try Literal.assignments(DatabaseCommands.rest(args, from: 5))
            let key = try withSession(args[0].string, write: args[3].bool, timeout: args[4].i64) { s throws(DatabaseError) -> [(String, DBValue)] in
                let columns = try s.describe(args[1].string).keyColumns
                let key = try Literal.key(args[2].string, columns: columns)
                try s.update(args[1].string, key: key, values: values)
                return Array(zip(columns, key))
            }
            return .string(JSON.object([("table", .string(args[1].string)), ("key", .object(key.map { ($0.0, $0.1.json) })),
                                        ("updated", .int(1))]).serialized())
        }

        try host.addCommand("delete(db: string, table: string, key: string, write: bool = false, timeout: i64 = 5000) -> string",
                            summary: "Delete the row with this key (needs --write)", details: """
            The key is as for db.update. Exactly one row must match, or nothing changes.
            """, changesState: true, jsonResult: true) { args in
            let key = try withSession(args[0].string, write: args[3].bool, timeout: args[4].i64) { s throws(DatabaseError) -> [(String, DBValue)] in
                let columns = try s.describe(args[1].string).keyColumns
                let key = try Literal.key(args[2].string, columns: columns)
                try s.delete(args[1].string, key: key)
                return Array(zip(columns, key))
            }
            return .string(JSON.object([("table", .string(args[1].string)), ("key", .object(key.map { ($0.0, $0.1.json) })),
                                        ("deleted", .int(1))]).serialized())
        }

        try host.addCommand("query(db: string, sql: string, write: bool = false, limit: i64 = 1000, timeout: i64 = 5000, params: string...) -> string",
                            summary: "Run one SQL statement with bound parameters", details: """
            Parameters bind to ?1, ?2, ... in order. \(literalHelp) The session is read-only unless --write
            is given: a statement that would write is refused before it runs, as are ATTACH and pragmas that
            set values. A write runs in a transaction, so a failure or a timeout changes nothing. At most
            --limit rows are kept (0 for all). \(timeoutHelp)
            """, changesState: true, jsonResult: true) { args in
            let params = DatabaseCommands.rest(args, from: 5).map(Literal.parse)
            guard args[3].i64 >= 0 else { throw DatabaseError.invalid("--limit must be 0 (all rows) or positive, not \(args[3].i64)") }
            let statement = Statement(sql: args[1].string, parameters: params, rowLimit: Int(clamping: args[3].i64))
            let page = try withSession(args[0].string, write: args[2].bool, timeout: args[4].i64) { s throws(DatabaseError) in
                try s.execute(statement)
            }
            var extra: [(String, JSON)] = []
            if page.wrote { extra.append(("changes", .int(Int64(page.changes)))) }
            if page.truncated { extra.append(("truncated", .string("more than \(args[3].i64) rows; the rest were not kept"))) }
            return .string(page.json().appending(extra).serialized())
        }

        try host.addCommand("add-path(path: string) -> string", summary: "Offer a SQLite file, or every SQLite file in a folder, to db.list",
                            details: "Saved in the plugin's settings. Files are recognised by their header, with the extensions .sqlite, .sqlite3 and .db.",
                            changesState: true) { args in
            let path = args[0].string
            try SQLitePath.check(path)
            var added = false
            try places.change { saved in
                guard !saved.contains(path) else { return nil }
                added = true
                return saved + [path]
            }
            return .string(added ? "added \(path)" : "\(path) is already offered")
        }

        try host.addCommand("remove-path(path: string)", summary: "Stop offering a file or folder added with db.add-path",
                            changesState: true) { args in
            try places.change { saved in
                guard let i = saved.firstIndex(of: args[0].string) else {
                    throw CommandError("\(args[0].string) was not added (added: \(saved.isEmpty ? "none" : saved.joined(separator: ", ")))", status: PINCER_NOT_FOUND)
                }
                return saved.enumerated().filter { $0.offset != i }.map(\.element)
            }
            return .void
        }

        try host.addCommand("paths() -> string", summary: "The files and folders offered to the SQLite adapter", jsonResult: true) { _ in
            let saved = places.saved
            return .string(JSON.array(places.all.enumerated().map { i, p in
                .object([("path", .string(p)), ("saved", .bool(i < saved.count))])
            }).serialized())
        }

        try host.addCommand("adapters() -> string", summary: "The adapters the browser knows and what they can do", jsonResult: true) { _ in
            .string(JSON.array(registry.all.map { a in
                .object([("id", .string(a.id)), ("name", .string(a.name)), ("capabilities", .string(a.capabilities.names.joined(separator: ",")))])
            }).serialized())
        }
    }

    /// "--order a,b:desc" with --desc as the default direction.
    static func order(_ text: String, descending: Bool) throws(DatabaseError) -> [OrderTerm] {
        guard !text.isEmpty else { return [] }
        var terms: [OrderTerm] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            var name = String(part)
            var desc = descending
            if let colon = name.lastIndex(of: ":") {
                switch name[name.index(after: colon)...].lowercased() {
                case "asc": desc = false
                case "desc": desc = true
                default: throw .invalid("--order: '\(part)' should be column, column:asc or column:desc")
                }
                name = String(name[..<colon])
            }
            guard !name.isEmpty else { throw .invalid("--order: an empty column name in '\(text)'") }
            terms.append(OrderTerm(name, descending: desc))
        }
        return terms
    }

    static func schemaJSON(_ d: ObjectDescription) -> JSON {
        var fields: [(String, JSON)] = [
            ("name", .string(d.name)), ("kind", .string(d.kind.name)),
            ("rows_identified_by", .string(d.identity.name)),
            ("key", .array(d.keyColumns.map(JSON.string))),
        ]
        fields.append(("columns", .array(d.columns.map { c in
            var f: [(String, JSON)] = [("name", .string(c.name)), ("type", .string(c.declaredType)), ("not_null", .bool(c.notNull)),
                                       ("default", c.defaultSQL.map(JSON.string) ?? .null), ("pk", .int(Int64(c.primaryKey)))]
            f.append(("generated", c.generated.map { .string($0 == .virtual ? "virtual" : "stored") } ?? .null))
            f.append(("hidden", .bool(c.hidden)))
            return .object(f)
        })))
        fields.append(("foreign_keys", .array(d.foreignKeys.map { k in
            .object([("columns", .array(k.from.map(JSON.string))), ("table", .string(k.table)),
                     ("to", .array(k.to.map { $0.map(JSON.string) ?? .null })),
                     ("on_update", k.onUpdate.map(JSON.string) ?? .null), ("on_delete", k.onDelete.map(JSON.string) ?? .null)])
        })))
        fields.append(("indexes", .array(d.indexes.map { i in
            .object([("name", .string(i.name)), ("columns", .array(i.columns.map { $0.map(JSON.string) ?? .null })),
                     ("unique", .bool(i.unique)), ("partial", .bool(i.partial)), ("primary_key", .bool(i.primaryKey))])
        })))
        fields.append(("ddl", d.ddl.map(JSON.string) ?? .null))
        return .object(fields)
    }
}

extension JSON {
    /// An object with more fields at its end.
    func appending(_ more: [(String, JSON)]) -> JSON {
        guard case .object(let fields) = self else { return self }
        return .object(fields + more)
    }
}
