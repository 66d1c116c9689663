import Foundation
import XCTest
import CPincerSDK

/// The headers are the product: they must compile warning-free as C11 and
/// as C++, and the record layouts must not move.
final class SDKTests: XCTestCase {
    func compile(_ compiler: String, _ flags: [String], source: String, ext: String) throws -> Fixture.ProcessResult {
        let dir = Fixture.temporaryDirectory("pincer-sdk")
        let file = "\(dir)/check.\(ext)"
        try source.write(toFile: file, atomically: true, encoding: .utf8)
        return try Fixture.run(compiler, flags + ["-Wall", "-Wextra", "-pedantic", "-Werror", "-I", Fixture.sdkInclude,
                                                  "-fsyntax-only", file])
    }

    func testHeadersCompileAsC11AndCxx() throws {
        // Every header on its own, then the umbrella.
        let headers = ["pincer/version.h", "pincer/call.h", "pincer/command.h", "pincer/menu.h", "pincer/host.h",
                       "pincer/service.h", "pincer/entry.h", "pincer/flags.h", "pincer/servers.h", "pincer/network.h", "pincer/l10n.h", "pincer/location.h", "pincer/database.h", "pincer/embed.h", "pincer.h"]
        for header in headers {
            let source = "#include <\(header)>\nint main(void) { return 0; }\n"
            let c = try compile("/usr/bin/cc", ["-std=c11"], source: source, ext: "c")
            XCTAssertEqual(c.status, 0, "\(header) as C11: \(c.stderr)")
            let cxx = try compile("/usr/bin/g++", ["-std=c++11", "-x", "c++"], source: source, ext: "cpp")
            XCTAssertEqual(cxx.status, 0, "\(header) as C++11: \(cxx.stderr)")
        }
    }

