// The interception rules document (net-rules.json, net.import-rules): what
// is accepted round-trips unchanged, and every accepted rule can be
// compiled and asked about a request and its response without trapping.
import NetworkLog
import PincerJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard case .success(let document) = RulesDocument.decode(text) else { return 0 }
    guard case .success(let again) = RulesDocument.decode(document.json.serialized()), again == document else {
        fatalError("a rules document changed in a round trip")
    }
    let engine = RuleEngine(document: document)
    let request = InterceptedRequest(method: "POST", url: "https://api.example.com/v1/users/7?x=1",
                                     headers: [Header("Content-Type", "application/json")], body: Array(#"{"a":[1,{"b":2}]}"#.utf8))
    let decision = engine.decide(request, random: { 0.5 })
    _ = engine.respond(decision, request: decision.request,
                       response: InterceptedResponse(status: 500, headers: [Header("Content-Type", "application/json")], body: Array(#"{"user":{"id":1}}"#.utf8)))
    return 0
}
