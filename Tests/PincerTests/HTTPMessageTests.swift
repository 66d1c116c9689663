import XCTest
import NetworkLog

/// The proxy's reader of HTTP/1.1 heads and chunked bodies: what it
/// accepts, and what it refuses (with what was wrong) because a proxy that
/// guessed could be made to read one message two ways.
final class HTTPMessageTests: XCTestCase {
    func head(_ text: String, request: Bool = true) throws -> HTTPHead {
        let bytes = Array(text.utf8)
        let end = try XCTUnwrap(try HTTPHead.end(in: bytes[...], limits: HTTPLimits()))
        return try HTTPHead.parse(bytes[0..<end], isRequest: request, limits: HTTPLimits())
    }

    func refusal(_ text: String, request: Bool = true) -> String {
        do {
            let h = try head(text, request: request)
            _ = try request ? h.requestFraming() : h.responseFraming(requestMethod: "GET")
            return "accepted"
        } catch let e as HTTPMessageError { return e.message } catch { return "\(error)" }
    }

    func testHeadsAndFraming() throws {
        let r = try head("GET http://example.com/a?b=1 HTTP/1.1\r\nHost: example.com\r\nX-Empty:\r\nContent-Length: 5\r\n\r\nhello")
        XCTAssertEqual(r.start.0, "GET")
        XCTAssertEqual(r.start.1, "http://example.com/a?b=1")
        XCTAssertEqual(r.headers, [Header("Host", "example.com"), Header("X-Empty", ""), Header("Content-Length", "5")])
        XCTAssertEqual(try r.requestFraming(), .length(5))
        XCTAssertEqual(try head("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").requestFraming(), .chunked)
        XCTAssertEqual(try head("GET http://h/ HTTP/1.1\n\n").requestFraming(), .none, "bare LF lines are read")
        let ok = try head("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\n", request: false)
        XCTAssertEqual(try ok.responseFraming(requestMethod: "GET"), .length(2))
        XCTAssertEqual(try ok.responseFraming(requestMethod: "HEAD"), .none)
        XCTAssertEqual(try head("HTTP/1.0 200 OK\r\n\r\n", request: false).responseFraming(requestMethod: "GET"), .untilClose)
        XCTAssertEqual(try head("HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n", request: false).responseFraming(requestMethod: "GET"), .none)
    }

    func testWhatIsRefused() {
        XCTAssertEqual(refusal("POST http://h/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"),
                       "both Transfer-Encoding and Content-Length are set (refused: the two could disagree)")
        XCTAssertEqual(refusal("POST http://h/ HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n"), "Content-Length '3' is not one decimal number")
        XCTAssertEqual(refusal("POST http://h/ HTTP/1.1\r\nContent-Length: \r\n\r\n"), "Content-Length '' is not one decimal number")
        XCTAssertEqual(refusal("POST http://h/ HTTP/1.1\r\nContent-Length: +5\r\n\r\n"), "Content-Length '+5' is not one decimal number")
        XCTAssertEqual(refusal("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"), "Transfer-Encoding 'chunked, gzip' does not end in chunked")
        XCTAssertEqual(refusal("GET http://h/ HTTP/1.1\r\nBad Name: x\r\n\r\n"), "header line 1 has a name that is not a token (a space before the colon, or a folded line)")
        XCTAssertEqual(refusal("GET http://h/ HTTP/1.1\r\nA: 1\r\n folded\r\n\r\n"), "header line 2 has no colon")
        XCTAssertEqual(refusal("GET /x\r\n\r\n"), "the request line 'GET /x' is not 'METHOD target HTTP/1.1'")
        XCTAssertEqual(refusal("HTTP/1.1 2000 Big\r\n\r\n", request: false), "the status line 'HTTP/1.1 2000 Big' is not 'HTTP/1.1 200 OK'")
        var limits = HTTPLimits()
        limits.headBytes = 64
        let long = Array(("GET http://h/ HTTP/1.1\r\nX: " + String(repeating: "a", count: 100) + "\r\n\r\n").utf8)
        XCTAssertThrowsError(try HTTPHead.end(in: long[...], limits: limits)) { XCTAssertEqual(($0 as? HTTPMessageError)?.message, "the head (request line and headers) is over 64 bytes") }
        XCTAssertNil(try HTTPHead.end(in: Array("GET http://h/ HTTP/1.1\r\nX: 1\r\n".utf8)[...], limits: HTTPLimits()), "not all here yet")
    }

    func testChunkedBodiesDecodeTheSameHoweverTheyArrive() throws {
        let wire = Array("5;name=v\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT".utf8)
        for step in [1, 2, 3, 7, wire.count] {
            var decoder = ChunkedDecoder()
            var out: [UInt8] = []
            var used = 0
            var i = 0
            while i < wire.count && !decoder.isDone {
                let piece = Array(wire[i..<min(wire.count, i + step)])
                let n = try piece.withUnsafeBytes { try decoder.feed($0) { out.append(contentsOf: $0) } }
                used += n
                i += step
            }
            XCTAssertEqual(String(decoding: out, as: UTF8.self), "hello world", "step \(step)")
            XCTAssertTrue(decoder.isDone)
            XCTAssertEqual(used, wire.count - 4, "NEXT belongs to the next message (step \(step))")
        }
        func refused(_ text: String) -> String? {
            var decoder = ChunkedDecoder()
            do { _ = try Array(text.utf8).withUnsafeBytes { try decoder.feed($0) { _ in } } } catch let e as HTTPMessageError { return e.message } catch { return "\(error)" }
            return nil
        }
        XCTAssertEqual(refused("zz\r\n"), "a chunk size has the character 'z'")
        XCTAssertEqual(refused("10000000000000000\r\n"), "a chunk size is not 1–16 hex digits")
        XCTAssertEqual(refused("3\r\nabcX\r\n"), "a chunk's data is not followed by CRLF")
        XCTAssertEqual(refused("7fffffffffffffff\r\n"), "the chunked body is larger than 2^63 bytes")
    }
}
