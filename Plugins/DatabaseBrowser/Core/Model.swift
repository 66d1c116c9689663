// The database browser's model: what every adapter speaks, whether it is
// the built-in SQLite adapter (Swift, below) or a C table registered
// through "pincer.database/1" (CAdapter). The shapes follow
// SDK/include/pincer/database.h one to one.
import PincerPluginKit

/// One value in one of the five storage classes. Text keeps embedded NULs.
public enum DBValue: Sendable, Equatable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// An adapter's (or one database's) capability bits: PINCER_DB_* in database.h.
public struct Capabilities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let query = Capabilities(rawValue: PINCER_DB_CAN_QUERY)
    public static let write = Capabilities(rawValue: PINCER_DB_CAN_WRITE)
    public static let atomicWrite = Capabilities(rawValue: PINCER_DB_ATOMIC_WRITE)
    public static let keyset = Capabilities(rawValue: PINCER_DB_CAN_KEYSET)
    public static let cancel = Capabilities(rawValue: PINCER_DB_CAN_CANCEL)
    public static let cheapCount = Capabilities(rawValue: PINCER_DB_CHEAP_COUNT)

    /// Names for listings, in bit order.
    public var names: [String] {
        let all: [(Capabilities, String)] = [(.query, "query"), (.write, "write"), (.atomicWrite, "atomic-write"),
                                             (.keyset, "keyset"), (.cancel, "cancel"), (.cheapCount, "cheap-count")]
        return all.filter { contains($0.0) }.map(\.1)
    }
}

public struct DatabaseInfo: Sendable, Equatable {
    public var name: String
    public var location: String?
    public var detail: String?
    public var capabilities: Capabilities

    public init(name: String, location: String?, detail: String?, capabilities: Capabilities) {
        self.name = name
        self.location = location
        self.detail = detail
        self.capabilities = capabilities
    }
}

public enum ObjectKind: UInt32, Sendable {
    case table = 1, view = 2, virtualTable = 3

    public var name: String {
        switch self {
        case .table: "table"
        case .view: "view"
        case .virtualTable: "virtual table"
        }
    }
}

public struct ObjectInfo: Sendable, Equatable {
    public var name: String
    public var kind: ObjectKind
    public init(name: String, kind: ObjectKind) { self.name = name; self.kind = kind }
}

public struct Column: Sendable, Equatable {
    public enum Generated: Sendable { case virtual, stored }
    public var name: String
    public var declaredType: String
    public var defaultSQL: String?
    /// 1-based position in the primary key; 0 when not part of it.
    public var primaryKey: Int
    public var notNull: Bool
    public var hidden: Bool
    public var generated: Generated?

    public init(name: String, declaredType: String, defaultSQL: String? = nil, primaryKey: Int = 0,
                notNull: Bool = false, hidden: Bool = false, generated: Generated? = nil) {
        self.name = name
        self.declaredType = declaredType
        self.defaultSQL = defaultSQL
        self.primaryKey = primaryKey
        self.notNull = notNull
        self.hidden = hidden
        self.generated = generated
    }
}

/// A foreign key, composite keys as one record in key order. A nil `to`
/// entry refers to the target's primary key implicitly.
public struct ForeignKey: Sendable, Equatable {
    public var table: String
    public var from: [String]
    public var to: [String?]
    public var onUpdate: String?
    public var onDelete: String?
}

public struct Index: Sendable, Equatable {
    public var name: String
    /// nil entries are expressions.
    public var columns: [String?]
    public var unique: Bool
    public var partial: Bool
    public var primaryKey: Bool
}

/// How rows are addressed for update and delete.
public enum Identity: UInt32, Sendable {
    case none = 0, rowid = 1, primaryKey = 2

    public var name: String {
        switch self {
        case .none: "none"
        case .rowid: "rowid"
        case .primaryKey: "primary key"
        }
    }
}

public struct ObjectDescription: Sendable, Equatable {
    public var name: String
    public var kind: ObjectKind
    public var ddl: String?
    public var columns: [Column]
    public var foreignKeys: [ForeignKey]
    public var indexes: [Index]
    public var identity: Identity
    public var keyColumns: [String]
}

public struct OrderTerm: Sendable, Equatable, Hashable {
    public var column: String
    public var descending: Bool
    public init(_ column: String, descending: Bool = false) { self.column = column; self.descending = descending }
}