    /// Version 1.0 layouts (x86_64/aarch64 LP64). Appending slots grows
    /// these; a change to an existing offset is a broken ABI.
    func testVersion1LayoutIsStable() {
        XCTAssertEqual(MemoryLayout<pincer_plugin_t>.offset(of: \.magic), 0)
        XCTAssertEqual(MemoryLayout<pincer_plugin_t>.offset(of: \.abi_major), 4)
        XCTAssertEqual(MemoryLayout<pincer_plugin_t>.offset(of: \.abi_minor), 8)
        XCTAssertEqual(MemoryLayout<pincer_plugin_t>.offset(of: \.struct_size), 12)
        XCTAssertEqual(MemoryLayout<pincer_plugin_t>.offset(of: \.id), 16)
        XCTAssertEqual(MemoryLayout<pincer_plugin_t>.offset(of: \.shutdown), 72)
        XCTAssertEqual(MemoryLayout<pincer_plugin_t>.offset(of: \.sync_entries), 80) // 1.5
        XCTAssertEqual(MemoryLayout<pincer_plugin_t>.size, 88)
        XCTAssertEqual(MemoryLayout<pincer_host_t>.offset(of: \.log), 40)
        XCTAssertEqual(MemoryLayout<pincer_host_t>.offset(of: \.last_error), 128)
        // 1.1 appended update_entry.
        XCTAssertEqual(MemoryLayout<pincer_host_t>.offset(of: \.update_entry), 136)
        XCTAssertEqual(MemoryLayout<pincer_host_t>.offset(of: \.state_directory), 144)
        // 1.4 appended settings_update and settings_list.
        XCTAssertEqual(MemoryLayout<pincer_host_t>.offset(of: \.settings_update), 152)
        XCTAssertEqual(MemoryLayout<pincer_host_t>.offset(of: \.settings_list), 160)
        XCTAssertEqual(MemoryLayout<pincer_host_t>.size, 168)
        XCTAssertEqual(MemoryLayout<pincer_call_t>.offset(of: \.output), 40) // 1.1
        XCTAssertEqual(MemoryLayout<pincer_call_t>.offset(of: \.output_format), 48) // 1.3
        XCTAssertEqual(MemoryLayout<pincer_call_t>.offset(of: \.is_cancelled), 56) // 1.4
        XCTAssertEqual(MemoryLayout<pincer_call_t>.offset(of: \.ask), 64) // 1.7
        XCTAssertEqual(MemoryLayout<pincer_call_t>.size, 72)
        XCTAssertEqual(MemoryLayout<pincer_command_t>.size, 56)
        // 1.1 appended set.
        XCTAssertEqual(MemoryLayout<pincer_entry_t>.offset(of: \.set), 96)
        XCTAssertEqual(MemoryLayout<pincer_entry_t>.size, 104)
        XCTAssertEqual(MemoryLayout<pincer_section_t>.size, 24)
        XCTAssertEqual(MemoryLayout<pincer_value_t>.size, 16)
        XCTAssertEqual(PINCER_PLUGIN_MAGIC, 0x52434E50)
        // Service tables of the built-in plugins, version 1.0 of each id.
        XCTAssertEqual(MemoryLayout<pincer_flags_service_t>.offset(of: \.register_bool), 16)
        XCTAssertEqual(MemoryLayout<pincer_flags_service_t>.size, 128)
        XCTAssertEqual(MemoryLayout<pincer_servers_service_t>.offset(of: \.register_environment), 16)
        XCTAssertEqual(MemoryLayout<pincer_servers_service_t>.size, 88)
        XCTAssertEqual(MemoryLayout<pincer_network_request_t>.size, 64)
        XCTAssertEqual(MemoryLayout<pincer_network_response_t>.offset(of: \.timings), 72)
        XCTAssertEqual(MemoryLayout<pincer_network_response_t>.size, 128)
        XCTAssertEqual(MemoryLayout<pincer_network_service_t>.offset(of: \.add_redact_name), 56, "1.4 appended add_redact_name after the 1.0 table")
        XCTAssertEqual(MemoryLayout<pincer_network_service_t>.offset(of: \.intercept_request), 64, "1.6 appended interception after add_redact_name")
        XCTAssertEqual(MemoryLayout<pincer_network_service_t>.offset(of: \.await_release), 112, "1.7 appended await_release after remove_transient_rule")
        XCTAssertEqual(MemoryLayout<pincer_network_service_t>.offset(of: \.set_replayer), 120)
        XCTAssertEqual(MemoryLayout<pincer_network_service_t>.size, 128)
        XCTAssertEqual(MemoryLayout<pincer_network_decision_t>.offset(of: \.request), 8)
        XCTAssertEqual(MemoryLayout<pincer_network_decision_t>.offset(of: \.response), 72)
        XCTAssertEqual(MemoryLayout<pincer_network_decision_t>.offset(of: \.accepts), 256, "1.7 appended accepts and held")
        XCTAssertEqual(MemoryLayout<pincer_network_decision_t>.size, 264)
        XCTAssertEqual(MemoryLayout<pincer_l10n_service_t>.offset(of: \.transform), 16)
        XCTAssertEqual(MemoryLayout<pincer_l10n_service_t>.size, 64)
        XCTAssertEqual(MemoryLayout<pincer_location_fix_t>.size, 64)
        XCTAssertEqual(MemoryLayout<pincer_location_service_t>.offset(of: \.is_spoofing), 16)
        XCTAssertEqual(MemoryLayout<pincer_location_service_t>.size, 96)
    }
    /// "Only grows at its end": every 1.0 record, as the real 1.0 headers
    /// (Tests/Fixtures/sdk-1.0, from git history) lay it out, has each of
    /// its fields at the same offset in the current headers, and the
    /// current record is at least as large.
    func testEvery10FieldKeepsItsOffset() throws {
        let dir = Fixture.temporaryDirectory("pincer-sdk-1.0")
        let source = """
            #include <pincer.h>
            #include <stdio.h>
            #define S(type) printf(#type " %zu\\n", sizeof(type))
            #define F(type, field) printf(#type "." #field " %zu\\n", offsetof(type, field))
            int main(void) {
                S(pincer_plugin_t);
                F(pincer_plugin_t, magic);
                F(pincer_plugin_t, abi_major);
                F(pincer_plugin_t, abi_minor);
                F(pincer_plugin_t, struct_size);
                F(pincer_plugin_t, id);
                F(pincer_plugin_t, short_name);
                F(pincer_plugin_t, name);
                F(pincer_plugin_t, version);
                F(pincer_plugin_t, summary);
                F(pincer_plugin_t, context);
                F(pincer_plugin_t, init);
                F(pincer_plugin_t, shutdown);
                S(pincer_host_t);
                F(pincer_host_t, struct_size);
                F(pincer_host_t, abi_major);
                F(pincer_host_t, abi_minor);
                F(pincer_host_t, reserved);
                F(pincer_host_t, host_data);
                F(pincer_host_t, host_name);
                F(pincer_host_t, host_version);
                F(pincer_host_t, log);
                F(pincer_host_t, add_section);
                F(pincer_host_t, add_entry);
                F(pincer_host_t, add_command);
                F(pincer_host_t, settings_get);
                F(pincer_host_t, settings_set);
                F(pincer_host_t, emit);
                F(pincer_host_t, subscribe);
                F(pincer_host_t, unsubscribe);
                F(pincer_host_t, publish_service);
                F(pincer_host_t, get_service);
                F(pincer_host_t, last_error);
                S(pincer_call_t);
                F(pincer_call_t, struct_size);
                F(pincer_call_t, reserved);
                F(pincer_call_t, host_data);
                F(pincer_call_t, fail);
                F(pincer_call_t, return_string);
                F(pincer_call_t, add_row);
                S(pincer_command_t);
                F(pincer_command_t, struct_size);
                F(pincer_command_t, flags);
                F(pincer_command_t, signature);
                F(pincer_command_t, summary);
                F(pincer_command_t, details);
                F(pincer_command_t, typed);
                F(pincer_command_t, values);
                F(pincer_command_t, context);
                S(pincer_entry_t);
                F(pincer_entry_t, struct_size);
                F(pincer_entry_t, kind);
                F(pincer_entry_t, id);
                F(pincer_entry_t, section);
                F(pincer_entry_t, title);
                F(pincer_entry_t, summary);
                F(pincer_entry_t, context);
                F(pincer_entry_t, read);
                F(pincer_entry_t, changed);
                F(pincer_entry_t, default_value);
                F(pincer_entry_t, choices);
                F(pincer_entry_t, choice_count);
                F(pincer_entry_t, flags);
                F(pincer_entry_t, command);
                S(pincer_section_t);
                F(pincer_section_t, struct_size);
                F(pincer_section_t, order);
                F(pincer_section_t, id);
                F(pincer_section_t, title);
                S(pincer_value_t);
                F(pincer_value_t, type);
                F(pincer_value_t, reserved);
                F(pincer_value_t, as);
                S(pincer_service_header_t);
                F(pincer_service_header_t, struct_size);
                F(pincer_service_header_t, version_minor);
                F(pincer_service_header_t, context);
                return 0;
            }

            """
        try source.write(toFile: "\(dir)/layout.c", atomically: true, encoding: .utf8)
        let cc = try Fixture.run("/usr/bin/cc", ["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror",
                                                 "-I", "\(Fixture.packageRoot)/Tests/Fixtures/sdk-1.0/include", "\(dir)/layout.c", "-o", "\(dir)/layout"])
        XCTAssertEqual(cc.status, 0, cc.stderr)
        let printed = try Fixture.run("\(dir)/layout", [])
        XCTAssertEqual(printed.status, 0, printed.stderr)
        let old = Dictionary(uniqueKeysWithValues: printed.stdout.split(separator: "\n").map { line -> (String, Int) in
            let parts = line.split(separator: " ")
            return (String(parts[0]), Int(parts[1]) ?? -1)
        })
        let current: [(String, Int?)] = [
            ("pincer_plugin_t.magic", MemoryLayout<pincer_plugin_t>.offset(of: \.magic)),
            ("pincer_plugin_t.abi_major", MemoryLayout<pincer_plugin_t>.offset(of: \.abi_major)),
            ("pincer_plugin_t.abi_minor", MemoryLayout<pincer_plugin_t>.offset(of: \.abi_minor)),
            ("pincer_plugin_t.struct_size", MemoryLayout<pincer_plugin_t>.offset(of: \.struct_size)),
            ("pincer_plugin_t.id", MemoryLayout<pincer_plugin_t>.offset(of: \.id)),
            ("pincer_plugin_t.short_name", MemoryLayout<pincer_plugin_t>.offset(of: \.short_name)),
            ("pincer_plugin_t.name", MemoryLayout<pincer_plugin_t>.offset(of: \.name)),
            ("pincer_plugin_t.version", MemoryLayout<pincer_plugin_t>.offset(of: \.version)),
            ("pincer_plugin_t.summary", MemoryLayout<pincer_plugin_t>.offset(of: \.summary)),
            ("pincer_plugin_t.context", MemoryLayout<pincer_plugin_t>.offset(of: \.context)),
            ("pincer_plugin_t.init", MemoryLayout<pincer_plugin_t>.offset(of: \.`init`)),
            ("pincer_plugin_t.shutdown", MemoryLayout<pincer_plugin_t>.offset(of: \.shutdown)),
            ("pincer_plugin_t", MemoryLayout<pincer_plugin_t>.size),
            ("pincer_host_t.struct_size", MemoryLayout<pincer_host_t>.offset(of: \.struct_size)),
            ("pincer_host_t.abi_major", MemoryLayout<pincer_host_t>.offset(of: \.abi_major)),
            ("pincer_host_t.abi_minor", MemoryLayout<pincer_host_t>.offset(of: \.abi_minor)),
            ("pincer_host_t.reserved", MemoryLayout<pincer_host_t>.offset(of: \.reserved)),
            ("pincer_host_t.host_data", MemoryLayout<pincer_host_t>.offset(of: \.host_data)),
            ("pincer_host_t.host_name", MemoryLayout<pincer_host_t>.offset(of: \.host_name)),
            ("pincer_host_t.host_version", MemoryLayout<pincer_host_t>.offset(of: \.host_version)),
            ("pincer_host_t.log", MemoryLayout<pincer_host_t>.offset(of: \.log)),
            ("pincer_host_t.add_section", MemoryLayout<pincer_host_t>.offset(of: \.add_section)),
            ("pincer_host_t.add_entry", MemoryLayout<pincer_host_t>.offset(of: \.add_entry)),
            ("pincer_host_t.add_command", MemoryLayout<pincer_host_t>.offset(of: \.add_command)),
            ("pincer_host_t.settings_get", MemoryLayout<pincer_host_t>.offset(of: \.settings_get)),
            ("pincer_host_t.settings_set", MemoryLayout<pincer_host_t>.offset(of: \.settings_set)),
            ("pincer_host_t.emit", MemoryLayout<pincer_host_t>.offset(of: \.emit)),
            ("pincer_host_t.subscribe", MemoryLayout<pincer_host_t>.offset(of: \.subscribe)),
            ("pincer_host_t.unsubscribe", MemoryLayout<pincer_host_t>.offset(of: \.unsubscribe)),
            ("pincer_host_t.publish_service", MemoryLayout<pincer_host_t>.offset(of: \.publish_service)),
            ("pincer_host_t.get_service", MemoryLayout<pincer_host_t>.offset(of: \.get_service)),
            ("pincer_host_t.last_error", MemoryLayout<pincer_host_t>.offset(of: \.last_error)),
            ("pincer_host_t", MemoryLayout<pincer_host_t>.size),
            ("pincer_call_t.struct_size", MemoryLayout<pincer_call_t>.offset(of: \.struct_size)),
            ("pincer_call_t.reserved", MemoryLayout<pincer_call_t>.offset(of: \.reserved)),
            ("pincer_call_t.host_data", MemoryLayout<pincer_call_t>.offset(of: \.host_data)),
            ("pincer_call_t.fail", MemoryLayout<pincer_call_t>.offset(of: \.fail)),
            ("pincer_call_t.return_string", MemoryLayout<pincer_call_t>.offset(of: \.return_string)),
            ("pincer_call_t.add_row", MemoryLayout<pincer_call_t>.offset(of: \.add_row)),
            ("pincer_call_t", MemoryLayout<pincer_call_t>.size),
            ("pincer_command_t.struct_size", MemoryLayout<pincer_command_t>.offset(of: \.struct_size)),
            ("pincer_command_t.flags", MemoryLayout<pincer_command_t>.offset(of: \.flags)),
            ("pincer_command_t.signature", MemoryLayout<pincer_command_t>.offset(of: \.signature)),
            ("pincer_command_t.summary", MemoryLayout<pincer_command_t>.offset(of: \.summary)),
            ("pincer_command_t.details", MemoryLayout<pincer_command_t>.offset(of: \.details)),
            ("pincer_command_t.typed", MemoryLayout<pincer_command_t>.offset(of: \.typed)),
            ("pincer_command_t.values", MemoryLayout<pincer_command_t>.offset(of: \.values)),
            ("pincer_command_t.context", MemoryLayout<pincer_command_t>.offset(of: \.context)),
            ("pincer_command_t", MemoryLayout<pincer_command_t>.size),
            ("pincer_entry_t.struct_size", MemoryLayout<pincer_entry_t>.offset(of: \.struct_size)),
            ("pincer_entry_t.kind", MemoryLayout<pincer_entry_t>.offset(of: \.kind)),
            ("pincer_entry_t.id", MemoryLayout<pincer_entry_t>.offset(of: \.id)),
            ("pincer_entry_t.section", MemoryLayout<pincer_entry_t>.offset(of: \.section)),
            ("pincer_entry_t.title", MemoryLayout<pincer_entry_t>.offset(of: \.title)),
            ("pincer_entry_t.summary", MemoryLayout<pincer_entry_t>.offset(of: \.summary)),
            ("pincer_entry_t.context", MemoryLayout<pincer_entry_t>.offset(of: \.context)),
            ("pincer_entry_t.read", MemoryLayout<pincer_entry_t>.offset(of: \.read)),
            ("pincer_entry_t.changed", MemoryLayout<pincer_entry_t>.offset(of: \.changed)),
            ("pincer_entry_t.default_value", MemoryLayout<pincer_entry_t>.offset(of: \.default_value)),
            ("pincer_entry_t.choices", MemoryLayout<pincer_entry_t>.offset(of: \.choices)),
            ("pincer_entry_t.choice_count", MemoryLayout<pincer_entry_t>.offset(of: \.choice_count)),
            ("pincer_entry_t.flags", MemoryLayout<pincer_entry_t>.offset(of: \.flags)),
            ("pincer_entry_t.command", MemoryLayout<pincer_entry_t>.offset(of: \.command)),
            ("pincer_entry_t", MemoryLayout<pincer_entry_t>.size),
            ("pincer_section_t.struct_size", MemoryLayout<pincer_section_t>.offset(of: \.struct_size)),
            ("pincer_section_t.order", MemoryLayout<pincer_section_t>.offset(of: \.order)),
            ("pincer_section_t.id", MemoryLayout<pincer_section_t>.offset(of: \.id)),
            ("pincer_section_t.title", MemoryLayout<pincer_section_t>.offset(of: \.title)),
            ("pincer_section_t", MemoryLayout<pincer_section_t>.size),
            ("pincer_value_t.type", MemoryLayout<pincer_value_t>.offset(of: \.type)),
            ("pincer_value_t.reserved", MemoryLayout<pincer_value_t>.offset(of: \.reserved)),
            ("pincer_value_t.as", MemoryLayout<pincer_value_t>.offset(of: \.as)),
            ("pincer_value_t", MemoryLayout<pincer_value_t>.size),
            ("pincer_service_header_t.struct_size", MemoryLayout<pincer_service_header_t>.offset(of: \.struct_size)),
            ("pincer_service_header_t.version_minor", MemoryLayout<pincer_service_header_t>.offset(of: \.version_minor)),
            ("pincer_service_header_t.context", MemoryLayout<pincer_service_header_t>.offset(of: \.context)),
            ("pincer_service_header_t", MemoryLayout<pincer_service_header_t>.size),
        ]
        XCTAssertEqual(Set(current.map(\.0)), Set(old.keys), "the same records and fields on both sides")
        for (name, now) in current {
            guard let was = old[name] else { continue }
            if name.contains(".") {
                XCTAssertEqual(now, was, "\(name) moved: 1.0 had it at offset \(was)")
            } else {
                XCTAssertGreaterThanOrEqual(now ?? 0, was, "\(name) shrank below its 1.0 size")
            }
        }
    }
}
