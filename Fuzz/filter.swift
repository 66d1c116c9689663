// The filter language (NetworkLog): parse, then match against real entries,
// and translate to the persisted log's SQL.
import NetworkLog

private let entries: [NetworkEntry] = {
    let har = #"{"log":{"version":"1.2","creator":{"name":"fuzz","version":"1"},"entries":[{"startedDateTime":"2024-01-01T00:00:00Z","time":12,"request":{"method":"POST","url":"https://api.example.com/v1/items?q=1","httpVersion":"HTTP/1.1","headers":[{"name":"Content-Type","value":"application/json"}],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":7,"postData":{"mimeType":"application/json","text":"{\"a\":1}"}},"response":{"status":404,"statusText":"Not Found","httpVersion":"HTTP/1.1","headers":[],"cookies":[],"content":{"size":2,"mimeType":"text/plain","text":"no"},"redirectURL":"","headersSize":-1,"bodySize":2},"cache":{},"timings":{"send":1,"wait":10,"receive":1}},{"startedDateTime":"2024-01-01T00:00:01Z","time":0,"request":{"method":"GET","url":"http://localhost:8080/","httpVersion":"HTTP/1.1","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},"response":{"status":0,"statusText":"","httpVersion":"","headers":[],"cookies":[],"content":{"size":0,"mimeType":""},"redirectURL":"","headersSize":-1,"bodySize":-1,"_error":"timed out"},"cache":{},"timings":{"send":0,"wait":0,"receive":0}}]}}"#
    do { return try HARImport.read(Array(har.utf8)).entries } catch { fatalError("the fuzz target's HAR: \(error)") }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let filter = try? NetworkFilter(text) else { return 0 }
    for entry in entries { _ = filter.matches(entry) }
    // The persisted log's SQL for it (recursive like matching; the parser bounds the depth).
    if let condition = filter.sqlCondition, condition.sql.filter({ $0 == "?" }).count != condition.arguments.count {
        fatalError("the SQL for \(text) has \(condition.sql.filter { $0 == "?" }.count) placeholders for \(condition.arguments.count) arguments")
    }
    return 0
}
