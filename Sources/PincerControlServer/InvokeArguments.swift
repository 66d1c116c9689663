import PincerControl
import PincerHost

/// `invoke` arguments to a command's values: by name (an object) or in
/// order (an array), with the shell's rules. Strings are converted as shell
/// words are; numbers and booleans must suit the parameter's type; null or
/// absent takes the default. A rest parameter takes an array of strings by
/// name, or the positional values left once the required parameters are
/// filled (its optional parameters are then named only, as in the shell).
enum InvokeArguments {
    static func values(for command: Command, from arguments: JSON?) throws(MethodError) -> [Value] {
        switch arguments {
        case nil, .null?: return try named([], command)
        case .object(let members)?: return try named(members, command)
        case .array(let items)?: return try positional(items, command)
        case let other?:
            throw .params("params.arguments must be an object (by name) or an array (in order), not \(other.typeName)")
        }
    }

    private static func named(_ members: [(String, JSON)], _ command: Command) throws(MethodError) -> [Value] {
        let params = command.signature.parameters
        var given: [String: JSON] = [:]
        for (name, value) in members {
            guard params.contains(where: { $0.name == name }) else {
                let names = params.map(\.name).joined(separator: ", ")
                throw .params("params.arguments.\(name): \(command.fullName) has no such parameter (parameters: \(names.isEmpty ? "none" : names))")
            }
            guard given[name] == nil else { throw .params("params.arguments.\(name) is given twice") }
            given[name] = value
        }
        var values: [Value] = []
        for p in command.signature.fixedParameters {
            values.append(try value(given[p.name], for: p, field: "params.arguments.\(p.name)", command))
        }
        if let rest = command.signature.restParameter, let items = given[rest.name], items != .null {
            let field = "params.arguments.\(rest.name)"
            switch items {
            case .string(let s): values.append(.string(s))
            case .array(let list):
                for (i, item) in list.enumerated() { values.append(try restItem(item, field: "\(field)[\(i)]")) }
            default:
                throw .params("\(field) must be an array of strings (the items of a rest parameter), not \(items.typeName)")
            }
        }
        return values
    }

    private static func positional(_ items: [JSON], _ command: Command) throws(MethodError) -> [Value] {
        let fixed = Array(command.signature.fixedParameters)
        let rest = command.signature.restParameter
        // As in the shell: with a rest parameter, positional values fill the
        // required parameters and the rest are items.
        let slots = rest == nil ? fixed.count : fixed.prefix { !$0.isOptional }.count
        if rest == nil && items.count > fixed.count {
            throw .params("params.arguments: \(command.fullName) takes at most \(fixed.count) argument\(fixed.count == 1 ? "" : "s"), got \(items.count)")
        }
        var values: [Value] = []
        for (i, p) in fixed.enumerated() {
            let given = i < slots && i < items.count ? items[i] : nil
            values.append(try value(given, for: p, field: "params.arguments[\(i)] (\(p.name))", command))
        }
        if let rest {
            for i in stride(from: slots, to: items.count, by: 1) {
                values.append(try restItem(items[i], field: "params.arguments[\(i)] (\(rest.name))"))
            }
        }
        return values
    }

    private static func restItem(_ item: JSON, field: String) throws(MethodError) -> Value {
        guard let s = item.stringValue else { throw .params("\(field) must be a string (a rest item), not \(item.typeName)") }
        return .string(s)
    }

    /// One parameter's value: given, or its default.
    private static func value(_ given: JSON?, for p: Parameter, field: String, _ command: Command) throws(MethodError) -> Value {
        guard let given, given != .null else {
            if let d = p.defaultValue { return d }
            throw .params("\(field) is missing: \(command.fullName) needs '\(p.name)' (\(p.type.rawValue))")
        }
        func wrong() -> MethodError { .params("\(field) expects \(p.type.rawValue), got \(given.typeName) \(given.serialized())") }
        switch given {
        case .string(let text):
            switch ValueConversion.convert(text, to: p.type) {
            case .success(let v): return v
            case .failure(let why): throw .params("\(field) expects \(p.type.rawValue): \(why)")
            }
        case .bool(let b):
            guard p.type == .bool else { throw wrong() }
            return .bool(b)
        case .int, .uint, .double:
            switch p.type {
            case .i32:
                guard let i = given.int64Value, let v = Int32(exactly: i) else { throw wrong() }
                return .i32(v)
            case .i64:
                guard let v = given.int64Value else { throw wrong() }
                return .i64(v)
            case .u64:
                let v: UInt64?
                switch given {
                case .uint(let u): v = u
                case .int(let i): v = UInt64(exactly: i)
                case .double(let d): v = UInt64(exactly: d)
                default: v = nil
                }
                guard let v else { throw wrong() }
                return .u64(v)
            case .f64:
                guard let d = given.doubleValue, d.isFinite else { throw wrong() }
                return .f64(d)
            case .bool, .string, .void:
                throw wrong()
            }
        case .null, .array, .object:
            throw wrong()
        }
    }
}
