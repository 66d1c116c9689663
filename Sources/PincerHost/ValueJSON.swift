@_exported import PincerJSON

extension Value {
    /// JSON form of a command result. u64 and i64 beyond ±2^53 stay exact
    /// because the writer prints integers as written, never through a double.
    public var json: JSON {
        switch self {
        case .void: .null
        case .bool(let b): .bool(b)
        case .i32(let v): .int(Int64(v))
        case .i64(let v): .int(v)
        case .u64(let v): .uint(v)
        case .f64(let v): .double(v)
        case .string(let s): .string(s)
        }
    }
}
