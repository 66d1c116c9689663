// What the loopback proxy (net.proxy) reads from clients and servers: a
// message head (request or status line and headers, with its limits) and a
// chunked body, fed in pieces of every size. Nothing traps; what is
// accepted keeps its limits; a chunked body decodes to the same bytes
// however it is split.
import NetworkLog

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var limits = HTTPLimits()
    limits.headBytes = 4096
    limits.headerCount = 32
    limits.lineBytes = 256
    if let end = try? HTTPHead.end(in: bytes[...], limits: limits) {
        precondition(end <= bytes.count && end <= limits.headBytes + 2 + bytes.prefix { $0 == 13 || $0 == 10 }.count)
        for isRequest in [true, false] {
            if let head = try? HTTPHead.parse(bytes[0..<end], isRequest: isRequest, limits: limits) {
                precondition(head.headers.count <= limits.headerCount)
                _ = try? head.requestFraming()
                _ = try? head.responseFraming(requestMethod: "GET")
            }
        }
    }
    // The same bytes as a chunked body: whole, then one byte at a time.
    func decode(step: Int) -> [UInt8]? {
        var decoder = ChunkedDecoder(limits: limits)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count && !decoder.isDone {
            let piece = Array(bytes[i..<min(bytes.count, i + step)])
            guard let used = try? piece.withUnsafeBytes({ try decoder.feed($0) { out.append(contentsOf: $0) } }) else { return nil }
            precondition(used <= piece.count)
            i += used
            if used < piece.count { break }
        }
        precondition(decoder.total == UInt64(out.count))
        return decoder.isDone ? out : nil
    }
    let whole = decode(step: max(1, bytes.count))
    if bytes.count <= 4096 { precondition(decode(step: 1) == whole, "a chunked body decoded differently when split") }
    return 0
}
