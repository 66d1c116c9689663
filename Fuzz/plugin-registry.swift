// The plugin registry's records (PincerHost/PluginRegistry.swift, the host
// compiled into this target): the cache file lives in the state directory
// and the scanner child's lines come through a pipe, so both are read as
// untrusted. A record that decodes must encode and decode to itself.
import PincerJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let json = try? JSON.parse(bytes: UnsafeBufferPointer(start: data, count: size)) else { return 0 }
    guard let record = RegistryRecord(json: json) else { return 0 }
    let encoded = record.json
    guard let again = RegistryRecord(json: encoded) else { preconditionFailure("a decoded record did not decode again") }
    precondition(again.json == encoded, "a record changed in a round trip")
    return 0
}
