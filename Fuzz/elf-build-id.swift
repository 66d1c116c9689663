// The ELF build-id reader (PincerHost/ELFBuildID.swift, compiled into this
// target): plugin files are untrusted; every offset and size is checked.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let id = ELFBuildID.parse(bytes: bytes) {
        precondition(!id.isEmpty && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }, "not lowercase hex: \(id)")
    }
    return 0
}
