// swift-tools-version:6.0
// Pincer: a plugin host for developer tools. See README.md.
import PackageDescription

let root = Context.packageDirectory

// Plugins export exactly one symbol (pincer_plugin_entry); the version
// script hides everything else, including Swift symbols.
let exportOnlyEntry: [LinkerSetting] = [
    .unsafeFlags(["-Xlinker", "--version-script=\(root)/SDK/plugin.exports"]),
]
let hiddenByDefault: [CSetting] = [.headerSearchPath("../../SDK/include"), .unsafeFlags(["-fvisibility=hidden", "-Wall", "-Wextra", "-pedantic"])]

let package = Package(
    name: "Pincer",
    products: [
        .executable(name: "pincer", targets: ["pincer"]),
        .executable(name: "pincer-bench", targets: ["pincer-bench"]),
        // Run by pincer to learn, out of process, what each plugin file registers.
        .executable(name: "pincer-plugin-scanner", targets: ["pincer-plugin-scanner"]),
        .library(name: "PincerHost", targets: ["PincerHost"]),
        .library(name: "PincerPluginKit", targets: ["PincerPluginKit"]),
        // Built-in plugins: the host finds lib pincer-plugin-*.so beside its executable.
        .library(name: "pincer-plugin-devopts", type: .dynamic, targets: ["DeveloperOptions"]),
        .library(name: "pincer-plugin-sysinfo", type: .dynamic, targets: ["SystemInfo"]),
        .library(name: "pincer-plugin-flags", type: .dynamic, targets: ["FeatureFlags"]),
        .library(name: "pincer-plugin-servers", type: .dynamic, targets: ["ServerEnvironments"]),
        .library(name: "pincer-plugin-net", type: .dynamic, targets: ["NetworkLogger"]),
        .library(name: "pincer-plugin-l10n", type: .dynamic, targets: ["PseudoLocalization"]),
        .library(name: "pincer-plugin-a11y", type: .dynamic, targets: ["AccessibilityAudit"]),
        .library(name: "pincer-plugin-loc", type: .dynamic, targets: ["Location"]),
        .library(name: "pincer-plugin-db", type: .dynamic, targets: ["DatabaseBrowser"]),
        // What an app links to capture its URLSession traffic into the network logger.
        .library(name: "PincerNetworkCapture", targets: ["PincerNetworkCapture"]),
        // What an app links to embed the host and let `pincer attach` in: Swift, and C (pincer/embed.h).
        .library(name: "PincerEmbed", targets: ["PincerEmbed"]),
        .library(name: "pincer-embed", type: .dynamic, targets: ["PincerEmbedC"]),
        .executable(name: "pincer-demo", targets: ["pincer-demo"]),
    ],
    targets: [
        // The public C contract.
        .systemLibrary(name: "CPincerSDK", path: "SDK/include"),
        // C libraries from Debian.
        .systemLibrary(name: "CFFI", path: "Sources/CFFI", pkgConfig: "libffi", providers: [.apt(["libffi-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CEdit", path: "Sources/CEdit", providers: [.apt(["libedit-dev"])]),
        .systemLibrary(name: "CUnistring", path: "Sources/CUnistring", providers: [.apt(["libunistring-dev"])]),
        .systemLibrary(name: "CPNG", path: "Sources/CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CXXHash", path: "Sources/CXXHash", pkgConfig: "libxxhash", providers: [.apt(["libxxhash-dev"])]),

        // JSON reading and writing without Foundation, shared by host and plugins.
        .target(name: "PincerJSON"),
        // A strict XML 1.0 reader over UTF-8 bytes, shared by the dump and GPX importers.
        .target(name: "PincerXML"),
        // The one SQLite-file wrapper for stores (settings, the network log, routes).
        .target(name: "PincerSQLite", dependencies: ["CSQLite"]),
        .target(name: "PincerHost", dependencies: ["CPincerSDK", "CFFI", "PincerSQLite", "PincerJSON", "CXXHash"]),
        .target(name: "PincerShell", dependencies: ["PincerHost", "PincerControl", "PincerPluginKit", "CEdit"]),
        .executableTarget(name: "pincer", dependencies: ["PincerShell"]),
        .executableTarget(name: "pincer-plugin-scanner", dependencies: ["PincerHost"]),
        .target(name: "PincerPluginKit", dependencies: ["CPincerSDK", "PincerJSON"]),
        // The control protocol (JSON-RPC over a Unix socket): shared definitions and the client.
        .target(name: "PincerControl", dependencies: ["PincerJSON"]),
        // The server side, inside an app: methods over a Host, and the shell run remotely.
        .target(name: "PincerControlServer", dependencies: ["PincerHost", "PincerShell", "PincerControl", "PincerJSON"]),
        // Embedding: start the host (and its control socket) in an app, typed access to the services.
        .target(name: "PincerEmbed", dependencies: ["PincerHost", "PincerControlServer", "PincerNetworkCapture", "PincerPluginKit", "CPincerSDK"]),
        .target(name: "PincerEmbedC", dependencies: ["PincerEmbed", "CPincerSDK"]),
        .executableTarget(name: "pincer-demo", dependencies: ["PincerEmbed"]),

        .target(name: "DeveloperOptions", dependencies: ["CPincerSDK"], path: "Plugins/DeveloperOptions",
                cSettings: hiddenByDefault, linkerSettings: exportOnlyEntry),
        .target(name: "SystemInfo", dependencies: ["PincerPluginKit"], path: "Plugins/SystemInfo",
                linkerSettings: exportOnlyEntry),

        .target(name: "FeatureFlags", dependencies: ["PincerPluginKit"], path: "Plugins/FeatureFlags",
                linkerSettings: exportOnlyEntry),
        .target(name: "ServerEnvironments", dependencies: ["PincerPluginKit"], path: "Plugins/ServerEnvironments",
                linkerSettings: exportOnlyEntry),
        // The network log itself (store, redaction, HAR, cURL, filters, stats), a
        // library so tests and the benchmark reach it directly; the plugin is glue.
        .target(name: "NetworkLog", dependencies: ["PincerPluginKit", "PincerSQLite", "CUnistring"], path: "Plugins/NetworkLogger/Core"),
        .target(name: "NetworkLogger", dependencies: ["PincerPluginKit", "NetworkLog"], path: "Plugins/NetworkLogger/Plugin",
                linkerSettings: exportOnlyEntry),
        .target(name: "PincerNetworkCapture", dependencies: ["CPincerSDK", "CCurl"]),
        // Pseudo-localisation (transforms, placeholders, catalogs), a library
        // so tests and the benchmark reach it directly; the plugin is glue.
        .target(name: "PseudoL10n", dependencies: ["PincerJSON", "PincerXML"], path: "Plugins/PseudoLocalization/Core"),
        .target(name: "PseudoLocalization", dependencies: ["PincerPluginKit", "PseudoL10n"], path: "Plugins/PseudoLocalization/Plugin",
                linkerSettings: exportOnlyEntry),
        // The accessibility audit (model, importers, checks, reports, pictures),
        // a library so tests and the benchmark reach it directly; the plugin is glue.
        .target(name: "A11yAudit", dependencies: ["PincerPluginKit", "PincerJSON", "PincerXML", "CPNG"], path: "Plugins/AccessibilityAudit/Core"),
        .target(name: "AccessibilityAudit", dependencies: ["PincerPluginKit", "A11yAudit"], path: "Plugins/AccessibilityAudit/Plugin",
                linkerSettings: exportOnlyEntry),
        // Location spoofing and routes (geodesy, GPX and GeoJSON, playback),
        // a library so tests and the benchmark reach it directly.
        .target(name: "GeoRoutes", dependencies: ["PincerPluginKit", "PincerJSON", "PincerXML", "PincerSQLite"], path: "Plugins/Location/Core"),
        .target(name: "Location", dependencies: ["PincerPluginKit", "GeoRoutes"], path: "Plugins/Location/Plugin",
                linkerSettings: exportOnlyEntry),

        // The database browser (the adapter model, the SQLite adapter, the
        // bridge to adapters written in C), a library so tests and the
        // benchmark reach it directly; the plugin is glue.
        .target(name: "DatabaseKit", dependencies: ["PincerPluginKit", "PincerJSON", "CSQLite"], path: "Plugins/DatabaseBrowser/Core"),
        .target(name: "DatabaseBrowser", dependencies: ["PincerPluginKit", "DatabaseKit"], path: "Plugins/DatabaseBrowser/Plugin",
                linkerSettings: exportOnlyEntry),

        // Benchmarks (see README "Benchmarks"): the figures are ratios measured in one run.
        .executableTarget(name: "pincer-bench", dependencies: ["PincerHost", "BenchKernels", "NetworkLog", "PincerNetworkCapture", "PseudoL10n", "A11yAudit", "GeoRoutes", "DatabaseKit", "PincerControl", "PincerControlServer"],
                         swiftSettings: [.unsafeFlags(["-Xcc", "-I\(root)/SDK/include"])]),
        .target(name: "BenchKernels", dependencies: ["CPincerSDK"],
                cSettings: [.headerSearchPath("../../SDK/include")]),
        .executableTarget(name: "bench-hello"),

        .testTarget(name: "PincerTests", dependencies: ["PincerHost", "PincerShell", "PincerPluginKit", "PincerJSON", "PincerSQLite", "PincerNetworkCapture", "NetworkLog", "PseudoL10n", "A11yAudit", "GeoRoutes", "DatabaseKit", "PincerControl", "PincerControlServer", "PincerEmbed"]),
    ],
    swiftLanguageModes: [.v6]
)
