// JSON (PincerJSON): parse anything; what parses must serialise and parse back
// equal; `validate` and `scan` must accept exactly what `parse` accepts, with
// the same error; `scan`'s events stay inside the input and nest properly;
// `endOfString` ends a string where the parser does.
import PincerJSON

/// Checks that every range `scan` reports lies inside the input and that
/// objects open and close in pairs, members inside objects.
final class EventChecker: JSONScanVisitor {
    let count: Int
    var open: [Bool] = []  // true: object
    init(count: Int) { self.count = count }
    func inside(_ r: Range<Int>) { precondition(r.lowerBound >= 0 && r.upperBound <= count, "a range outside the input") }
    func objectStart(depth: Int) { open.append(true); precondition(depth == open.count, "object depth") }
    func arrayStart(depth: Int) { open.append(false); precondition(depth == open.count, "array depth") }
    func objectEnd() { precondition(open.popLast() == true, "objectEnd without an object") }
    func arrayEnd() { precondition(open.popLast() == false, "arrayEnd without an array") }
    func key(_ content: Range<Int>, escaped: Bool, valueStart: Int) {
        inside(content)
        precondition(open.last == true && valueStart > content.upperBound && valueStart <= count, "key")
    }
    func memberEnd(_ end: Int) { precondition(open.last == true && end <= count, "memberEnd") }
    func string(_ content: Range<Int>, escaped: Bool) { inside(content) }
}

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
    let checker = EventChecker(count: size)
    let scanned = Result { () throws(JSONSyntaxError) in try JSON.scan(bytes: bytes, visitor: checker) }
    switch (parsed, scanned) {
    case (.success, .success): break
    case (.failure(let a), .failure(let b)): precondition(a == b, "scan and parse disagree: \(a) / \(b)")
    default: fatalError("scan and parse disagree on whether the input is JSON")
    }
    if case .success = scanned { precondition(checker.open.isEmpty, "containers left open") }
    if case .success(.string) = parsed, let first = bytes.firstIndex(of: 0x22) {
        precondition(JSON.endOfString(in: bytes, openingQuoteAt: first) != nil, "endOfString found no end of a valid string")
    }
    guard case .success(let value) = parsed else { return 0 }
    let again: JSON
    do { again = try JSON.parse(bytes: value.serializedBytes()) } catch { fatalError("serialised JSON does not parse: \(error)") }
    precondition(again == value, "JSON changed in a round trip")
    _ = value.serialized(pretty: true)
    return 0
}
