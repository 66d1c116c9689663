import Foundation
import XCTest
@testable import PincerHost

/// The servers plugin through the real host, with the C fixture as the app.
final class ServersTests: XCTestCase {
    func testSwitchingNotifiesTheCSubscriberAndTheEvent() throws {
        let app = AppHost()
        XCTAssertEqual(try app.text("app.current"), "production https://api.example.com")
        XCTAssertEqual(try app.text("app.all-vars"), "2:API_URL=https://api.example.com,REGION=eu")
        // The first registration made production current.
        XCTAssertEqual(try app.text("app.changes", "service"), "(none)->production")

        XCTAssertEqual(try app.text("app.use", "staging"), "ok")
        XCTAssertEqual(try app.text("app.current"), "staging https://staging.example.com")
        XCTAssertEqual(try app.text("app.all-vars"), "1:API_URL=https://staging.example.com")
        XCTAssertEqual(try app.text("app.changes", "service"), "(none)->production;production->staging")
        XCTAssertEqual(try app.text("app.changes", "event"),
                       #"{"from":null,"to":"production"};{"from":"production","to":"staging"}"#)

        // Unknown ids are refused and change nothing; using the current one notifies nobody.
        XCTAssertEqual(try app.text("app.use", "qa"), "no server environment 'qa' (registered: production, staging)")
        XCTAssertTrue(app.failure("servers.use", "qa").contains("no server environment 'qa'"))
        XCTAssertEqual(try app.text("app.use", "staging"), "ok")
        XCTAssertEqual(try app.text("servers.current"), "staging")
        XCTAssertEqual(try app.text("app.changes", "service"), "(none)->production;production->staging")

        // The shell command goes through the same path.
        XCTAssertEqual(try app.text("servers.use", "production"), "staging -> production")
        XCTAssertEqual(try app.text("app.changes", "service"), "(none)->production;production->staging;staging->production")
    }

    func testChoiceAndVariablesSurviveARestart() throws {
        let app = AppHost()
        try app.run("servers.use", "staging")
        app.restart(withApp: false)
        // Without the app, the shell still sees the registered environments and the choice.
        XCTAssertEqual(try app.text("servers.current"), "staging")
        XCTAssertEqual(try app.json("servers.vars"), .object([("API_URL", .string("https://staging.example.com"))]))
        XCTAssertEqual(try app.text("servers.get", "API_URL"), "https://staging.example.com")
        XCTAssertTrue(app.failure("servers.get", "REGION").contains("environment 'staging' has no variable REGION (has: API_URL)"))
        let list = try app.json("servers.list").arrayValue ?? []
        XCTAssertEqual(list.compactMap { $0["id"]?.stringValue }, ["production", "staging"])
        XCTAssertEqual(list.compactMap { $0["current"]?.boolValue }, [false, true])
        app.restart()
        XCTAssertEqual(try app.text("app.current"), "staging https://staging.example.com")
    }

    func testMenuChooserFollowsNewEnvironments() throws {
        let app = AppHost()
        let h = app.host
        let chooser = try XCTUnwrap(h.entry(id: "servers.current"))
        XCTAssertEqual(chooser.choices, ["production", "staging"])
        try h.setPinned(true, chooser)
        try app.run("servers.register", "local", "Local", #"{"API_URL": "http://127.0.0.1:8080"}"#)
        // Updated in place: new choices, same place, still pinned.
        let updated = try XCTUnwrap(h.entry(id: "servers.current"))
        XCTAssertEqual(updated.choices, ["production", "staging", "local"])
        XCTAssertEqual(h.entries(inSection: "servers").map(\.fullID),
                       ["servers.current", "servers.variables", "servers.environment-variables"])
        XCTAssertEqual(h.entries(inSection: "pinned").map(\.fullID), ["servers.current"])
        try h.setValue("local", of: updated)
        XCTAssertEqual(h.state(of: updated), .pluginValue("local", details: [MenuRow(title: "name", value: "Local")]))
        XCTAssertEqual(try app.text("app.current"), "local http://127.0.0.1:8080")
        XCTAssertEqual(h.state(of: try XCTUnwrap(h.entry(id: "servers.environment-variables"))),
                       .rows([MenuRow(title: "Build", value: "1.2.3 (456)")]))
        XCTAssertEqual(try app.json("servers.display"), .object([("Build", .string("1.2.3 (456)"))]))
    }

    func testBadRegistrationsNameTheProblem() throws {
        let app = AppHost(withApp: false)
        XCTAssertTrue(app.failure("servers.register", "Prod", "P").contains("environment id 'Prod' is not [a-z][a-z0-9_-]*"))
        XCTAssertTrue(app.failure("servers.register", "prod", "P", #"{"API-URL": "x"}"#)
            .contains("variable name 'API-URL' is not a shell name"))
        XCTAssertTrue(app.failure("servers.register", "prod", "P", #"{"PORT": 8080}"#).contains("variable PORT must be a string, found number"))
        XCTAssertTrue(app.failure("servers.register", "prod", "P", "{nope").contains("variables: line 1, column 2"))
        XCTAssertTrue(app.failure("servers.current").contains("no server environment is registered"))
    }

    /// `eval "$(pincer run servers.env)"` in a real shell gets every value back byte for byte.
    func testEnvOutputIsSafeToEval() throws {
        let state = Fixture.temporaryDirectory("pincer-servers-env")
        let tricky = #"it's "quoted" $(touch /tmp/pincer-pwned) `x` \n; done"#
        let vars = JSON.object([("API_URL", .string("https://x.example.com/a?b=c&d")), ("TRICKY", .string(tricky))]).serialized()
        XCTAssertEqual(try Fixture.pincer(["run", "servers.register", "qa", "QA", vars], stateDir: state).status, 0)
        let script = #"eval "$("$0" run servers.env)" && printf '%s|%s' "$API_URL" "$TRICKY""#
        let result = try Fixture.run("/bin/sh", ["-c", script, Fixture.pincer], environment: ["PINCER_STATE_DIR": state])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "https://x.example.com/a?b=c&d|" + tricky)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/pincer-pwned"))
    }
}

/// The ABI 1.1 additions (plugin-valued entries, update_entry, JSON results)
/// as a C plugin sees them.
final class ABIAdditionsTests: XCTestCase {
    func testRefusalsNameTheProblem() throws {
        let app = AppHost()
        let lines = try app.text("app.abi-checks").split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 6, "\(lines)")
        guard lines.count == 6 else { return }
        XCTAssertEqual(lines[0], "2:add_entry 'pv-old': a PINCER_ENTRY_PLUGIN_VALUE entry needs read and set callbacks (set is an ABI 1.1 slot; struct_size 96)")
        XCTAssertEqual(lines[1], "2:add_entry 'pv-value': PINCER_ENTRY_PLUGIN_VALUE applies to toggle, choice and text entries, not value")
        XCTAssertEqual(lines[2], "3:update_entry 'missing': the plugin has no entry with this id (add it with add_entry first)")
        XCTAssertEqual(lines[3], "2:update_entry 'old': kind toggle differs from the registered value")
        XCTAssertEqual(lines[4], "0:")
        XCTAssertEqual(lines[5], "2:add_command 'scalar': PINCER_COMMAND_JSON_RESULT needs a `-> string` result, not i32")
        // The 1.0-sized entry record works, and the update took effect in place.
        let old = try XCTUnwrap(app.host.entry(id: "app.old"))
        XCTAssertEqual(old.title, "Renamed")
        XCTAssertEqual(app.host.state(of: old), .value("1.0 record"))
        // A JSON result that does not parse is the command's failure, with the place.
        let command = try XCTUnwrap(app.host.command(named: "app.bad-json"))
        XCTAssertThrowsError(try command.jsonResult(command.invoke([]))) { error in
            XCTAssertEqual((error as? CommandFailure)?.message.hasPrefix("app.bad-json returned a result that is not valid JSON (line 1, column 16"), true,
                           "\(error)")
        }
    }
}