public struct PageRequest: Sendable, Equatable {
    public var object: String
    public var order: [OrderTerm]
    public var limit: Int
    public var cursor: String?
    public var offset: Int

    public init(object: String, order: [OrderTerm] = [], limit: Int = 100, cursor: String? = nil, offset: Int = 0) {
        self.object = object
        self.order = order
        self.limit = limit
        self.cursor = cursor
        self.offset = offset
    }
}

public enum Paging: UInt32, Sendable {
    case keyset = 1, offset = 2
}

/// Rows with their column names and, where rows can be addressed, their keys.
public struct Page: Sendable, Equatable {
    public var columns: [String]
    /// Row-major: rows.count == rowCount, each row has columns.count values.
    public var rows: [[DBValue]]
    public var keyColumns: [String]
    public var keys: [[DBValue]]
    public var paging: Paging?
    public var nextCursor: String?
    /// read_page: more rows follow (there may be no cursor to say so).
    public var more: Bool
    public var changes: Int
    public var truncated: Bool
    public var wrote: Bool
    /// read_page: why the page has no cursor although more rows may follow.
    public var note: String?

    public init(columns: [String], rows: [[DBValue]], keyColumns: [String] = [], keys: [[DBValue]] = [],
                paging: Paging? = nil, nextCursor: String? = nil, more: Bool = false, changes: Int = 0, truncated: Bool = false,
                wrote: Bool = false, note: String? = nil) {
        self.columns = columns
        self.rows = rows
        self.keyColumns = keyColumns
        self.keys = keys
        self.paging = paging
        self.nextCursor = nextCursor
        self.more = more
        self.changes = changes
        self.truncated = truncated
        self.wrote = wrote
        self.note = note
    }
}

public struct Statement: Sendable, Equatable {
    public var sql: String
    public var parameters: [DBValue]
    /// Rows kept in the result; 0 for no limit.
    public var rowLimit: Int

    public init(sql: String, parameters: [DBValue] = [], rowLimit: Int = 0) {
        self.sql = sql
        self.parameters = parameters
        self.rowLimit = rowLimit
    }
}

/// A bounded count: exact, or "at least `value`".
public struct RowCount: Sendable, Equatable {
    public var value: Int
    public var exact: Bool
}

/// An error from an adapter, with the SDK status it stands for.
public struct DatabaseError: StatusError, Sendable, Equatable {
    public let status: pincer_status_t
    public let message: String
    public init(_ status: pincer_status_t, _ message: String) { self.status = status; self.message = message }
    public var description: String { message }

    public static func invalid(_ m: String) -> DatabaseError { DatabaseError(PINCER_INVALID_ARGUMENT, m) }
    public static func notFound(_ m: String) -> DatabaseError { DatabaseError(PINCER_NOT_FOUND, m) }
    public static func unsupported(_ m: String) -> DatabaseError { DatabaseError(PINCER_UNSUPPORTED, m) }
    public static func cancelled(_ m: String) -> DatabaseError { DatabaseError(PINCER_CANCELLED, m) }
    public static func failed(_ m: String) -> DatabaseError { DatabaseError(PINCER_FAILED, m) }
}

/// A store of databases. The built-in SQLite adapter implements it in
/// Swift; CAdapter implements it over a C table from database.h.
public protocol DatabaseAdapter: AnyObject, Sendable {
    var id: String { get }
    var name: String { get }
    var capabilities: Capabilities { get }
    func databases() throws(DatabaseError) -> [DatabaseInfo]
    func open(_ database: String, write: Bool, timeoutMilliseconds: Int) throws(DatabaseError) -> DatabaseSession
}

/// One open database, used from one thread at a time (cancel from any).
public protocol DatabaseSession: AnyObject {
    func objects() throws(DatabaseError) -> [ObjectInfo]
    func describe(_ object: String) throws(DatabaseError) -> ObjectDescription
    func readPage(_ request: PageRequest) throws(DatabaseError) -> Page
    func count(_ object: String, limit: Int) throws(DatabaseError) -> RowCount
    func insert(_ object: String, values: [(column: String, value: DBValue)]) throws(DatabaseError) -> Page
    func update(_ object: String, key: [DBValue], values: [(column: String, value: DBValue)]) throws(DatabaseError)
    func delete(_ object: String, key: [DBValue]) throws(DatabaseError)
    func execute(_ statement: Statement) throws(DatabaseError) -> Page
    /// Makes the running call, if any, fail with PINCER_CANCELLED. Any thread.
    func cancel()
    func close()
}
