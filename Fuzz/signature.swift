// The command signature grammar (PincerHost/Signature.swift, compiled into
// this target): parse, print usage, convert values to every type.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let signature = try? Signature.parse(text) {
        _ = signature.usage(fullName: "fuzz.command")
        for p in signature.parameters { _ = signature.parameter(named: p.name) }
    }
    for type in ValueType.allCases { _ = ValueConversion.convert(text, to: type) }
    return 0
}
