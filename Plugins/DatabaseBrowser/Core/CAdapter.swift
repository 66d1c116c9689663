// An adapter written in C (or anything that speaks the C ABI), registered
// through "pincer.database/1": the table from SDK/include/pincer/database.h
// seen as a DatabaseAdapter. The table is checked once at registration;
// every result is copied out and handed back to the adapter's release.
import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

public final class CAdapter: DatabaseAdapter, @unchecked Sendable {
    let table: UnsafePointer<pincer_db_adapter_t>
    public let id: String
    public let name: String
    public let capabilities: Capabilities

    /// Checks the table: its size, its id and every slot its capabilities promise.
    public init(_ table: UnsafePointer<pincer_db_adapter_t>) throws(DatabaseError) {
        let t = table.pointee
        let needed = MemoryLayout<pincer_db_adapter_t>.offset(of: \.last_error)! + MemoryLayout<UnsafeRawPointer>.size
        guard Int(t.struct_size) >= needed else {
            throw .invalid("the adapter table's struct_size is \(t.struct_size); version 1.0 of pincer_db_adapter_t needs \(needed)")
        }
        guard let idPointer = t.id else { throw .invalid("the adapter table has no id") }
        let id = String(cString: idPointer)
        guard !id.isEmpty, id.utf8.count <= 32, id.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 || $0 == 95 }) else {
            throw .invalid("the adapter id '\(id)' must be 1 to 32 characters of a-z, 0-9, '-' and '_'")
        }
        var missing: [String] = []
        if t.list_databases == nil { missing.append("list_databases") }
        if t.open == nil { missing.append("open") }
        if t.close == nil { missing.append("close") }
        if t.list_objects == nil { missing.append("list_objects") }
        if t.describe == nil { missing.append("describe") }
        if t.read_page == nil { missing.append("read_page") }
        if t.count == nil { missing.append("count") }
        if t.release == nil { missing.append("release") }
        if t.last_error == nil { missing.append("last_error") }
        let caps = Capabilities(rawValue: t.capabilities)
        if caps.contains(.write) {
            if t.insert == nil { missing.append("insert (PINCER_DB_CAN_WRITE is set)") }
            if t.update == nil { missing.append("update (PINCER_DB_CAN_WRITE is set)") }
            if t.remove == nil { missing.append("remove (PINCER_DB_CAN_WRITE is set)") }
        }
        if caps.contains(.query) && t.execute == nil { missing.append("execute (PINCER_DB_CAN_QUERY is set)") }
        if caps.contains(.cancel) && t.cancel == nil { missing.append("cancel (PINCER_DB_CAN_CANCEL is set)") }
        guard missing.isEmpty else { throw .invalid("the adapter '\(id)' leaves these slots NULL: \(missing.joined(separator: ", "))") }
        self.table = table
        self.id = id
        self.name = t.name.map { String(cString: $0) } ?? id
        self.capabilities = caps
    }

    var context: UnsafeMutableRawPointer? { table.pointee.context }

    func failure(_ status: pincer_status_t, _ doing: String) -> DatabaseError {
        let message = table.pointee.last_error(context).map { String(cString: $0) } ?? ""
        return DatabaseError(status, message.isEmpty ? "\(id) adapter: \(doing) failed (status \(status))" : message)
    }

    public func databases() throws(DatabaseError) -> [DatabaseInfo] {
        var out: UnsafeMutablePointer<pincer_db_database_list_t>?
        let status = table.pointee.list_databases(context, &out)
        guard status == PINCER_OK else { throw failure(status, "list_databases") }
        guard let list = out else { return [] }
        defer { table.pointee.release(context, list) }
        return try CResults.items(list.pointee.items, count: list.pointee.count, size: list.pointee.item_size, what: "database list") {
            (d: pincer_db_database_info_t) in
            DatabaseInfo(name: CResults.string(d.name), location: d.location.map { String(cString: $0) },
                         detail: d.detail.map { String(cString: $0) }, capabilities: Capabilities(rawValue: d.capabilities))
        }
    }

    public func open(_ database: String, write: Bool, timeoutMilliseconds: Int) throws(DatabaseError) -> DatabaseSession {
        var session: OpaquePointer?
        let status = table.pointee.open(context, database, write ? PINCER_DB_OPEN_WRITE : 0, UInt32(clamping: timeoutMilliseconds), &session)
        guard status == PINCER_OK else { throw failure(status, "open") }
        guard let session else { throw .failed("\(id) adapter: open returned PINCER_OK without a session") }
        return CSession(adapter: self, session: session)
    }
}

/// A session of a C adapter.
final class CSession: DatabaseSession {
    let adapter: CAdapter
    private var session: OpaquePointer?

    init(adapter: CAdapter, session: OpaquePointer) {
        self.adapter = adapter
        self.session = session
    }

    deinit { close() }

