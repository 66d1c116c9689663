/// A command's result, as a Swift plugin returns it.
public enum CommandValue: Sendable {
    case void
    case bool(Bool)
    case i32(Int32)
    case i64(Int64)
    case u64(UInt64)
    case f64(Double)
    case string(String)

    /// Writes the value where the host expects it; a type that does not
    /// match the signature's result is a plugin bug, reported as a failure.
    func store(into result: UnsafeMutablePointer<pincer_value_t>?, call: UnsafeMutablePointer<pincer_call_t>) -> pincer_status_t {
        let expected = result?.pointee.type ?? PINCER_TYPE_VOID
        switch (self, expected) {
        case (.void, PINCER_TYPE_VOID): break
        case (.bool(let v), PINCER_TYPE_BOOL): result?.pointee.as.b = v
        case (.i32(let v), PINCER_TYPE_I32): result?.pointee.as.i32 = v
        case (.i64(let v), PINCER_TYPE_I64): result?.pointee.as.i64 = v
        case (.u64(let v), PINCER_TYPE_U64): result?.pointee.as.u64 = v
        case (.f64(let v), PINCER_TYPE_F64): result?.pointee.as.f64 = v
        case (.string(let s), PINCER_TYPE_STRING): s.withCString { call.pointee.return_string(call, $0) }
        default:
            "the command returned \(self) but its signature declares result type tag \(expected)".withCString {
                call.pointee.fail(call, $0)
            }
            return PINCER_FAILED
        }
        return PINCER_OK
    }
}

/// The converted arguments of one call, in signature order.
public struct Arguments {
    let base: UnsafePointer<pincer_value_t>?
    public let count: Int
    let call: UnsafeMutablePointer<pincer_call_t>?

    /// Shows text to the user while the command runs (pincer_call_t.output,
    /// ABI 1.1); dropped by hosts without the slot.
    public func output(_ text: String) {
        guard let call, Int(call.pointee.struct_size) >= MemoryLayout<pincer_call_t>.offset(of: \.output)! + 8,
              let output = call.pointee.output else { return }
        text.withCString { output(call, $0) }
    }

    /// True when the caller wants live output as JSON objects, one per
    /// `output` line (pincer_call_t.output_format, ABI 1.3): `pincer --json`,
    /// a JSON-RPC client. False on hosts without the slot.
    public var wantsJSON: Bool {
        guard let call, Int(call.pointee.struct_size) >= MemoryLayout<pincer_call_t>.offset(of: \.output_format)! + 8,
              let format = call.pointee.output_format else { return false }
        return format(call) == PINCER_OUTPUT_JSON
    }

    /// True once the caller has given up on the call (pincer_call_t.is_cancelled,
    /// ABI 1.4): Ctrl-C or --timeout in the shell, a JSON-RPC `cancel`. A
    /// command that runs long polls it and returns soon; false on hosts
    /// without the slot.
    public var isCancelled: Bool {
        guard let call, Int(call.pointee.struct_size) >= MemoryLayout<pincer_call_t>.offset(of: \.is_cancelled)! + 8,
              let isCancelled = call.pointee.is_cancelled else { return false }
        return isCancelled(call)
    }

    /// Asks the person running the command and waits for one line
    /// (pincer_call_t.ask, ABI 1.7); nil when nobody can answer (not
    /// interactive, --json, input ended, cancelled) or on hosts without the
    /// slot. A command must get on without answers.
    public func ask(_ question: String) -> String? {
        guard let call, Int(call.pointee.struct_size) >= MemoryLayout<pincer_call_t>.offset(of: \.ask)! + 8,
              let ask = call.pointee.ask else { return nil }
        return question.withCString { ask(call, $0) }.map { String(cString: $0) }
    }

    /// Writes one JSON object as a line of live output (NDJSON under
    /// `--json`); callers build text lines themselves when `wantsJSON` is false.
    public func output(json: JSON) {
        output(json.serialized() + "\n")
    }

    public subscript(index: Int) -> Argument {
        precondition(index >= 0 && index < count, "argument \(index) out of range 0..<\(count)")
        return Argument(value: base![index])
    }

    /// The items of a rest parameter (`name: string...`, ABI 1.2): the
    /// string arguments from `index` (the rest parameter's position, i.e.
    /// the number of parameters before it) to `count`. Empty when the call
    /// has no items.
    public func rest(from index: Int) -> [String] {
        precondition(index >= 0, "rest index \(index) is negative")
        guard index < count else { return [] }
        return (index..<count).map { self[$0].string }
    }
}

/// One argument; read it with the accessor matching its declared type.
public struct Argument {
    let value: pincer_value_t

    public var bool: Bool { value.as.b }
    public var i32: Int32 { value.as.i32 }
    public var i64: Int64 { value.as.i64 }
    public var u64: UInt64 { value.as.u64 }
    public var f64: Double { value.as.f64 }
    public var string: String { value.as.string.map { String(cString: $0) } ?? "" }
}
