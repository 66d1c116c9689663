// The network logger's settings document (NetworkLogger/Plugin, compiled
// into this target): limits and capture rules.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if case .success(let config) = LoggerConfig.decode(text) {
        guard case .success(let again) = LoggerConfig.decode(config.json.serialized()), again == config else {
            fatalError("network settings changed in a round trip")
        }
    }
    return 0
}