    private var t: pincer_db_adapter_t { adapter.table.pointee }
    private var context: UnsafeMutableRawPointer? { adapter.context }

    private func open() throws(DatabaseError) -> OpaquePointer {
        guard let session else { throw .failed("the session is closed") }
        return session
    }

    func close() {
        if let s = session { t.close(context, s) }
        session = nil
    }

    func cancel() {
        if let s = session, let cancel = t.cancel { cancel(context, s) }
    }

    /// Calls an adapter function that hands back a result, copies it with
    /// `convert` and releases it, whatever happens.
    private func result<R, T>(_ doing: String, _ call: (UnsafeMutablePointer<UnsafeMutablePointer<R>?>) -> pincer_status_t,
                              _ convert: (R) throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        var out: UnsafeMutablePointer<R>?
        let status = call(&out)
        defer { if let out { t.release(context, out) } }
        guard status == PINCER_OK else { throw adapter.failure(status, doing) }
        guard let out else { throw .failed("\(adapter.id) adapter: \(doing) returned PINCER_OK without a result") }
        return try convert(out.pointee)
    }

    func objects() throws(DatabaseError) -> [ObjectInfo] {
        let s = try open()
        return try result("list_objects", { t.list_objects(context, s, $0) }) { (list: pincer_db_object_list_t) throws(DatabaseError) in
            try CResults.items(list.items, count: list.count, size: list.item_size, what: "object list") { (o: pincer_db_object_info_t) in
                ObjectInfo(name: CResults.string(o.name), kind: ObjectKind(rawValue: o.kind) ?? .table)
            }
        }
    }

    func describe(_ object: String) throws(DatabaseError) -> ObjectDescription {
        let s = try open()
        return try result("describe", { out in object.withCString { t.describe(context, s, $0, out) } }) { (d: pincer_db_description_t) throws(DatabaseError) in
            let columns = try CResults.items(d.columns, count: d.column_count, size: d.column_size, what: "column list") { (c: pincer_db_column_t) in
                Column(name: CResults.string(c.name), declaredType: CResults.string(c.declared_type), defaultSQL: c.default_sql.map { String(cString: $0) },
                       primaryKey: Int(c.primary_key), notNull: c.flags & PINCER_DB_COLUMN_NOT_NULL != 0,
                       hidden: c.flags & PINCER_DB_COLUMN_HIDDEN != 0,
                       generated: c.flags & PINCER_DB_COLUMN_GENERATED_VIRTUAL != 0 ? .virtual
                           : c.flags & PINCER_DB_COLUMN_GENERATED_STORED != 0 ? .stored : nil)
            }
            let foreignKeys = try CResults.items(d.foreign_keys, count: d.foreign_key_count, size: d.foreign_key_size, what: "foreign key list") {
                (f: pincer_db_foreign_key_t) in
                ForeignKey(table: CResults.string(f.table), from: CResults.strings(f.from, Int(f.column_count)).map { $0 ?? "" },
                           to: CResults.strings(f.to, Int(f.column_count)),
                           onUpdate: f.on_update.map { String(cString: $0) }, onDelete: f.on_delete.map { String(cString: $0) })
            }
            let indexes = try CResults.items(d.indexes, count: d.index_count, size: d.index_size, what: "index list") { (i: pincer_db_index_t) in
                Index(name: CResults.string(i.name), columns: CResults.strings(i.columns, Int(i.column_count)),
                      unique: i.flags & PINCER_DB_INDEX_UNIQUE != 0, partial: i.flags & PINCER_DB_INDEX_PARTIAL != 0,
                      primaryKey: i.flags & PINCER_DB_INDEX_PRIMARY_KEY != 0)
            }
            return ObjectDescription(name: CResults.string(d.name), kind: ObjectKind(rawValue: d.kind) ?? .table,
                                     ddl: d.ddl.map { String(cString: $0) }, columns: columns, foreignKeys: foreignKeys, indexes: indexes,
                                     identity: Identity(rawValue: d.identity) ?? .none,
                                     keyColumns: CResults.strings(d.key_columns, Int(d.key_count)).map { $0 ?? "" })
        }
    }

    func readPage(_ request: PageRequest) throws(DatabaseError) -> Page {
        let s = try open()
        guard request.limit >= 1 else { throw .invalid("the page size must be at least 1 (got \(request.limit))") }
        let columns = CStrings(request.order.map(\.column))
        defer { columns.free() }
        let terms = request.order.enumerated().map { i, o in
            pincer_db_order_t(column: columns.pointers[i], descending: o.descending ? 1 : 0, reserved: 0)
        }
        // Copies rather than withCString: the closures of the standard
        // library's pointer helpers would erase the typed error.
        let strings = CStrings([request.object] + (request.cursor.map { [$0] } ?? []))
        defer { strings.free() }
        var r = pincer_db_page_request_t()
        r.struct_size = UInt32(MemoryLayout<pincer_db_page_request_t>.size)
        r.order_count = UInt32(terms.count)
        r.object = strings.pointers[0]
        r.limit = UInt64(request.limit)
        r.cursor = request.cursor == nil ? nil : strings.pointers[1]
        r.offset = UInt64(max(0, request.offset))
        let order = CArray(terms)
        defer { order.free() }
        r.order = order.base
        return try result("read_page", { t.read_page(context, s, &r, $0) }, CResults.page)
    }

