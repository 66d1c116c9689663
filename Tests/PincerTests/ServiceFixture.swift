import Foundation
import XCTest
@testable import PincerHost

/// A host with the built-in plugins (flags, servers, ...) and the C "app"
/// fixture that uses their services, sharing one state directory across
/// restarts.
final class AppHost {
    static let appPlugin: String = {
        let dir = Fixture.temporaryDirectory("pincer-app-plugin")
        return try! Fixture.buildPlugin("app_client", into: dir, extraFlags: ["-pthread"])
    }()

    let stateDirectory: String
    private(set) var host: PincerHost.Host
    let logs = LogCollector()

    init(stateDirectory: String = Fixture.temporaryDirectory("pincer-app-state"), withApp: Bool = true) {
        self.stateDirectory = stateDirectory
        host = AppHost.start(stateDirectory, withApp: withApp, logs: logs)
    }

    private static func start(_ state: String, withApp: Bool, logs: LogCollector) -> PincerHost.Host {
        var options = PincerHost.Host.Options(stateDirectory: state)
        options.builtinDirectory = Fixture.buildDirectory
        options.pluginPaths = withApp ? [appPlugin] : []
        options.logHandler = { logs.append($0) }
        let host = PincerHost.Host(options: options)
        host.loadAll()
        return host
    }

    /// Shuts the host down and starts a new one on the same store: what a
    /// restart of the app looks like.
    func restart(withApp: Bool = true) {
        host.shutdown()
        host = AppHost.start(stateDirectory, withApp: withApp, logs: logs)
    }

    /// The command and its arguments: text converted by the signature,
    /// defaults filled in; words beyond the other parameters become the
    /// items of a rest parameter (`name: string...`).
    private func prepare(_ name: String, _ words: [String]) throws -> (Command, [Value]) {
        guard let command = host.command(named: name) else {
            throw HostError(kind: .notFound, message: "no command \(name); refused plugins: \(host.failures.map(\.reason))")
        }
        var values: [Value] = []
        let fixed = command.signature.fixedParameters
        for (i, p) in fixed.enumerated() {
            if i < words.count {
                guard case .success(let v) = ValueConversion.convert(words[i], to: p.type) else {
                    throw HostError(kind: .invalidArgument, message: "'\(words[i])' is not \(p.type)")
                }
                values.append(v)
            } else if let d = p.defaultValue {
                values.append(d)
            }
        }
        if command.signature.restParameter != nil {
            values += words.dropFirst(fixed.count).map(Value.string)
        }
        return (command, values)
    }

    /// Runs a command; returns its result.
    @discardableResult
    func run(_ name: String, _ words: String...) throws -> Value {
        let (command, values) = try prepare(name, words)
        return try command.invoke(values)
    }

    /// Runs a command whose result is a string.
    func text(_ name: String, _ words: String...) throws -> String {
        try text(name, words)
    }

    func text(_ name: String, _ words: [String]) throws -> String {
        let (command, values) = try prepare(name, words)
        guard case .string(let s) = try command.invoke(values) else { throw HostError(kind: .failed, message: "\(name): not a string result") }
        return s
    }

    /// Runs a JSON-result command; returns its document.
    func json(_ name: String, _ words: String...) throws -> JSON {
        let (command, values) = try prepare(name, words)
        return try command.jsonResult(command.invoke(values))
    }

    /// The message of a command that must fail.
    func failure(_ name: String, _ words: String..., file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let (command, values) = try prepare(name, words)
            let v = try command.invoke(values)
            XCTFail("\(name) \(words) succeeded with \(v)", file: file, line: line)
            return ""
        } catch let error as CommandFailure {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    deinit { host.shutdown() }
}
