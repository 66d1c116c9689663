import CFFI
import CPincerSDK
#if canImport(Glibc)
import Glibc
#endif

/// A command failed: the plugin's status and message, or a host-side reason.
public struct CommandFailure: Error, Sendable, CustomStringConvertible {
    public let status: UInt32
    public let message: String
    public var description: String { message }
}

/// A registered command: `prefix.name`, its parsed signature and the C
/// function behind it.
public final class Command: @unchecked Sendable {
    public let fullName: String
    public let signature: Signature
    public let summary: String
    public let details: String
    public let changesState: Bool
    /// The string result is a JSON document (PINCER_COMMAND_JSON_RESULT).
    public let returnsJSON: Bool
    public let pluginID: String

    enum Implementation {
        case typed(pincer_typed_fn_t, CallInterface)
        case values(pincer_values_fn_t)
        /// Known from the plugin registry; the plugin is loaded on the first call.
        case deferred(DeferredPlugin)
    }

    let implementation: Implementation
    let context: UnsafeMutableRawPointer?
    /// Serialises calls into the owning plugin.
    let gate: Lock
    /// PINCER_COMMAND_CONCURRENT: called without taking `gate`.
    let runsConcurrently: Bool

    init(fullName: String, signature: Signature, summary: String, details: String, changesState: Bool, returnsJSON: Bool,
         pluginID: String, implementation: Implementation, context: UnsafeMutableRawPointer?, gate: Lock,
         runsConcurrently: Bool = false) {
        self.runsConcurrently = runsConcurrently
        self.fullName = fullName
        self.signature = signature
        self.summary = summary
        self.details = details
        self.changesState = changesState
        self.returnsJSON = returnsJSON
        self.pluginID = pluginID
        self.implementation = implementation
        self.context = context
        self.gate = gate
    }

    public var usage: String { signature.usage(fullName: fullName) }

    /// Calls the command with arguments already converted to the signature's
    /// types, one per parameter (defaults filled in). A rest parameter
    /// (`name: string...`) takes every `.string` after the fixed parameters:
    /// zero or more of them, so only then may there be more arguments than
    /// parameters.
    /// `output` receives what the command shows while it runs (pincer_call_t.output);
    /// `json` is what pincer_call_t.output_format tells the plugin;
    /// `cancellation` what pincer_call_t.is_cancelled reports.
    /// `ask` answers pincer_call_t.ask (nil: nobody can answer).
    public func invoke(_ arguments: [Value], output: (@Sendable (String) -> Void)? = nil, json: Bool = false,
                       cancellation: Cancellation? = nil, ask: (@Sendable (String) -> String?)? = nil) throws(CommandFailure) -> Value {
        let call = try PreparedCall(command: self, arguments: arguments)
        return try call.invoke(output: output, json: json, cancellation: cancellation, ask: ask)
    }

    /// Whether the command is known from the plugin registry only (its plugin is not loaded yet).
    public var isDeferred: Bool {
        if case .deferred = implementation { return true }
        return false
    }

    /// The command as its loaded plugin registered it: itself, or for a
    /// registry placeholder the command after loading the plugin.
    public func resolved() throws(CommandFailure) -> Command {
        guard case .deferred(let plugin) = implementation else { return self }
        return try plugin.command(named: fullName)
    }

    /// The result as JSON: parsed when the command returns a JSON document,
    /// else the value's own JSON form. A document that does not parse is the
    /// plugin's failure and says where.
    public func jsonResult(_ value: Value) throws(CommandFailure) -> JSON {
        guard returnsJSON, case .string(let text) = value else { return value.json }
        do { return try JSON.parse(text) } catch {
            throw CommandFailure(status: PINCER_FAILED, message: "\(fullName) returned a result that is not valid JSON (\(error))")
        }
    }
}

/// A libffi call interface for one signature, prepared once per command.
/// C shape: status fn(void *ctx, pincer_call_t *call, P1..Pn [, R *result]),
/// where a rest parameter is two C arguments: `const char *const *items, uint32_t count`.
final class CallInterface: @unchecked Sendable {
    let cif = UnsafeMutablePointer<ffi_cif>.allocate(capacity: 1)
    let types: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>
    let argumentCount: Int
    let hasResultPointer: Bool

