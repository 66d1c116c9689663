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
        XCTAssertEqual(MemoryLayout<pincer_plugin_t>.size, 80)
        XCTAssertEqual(MemoryLayout<pincer_host_t>.offset(of: \.log), 40)
        XCTAssertEqual(MemoryLayout<pincer_host_t>.offset(of: \.last_error), 128)
        // 1.1 appended update_entry.
        XCTAssertEqual(MemoryLayout<pincer_host_t>.offset(of: \.update_entry), 136)
        XCTAssertEqual(MemoryLayout<pincer_host_t>.offset(of: \.state_directory), 144)
        XCTAssertEqual(MemoryLayout<pincer_host_t>.size, 152)
        XCTAssertEqual(MemoryLayout<pincer_call_t>.offset(of: \.output), 40) // 1.1
        XCTAssertEqual(MemoryLayout<pincer_call_t>.offset(of: \.output_format), 48) // 1.3
        XCTAssertEqual(MemoryLayout<pincer_call_t>.size, 56)
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
        XCTAssertEqual(MemoryLayout<pincer_network_service_t>.size, 56)
        XCTAssertEqual(MemoryLayout<pincer_l10n_service_t>.offset(of: \.transform), 16)
        XCTAssertEqual(MemoryLayout<pincer_l10n_service_t>.size, 64)
        XCTAssertEqual(MemoryLayout<pincer_location_fix_t>.size, 64)
        XCTAssertEqual(MemoryLayout<pincer_location_service_t>.offset(of: \.is_spoofing), 16)
        XCTAssertEqual(MemoryLayout<pincer_location_service_t>.size, 96)
    }
}
