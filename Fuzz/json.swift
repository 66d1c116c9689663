// JSON (PincerJSON): parse anything; what parses must serialise and parse back equal.
import PincerJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let value = try? JSON.parse(bytes: bytes) else { return 0 }
    let again: JSON
    do { again = try JSON.parse(bytes: value.serializedBytes()) } catch { fatalError("serialised JSON does not parse: \(error)") }
    precondition(again == value, "JSON changed in a round trip")
    _ = value.serialized(pretty: true)
    return 0
}