    init(signature: Signature) throws(CommandFailure) {
        hasResultPointer = signature.result != .void && signature.result != .string
        let fixed = signature.fixedParameters
        let restSlots = signature.restParameter == nil ? 0 : 2
        argumentCount = 2 + fixed.count + restSlots + (hasResultPointer ? 1 : 0)
        types = .allocate(capacity: argumentCount)
        types[0] = cffi_type_pointer()
        types[1] = cffi_type_pointer()
        for (i, p) in fixed.enumerated() {
            types[2 + i] = CallInterface.ffiType(p.type)
        }
        if restSlots > 0 {
            types[2 + fixed.count] = cffi_type_pointer()
            types[3 + fixed.count] = cffi_type_uint32()
        }
        if hasResultPointer { types[argumentCount - 1] = cffi_type_pointer() }
        let rc = ffi_prep_cif(cif, cffi_default_abi(), UInt32(argumentCount), cffi_type_uint32(), types)
        guard rc == FFI_OK else {
            throw CommandFailure(status: PINCER_FAILED, message: "libffi could not prepare a call interface for '\(signature.text)' (ffi_status \(rc.rawValue))")
        }
    }

    // Never freed: commands live as long as the process (plugins are never unloaded).

    static func ffiType(_ type: ValueType) -> UnsafeMutablePointer<ffi_type> {
        switch type {
        case .void: cffi_type_void()
        case .bool: cffi_type_uint8()
        case .i32: cffi_type_sint32()
        case .i64: cffi_type_sint64()
        case .u64: cffi_type_uint64()
        case .f64: cffi_type_double()
        case .string: cffi_type_pointer()
        }
    }
}

/// A call with its arguments converted and laid out in native form, ready to
/// be made any number of times without further allocation (for scalars).
public final class PreparedCall {
    public let command: Command
    private let argumentCount: Int
    // Copied out of the signature so a call touches no arrays or strings.
    private let resultType: ValueType
    /// The values call style's `count`: fixed parameters plus rest items.
    private let valueCount: UInt32
    /// 8-byte native slots: [context, call handle, parameters..., (rest items, rest count), result pointer].
    private let slots: UnsafeMutablePointer<UInt64>
    private let pointers: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let values: UnsafeMutablePointer<pincer_value_t>
    /// The typed call style's `const char *const *` for a rest parameter; nil when it has no items.
    private let restItems: UnsafeMutablePointer<UnsafePointer<CChar>?>?
    private let result = UnsafeMutablePointer<pincer_value_t>.allocate(capacity: 1)
    private var strings: [UnsafeMutablePointer<CChar>] = []
    private let reply = Reply()
    private let handle = UnsafeMutablePointer<pincer_call_t>.allocate(capacity: 1)

