// JSON (PincerJSON): parse anything; what parses must serialise and parse back
// equal; `validate` must accept exactly what `parse` accepts, with the same error.
import PincerJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let parsed = Result { () throws(JSONSyntaxError) -> JSON in try JSON.parse(bytes: bytes) }
    let validated = Result { () throws(JSONSyntaxError) in try JSON.validate(bytes: bytes) }
    switch (parsed, validated) {
    case (.success, .success): break
    case (.failure(let a), .failure(let b)): precondition(a == b, "validate and parse disagree: \(a) / \(b)")
    default: fatalError("validate and parse disagree on whether the input is JSON")
    }
    guard case .success(let value) = parsed else { return 0 }
    let again: JSON
    do { again = try JSON.parse(bytes: value.serializedBytes()) } catch { fatalError("serialised JSON does not parse: \(error)") }
    precondition(again == value, "JSON changed in a round trip")
    _ = value.serialized(pretty: true)
    return 0
}