    func count(_ object: String, limit: Int) throws(DatabaseError) -> RowCount {
        let s = try open()
        var n: UInt64 = 0
        var exact = false
        let status = object.withCString { t.count(context, s, $0, UInt64(max(0, limit)), &n, &exact) }
        guard status == PINCER_OK else { throw adapter.failure(status, "count") }
        return RowCount(value: Int(clamping: n), exact: exact)
    }

    private func writable(_ what: String) throws(DatabaseError) {
        guard adapter.capabilities.contains(.write) else { throw .unsupported("\(what): the \(adapter.name) adapter cannot write") }
    }

    func insert(_ object: String, values: [(column: String, value: DBValue)]) throws(DatabaseError) -> Page {
        try writable("insert")
        let s = try open()
        let names = CStrings(values.map(\.column))
        defer { names.free() }
        let cValues = CValues(values.map(\.value))
        defer { cValues.free() }
        return try result("insert", { out in
            object.withCString { t.insert!(context, s, $0, names.base, cValues.base, UInt32(values.count), out) }
        }, CResults.page)
    }

    func update(_ object: String, key: [DBValue], values: [(column: String, value: DBValue)]) throws(DatabaseError) {
        try writable("update")
        let s = try open()
        let names = CStrings(values.map(\.column))
        defer { names.free() }
        let cKey = CValues(key), cValues = CValues(values.map(\.value))
        defer { cKey.free(); cValues.free() }
        let status = object.withCString {
            t.update!(context, s, $0, cKey.base, UInt32(key.count), names.base, cValues.base, UInt32(values.count))
        }
        guard status == PINCER_OK else { throw adapter.failure(status, "update") }
    }

    func delete(_ object: String, key: [DBValue]) throws(DatabaseError) {
        try writable("delete")
        let s = try open()
        let cKey = CValues(key)
        defer { cKey.free() }
        let status = object.withCString { t.remove!(context, s, $0, cKey.base, UInt32(key.count)) }
        guard status == PINCER_OK else { throw adapter.failure(status, "remove") }
    }

    func execute(_ statement: Statement) throws(DatabaseError) -> Page {
        guard adapter.capabilities.contains(.query), let execute = t.execute else {
            throw .unsupported("the \(adapter.name) adapter does not run statements")
        }
        let s = try open()
        let params = CValues(statement.parameters)
        defer { params.free() }
        let sql = CStrings([statement.sql])
        defer { sql.free() }
        var st = pincer_db_statement_t()
        st.struct_size = UInt32(MemoryLayout<pincer_db_statement_t>.size)
        st.param_count = UInt32(statement.parameters.count)
        st.sql = sql.pointers[0]
        st.params = params.base
        st.row_limit = UInt64(max(0, statement.rowLimit))
        return try result("execute", { execute(context, s, &st, $0) }, CResults.page)
    }
}

/// Reading adapter results: strided arrays, string arrays, tagged values.
enum CResults {
    static func string(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }

    static func strings(_ p: UnsafePointer<UnsafePointer<CChar>?>?, _ n: Int) -> [String?] {
        guard let p else { return Array(repeating: nil, count: n) }
        return (0..<n).map { p[$0].map { String(cString: $0) } }
    }

    /// Elements of `size` bytes each (an adapter built against a later
    /// minor may have larger ones); smaller than this version's is an error.
    static func items<E, T>(_ base: UnsafePointer<E>?, count: UInt32, size: UInt32, what: String,
                            _ convert: (E) throws(DatabaseError) -> T) throws(DatabaseError) -> [T] {
        guard count > 0 else { return [] }
        guard let base else { throw .failed("the adapter returned a \(what) of \(count) items without items") }
        guard Int(size) >= MemoryLayout<E>.size else {
            throw .failed("the adapter returned a \(what) whose items are \(size) bytes; \(MemoryLayout<E>.size) are needed")
        }
        let raw = UnsafeRawPointer(base)
        var out: [T] = []
        out.reserveCapacity(Int(count))
        for i in 0..<Int(count) {
            out.append(try convert(raw.advanced(by: i * Int(size)).loadUnaligned(as: E.self)))
        }
        return out
    }

