// The plugin registry (PincerHost/PluginRegistry.swift, the host compiled
// into this target): the cache file `plugin-registry.bin` lives in the state
// directory and the scanner child's JSON lines come through a pipe, so both
// are read as untrusted. Each input is tried as both. What decodes must
// encode and decode to itself: a registry file to the same bytes (each input
// is also tried with the XXH3-64 trailer it would need), a record
// line to the same JSON.
import PincerJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // As it is, and with the checksum it would need, so the fuzzer reaches the records.
    let sum = RegistryFile.checksum(bytes[...])
    for file in [bytes, bytes + stride(from: 0, to: 64, by: 8).map { UInt8(truncatingIfNeeded: sum >> UInt64($0)) }] {
        // What decodes whole (every record's payload checked) must encode to the same bytes.
        if let image = RegistryImage(file), let records = RegistryFile.decode(file) {
            let encoded = RegistryFile.encode(records, directories: image.directories.map(image.snapshot))
            precondition(encoded == file, "a registry file changed in a round trip")
        }
    }
    guard let json = try? JSON.parse(bytes: bytes) else { return 0 }
    guard let record = RegistryRecord(json: json) else { return 0 }
    let encoded = record.json
    guard let again = RegistryRecord(json: encoded) else { preconditionFailure("a decoded record did not decode again") }
    precondition(again.json == encoded, "a record changed in a round trip")
    return 0
}
