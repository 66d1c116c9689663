// The demo's own HTTP server: 127.0.0.1 on a port the kernel picks, one
// thread, one request per connection. GET /<environment> answers 200 with
// {"environment":"<environment>"}; anything else 404.
import Foundation

final class LocalServer: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LocalServer.error("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else {
            defer { close(fd) }
            throw LocalServer.error("cannot listen on 127.0.0.1")
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in serve() }
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    private func serve() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return // closed by stop()
            }
            answer(client)
            close(client)
        }
    }

    private func answer(_ client: Int32) {
        var head = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !head.ends(with: Array("\r\n\r\n".utf8)) && head.count < 65536 {
            let n = read(client, &chunk, chunk.count)
            guard n > 0 else { return }
            head += chunk[0..<n]
        }
        // "GET /production HTTP/1.1"
        let requestLine = String(decoding: head.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        let path = requestLine.count >= 2 ? String(requestLine[1].dropFirst()) : ""
        let found = requestLine.first == "GET" && !path.isEmpty && path.allSatisfy { $0.isLetter || $0 == "-" }
        // Whether the session's credentials came along (net.replay leaves the logged, redacted one out).
        let authorized = String(decoding: head, as: UTF8.self).lowercased().contains("\r\nauthorization: ")
        let body = found ? #"{"environment":"\#(path)","authorized":\#(authorized)}"# : #"{"error":"not found"}"#
        let response = "HTTP/1.1 \(found ? "200 OK" : "404 Not Found")\r\nContent-Type: application/json\r\n" +
            "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        _ = Array(response.utf8).withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func error(_ what: String) -> NSError {
        NSError(domain: "pincer-demo", code: Int(errno), userInfo: [NSLocalizedDescriptionKey: "\(what): \(String(cString: strerror(errno)))"])
    }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