    static func value(_ v: pincer_db_value_t) -> DBValue {
        switch v.type {
        case PINCER_DB_INTEGER: return .integer(v.integer)
        case PINCER_DB_REAL: return .real(v.real)
        case PINCER_DB_TEXT:
            guard let b = v.bytes, v.length > 0 else { return .text("") }
            return .text(String(decoding: UnsafeRawBufferPointer(start: b, count: Int(v.length)), as: UTF8.self))
        case PINCER_DB_BLOB:
            guard let b = v.bytes, v.length > 0 else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: b, count: Int(v.length))))
        default: return .null
        }
    }

    static func values(_ p: UnsafePointer<pincer_db_value_t>?, rows: Int, columns: Int) throws(DatabaseError) -> [[DBValue]] {
        guard rows > 0 && columns > 0 else { return Array(repeating: [], count: rows) }
        guard let p else { throw .failed("the adapter returned \(rows) rows without values") }
        return (0..<rows).map { r in (0..<columns).map { c in value(p[r * columns + c]) } }
    }

    static func page(_ p: pincer_db_page_t) throws(DatabaseError) -> Page {
        let rows = Int(clamping: p.row_count), columns = Int(p.column_count), keys = Int(p.key_count)
        return Page(columns: strings(p.columns, columns).map { $0 ?? "" },
                    rows: try values(p.values, rows: rows, columns: columns),
                    keyColumns: strings(p.key_columns, keys).map { $0 ?? "" },
                    keys: keys > 0 ? try values(p.keys, rows: rows, columns: keys) : [],
                    paging: Paging(rawValue: p.paging), nextCursor: p.next_cursor.map { String(cString: $0) },
                    more: p.flags & PINCER_DB_PAGE_MORE != 0 || p.next_cursor != nil, changes: Int(clamping: p.changes), truncated: p.flags & PINCER_DB_PAGE_TRUNCATED != 0,
                    wrote: p.flags & PINCER_DB_PAGE_WROTE != 0)
    }
}

/// A C array of NUL-terminated copies, freed explicitly.
struct CStrings {
    let pointers: [UnsafePointer<CChar>?]
    let storage: UnsafeMutablePointer<UnsafePointer<CChar>?>?

    init(_ strings: [String]) {
        pointers = strings.map { UnsafePointer(strdup($0)) }
        if strings.isEmpty { storage = nil } else {
            storage = .allocate(capacity: strings.count)
            storage!.initialize(from: pointers, count: pointers.count)
        }
    }

    var base: UnsafePointer<UnsafePointer<CChar>?>? { storage.map { UnsafePointer($0) } }

    func free() {
        for p in pointers { Glibc.free(UnsafeMutableRawPointer(mutating: p)) }
        storage?.deallocate()
    }
}

/// A C copy of a Swift array of plain structs, freed explicitly.
struct CArray<E> {
    let storage: UnsafeMutablePointer<E>?

    init(_ items: [E]) {
        if items.isEmpty { storage = nil } else {
            storage = .allocate(capacity: items.count)
            storage!.initialize(from: items, count: items.count)
        }
    }

    var base: UnsafePointer<E>? { storage.map { UnsafePointer($0) } }
    func free() { storage?.deallocate() }
}

/// pincer_db_value_t copies of DBValues; text and blob bytes in one buffer.
struct CValues {
    let storage: UnsafeMutablePointer<pincer_db_value_t>?
    let bytes: UnsafeMutableRawPointer?

    init(_ values: [DBValue]) {
        guard !values.isEmpty else { storage = nil; bytes = nil; return }
        var total = 0
        for v in values {
            switch v {
            case .text(let s): total += s.utf8.count
            case .blob(let b): total += b.count
            default: break
            }
        }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(1, total), alignment: 8)
        let out = UnsafeMutablePointer<pincer_db_value_t>.allocate(capacity: values.count)
        var at = 0
        for (i, v) in values.enumerated() {
            var c = pincer_db_value_t()
            func copy(_ b: some Collection<UInt8>) {
                let n = b.count
                _ = UnsafeMutableRawBufferPointer(start: buffer + at, count: n).initializeMemory(as: UInt8.self, from: b)
                c.bytes = UnsafeRawPointer(buffer + at)
                c.length = UInt64(n)
                at += n
            }
            switch v {
            case .null: c.type = PINCER_DB_NULL
            case .integer(let x): c.type = PINCER_DB_INTEGER; c.integer = x
            case .real(let x): c.type = PINCER_DB_REAL; c.real = x
            case .text(let s): c.type = PINCER_DB_TEXT; copy(s.utf8)
            case .blob(let b): c.type = PINCER_DB_BLOB; copy(b)
            }
            (out + i).initialize(to: c)
        }
        storage = out
        bytes = buffer
    }

    var base: UnsafePointer<pincer_db_value_t>? { storage.map { UnsafePointer($0) } }

    func free() {
        storage?.deallocate()
        bytes?.deallocate()
    }
}