    public init(command placeholder: Command, arguments: [Value]) throws(CommandFailure) {
        let command = try placeholder.resolved()
        let signature = command.signature
        let fixed = signature.fixedParameters
        let rest = signature.restParameter
        if let rest {
            guard arguments.count >= fixed.count else {
                throw CommandFailure(status: PINCER_INVALID_ARGUMENT, message: "\(command.fullName) takes at least \(fixed.count) arguments (then zero or more for '\(rest.name)'), got \(arguments.count)")
            }
        } else {
            guard arguments.count == fixed.count else {
                throw CommandFailure(status: PINCER_INVALID_ARGUMENT, message: "\(command.fullName) takes \(fixed.count) arguments, got \(arguments.count)")
            }
        }
        let restCount = arguments.count - fixed.count
        guard restCount <= Int(UInt32.max) - fixed.count else {
            throw CommandFailure(status: PINCER_INVALID_ARGUMENT, message: "\(command.fullName): too many arguments (\(arguments.count))")
        }
        let restSlots = rest == nil ? 0 : 2
        self.command = command
        resultType = signature.result
        valueCount = UInt32(arguments.count)
        argumentCount = 3 + fixed.count + restSlots
        slots = .allocate(capacity: argumentCount)
        slots.initialize(repeating: 0, count: argumentCount)
        pointers = .allocate(capacity: argumentCount)
        values = .allocate(capacity: max(1, arguments.count))
        restItems = restCount > 0 ? .allocate(capacity: restCount) : nil
        handle.initialize(to: reply.makeHandle())
        result.initialize(to: pincer_value_t())

        let raw = UnsafeMutableRawPointer(slots)
        raw.storeBytes(of: command.context, toByteOffset: 0, as: UnsafeMutableRawPointer?.self)
        raw.storeBytes(of: handle, toByteOffset: 8, as: UnsafeMutablePointer<pincer_call_t>.self)
        for i in 0..<argumentCount { pointers[i] = raw + 8 * i }

        for (i, arg) in arguments.enumerated() {
            let param = i < fixed.count ? fixed[fixed.startIndex + i] : rest!
            guard arg.type == param.type else {
                let which = param.isRest ? "rest parameter '\(param.name)' (item \(i - fixed.count + 1))" : "parameter '\(param.name)'"
                throw CommandFailure(status: PINCER_INVALID_ARGUMENT, message: "\(command.fullName): \(which) expects \(param.type.rawValue), got \(arg.type.rawValue)")
            }
            let offset = 8 * (2 + i)
            var v = pincer_value_t()
            v.type = param.type.tag
            switch arg {
            case .void: break
            case .bool(let b): raw.storeBytes(of: b, toByteOffset: offset, as: Bool.self); v.as.b = b
            case .i32(let x): raw.storeBytes(of: x, toByteOffset: offset, as: Int32.self); v.as.i32 = x
            case .i64(let x): raw.storeBytes(of: x, toByteOffset: offset, as: Int64.self); v.as.i64 = x
            case .u64(let x): raw.storeBytes(of: x, toByteOffset: offset, as: UInt64.self); v.as.u64 = x
            case .f64(let x): raw.storeBytes(of: x, toByteOffset: offset, as: Double.self); v.as.f64 = x
            case .string(let s):
                let copy = UnsafePointer(strdup(s)!)
                strings.append(UnsafeMutablePointer(mutating: copy))
                if param.isRest {
                    // Rest items share one array; its slot is stored below.
                    restItems![i - fixed.count] = copy
                } else {
                    raw.storeBytes(of: copy, toByteOffset: offset, as: UnsafePointer<CChar>.self)
                }
                v.as.string = copy
            }
            values[i] = v
        }
        if rest != nil {
            let offset = 8 * (2 + fixed.count)
            raw.storeBytes(of: UnsafeRawPointer(restItems), toByteOffset: offset, as: UnsafeRawPointer?.self)
            raw.storeBytes(of: UInt32(restCount), toByteOffset: offset + 8, as: UInt32.self)
        }
        // The result pointer slot points at the result value's payload.
        let payload = UnsafeMutableRawPointer(result) + MemoryLayout<pincer_value_t>.offset(of: \pincer_value_t.as)!
        raw.storeBytes(of: payload, toByteOffset: 8 * (2 + fixed.count + restSlots), as: UnsafeMutableRawPointer.self)
    }

    deinit {
        for s in strings { free(s) }
        slots.deallocate()
        pointers.deallocate()
        values.deallocate()
        restItems?.deallocate()
        result.deallocate()
        handle.deallocate()
    }

    /// Makes the call. Serialised with the plugin's other callbacks.
    public func invoke(output: (@Sendable (String) -> Void)? = nil, json: Bool = false,
                       cancellation: Cancellation? = nil, ask: (@Sendable (String) -> String?)? = nil) throws(CommandFailure) -> Value {
        reply.reset()
        reply.output = output
        reply.cancellation = cancellation
        reply.ask = ask
        defer { reply.ask = nil }
        reply.outputFormat = json ? PINCER_OUTPUT_JSON : PINCER_OUTPUT_TEXT
        result.pointee = pincer_value_t()
        result.pointee.type = resultType.tag
        var status: UInt32 = 0
        let gated = !command.runsConcurrently
        if gated { command.gate.lock() }
        switch command.implementation {
        case .typed(let fn, let cif):
            var rc: ffi_arg = 0
            ffi_call(cif.cif, fn, &rc, pointers)
            status = UInt32(truncatingIfNeeded: rc)
        case .values(let fn):
            status = fn(command.context, handle, values, valueCount, result)
        case .deferred:
            preconditionFailure("PreparedCall.init resolves a deferred command")
        }
        if gated { command.gate.unlock() }
        guard status == PINCER_OK else {
            let message = reply.failure.flatMap { $0.isEmpty ? nil : $0 }
                ?? "\(command.fullName) failed (\(Status.name(status))) without a message"
            throw CommandFailure(status: status, message: message)
        }
        let r = result.pointee.as
        switch resultType {
        case .void: return .void
        case .bool: return .bool(r.b)
        case .i32: return .i32(r.i32)
        case .i64: return .i64(r.i64)
        case .u64: return .u64(r.u64)
        case .f64: return .f64(r.f64)
        case .string: return .string(reply.text ?? "")
        }
    }
}
