import Foundation
import XCTest
@testable import PincerControl
@testable import PincerControlServer
@testable import PincerHost

/// JSON-RPC `cancel` reaches the plugin (pincer_call_t.is_cancelled, ABI
/// 1.4): a cancelled `loc.play --loop` stops, so its plugin is free again.
/// A real host with the built-in plugins, a ControlServer and a client on
/// a real Unix socket.
final class ControlCancelTests: XCTestCase {
    var host: PincerHost.Host!
    var server: ControlServer?

    override func setUpWithError() throws {
        let runtime = Fixture.temporaryDirectory("pincer-ctl-cancel")
        var options = PincerHost.Host.Options(stateDirectory: Fixture.temporaryDirectory("pincer-ctl-cancel-state"))
        options.builtinDirectory = Fixture.buildDirectory
        options.logHandler = { _ in }
        host = PincerHost.Host(options: options)
        host.loadAll()
        var control = ControlOptions(appName: "Cancel Test")
        control.directory = runtime + "/pincer"
        server = try ControlServer(host: host, options: control)
    }

    override func tearDown() {
        server?.stop()
        host.shutdown() // waits for the location plugin: it would never return if the play ran on
    }

    /// Reproducer: before, `cancel` only dropped the response; `loc.play
    /// --loop` kept the location plugin (its calls are serialised), so the
    /// next location command waited for ever. Now the play stops and the
    /// next call is answered at once, for `invoke` and for `shell` alike.
    func testCancelStopsTheCommandAndFreesItsPlugin() throws {
        let server = try XCTUnwrap(server)
        let seen = NotificationLog()
        let c = try ControlClient(path: server.socketPath, timeoutMilliseconds: 10_000) { seen.add($0) }
        let requests: [(ControlProtocol.Method, JSON)] = [
            (.invoke, .object([("command", .string("loc.play")),
                               ("arguments", .object([("route", .string("city-run")), ("loop", .bool(true)), ("rate", .int(50))]))])),
            (.shell, .object([("argv", .array(["loc.play", "city-run", "--loop", "--rate", "50"].map(JSON.string)))])),
        ]
        for (method, params) in requests {
            let id = try c.send(method, params)
            let deadline = Date().addingTimeInterval(10)
            while !seen.all.contains(where: { $0.kind == .output && $0.params["id"] == .int(id) }) && Date() < deadline {
                try c.hello()
                usleep(5_000)
            }
            XCTAssertTrue(seen.all.contains { $0.kind == .output && $0.params["id"] == .int(id) }, "\(method): no fix was played")
            XCTAssertEqual(try c.call(.cancel, .object([("id", .int(id))])), .object([("cancelled", .bool(true))]))
            let started = Date()
            let routes = try c.call(.invoke, .object([("command", .string("loc.routes"))]))
            XCTAssertNotNil(routes["result"], "\(method)")
            XCTAssertLessThan(Date().timeIntervalSince(started), 1.0, "\(method): the location plugin was still playing")
        }
    }
}
