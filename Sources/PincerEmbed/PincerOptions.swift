import CPincerSDK
import PincerHost
#if canImport(Glibc)
import Glibc
#endif

/// How an app starts Pincer. Every field has a default except the app name:
///
///     var options = PincerOptions(appName: "shop")
///     options.allowedPlugins = ["flags", "servers", "net"]
///     let pincer = try Pincer.start(options)
public struct PincerOptions: Sendable {
    /// Where the built-in plugins (`libpincer-plugin-*.so`) come from.
    public enum BuiltinPlugins: Sendable, Equatable {
        /// Beside the executable; when none is there, beside the binary that
        /// holds PincerEmbed (libpincer-embed.so for C apps).
        case automatic
        /// The `libpincer-plugin-*.so` files of this directory.
        case directory(String)
        /// No built-in plugins: only `pluginPaths`.
        case none
    }

    /// Shown to `pincer ps` / `pincer attach` (the control protocol's `hello`). Not empty.
    public var appName: String
    /// The built-in plugins. Default: `.automatic`.
    public var builtinPlugins: BuiltinPlugins = .automatic
    /// More plugin files or directories (a directory contributes its `*.so`),
    /// loaded after the built-ins, in order.
    public var pluginPaths: [String] = []
    /// The settings store's directory. nil: what the `pincer` shell uses
    /// ($PINCER_STATE_DIR, else $XDG_STATE_HOME/pincer, else
    /// ~/.local/state/pincer), so the shell sees what the app registered.
    public var stateDirectory: String?
    /// nil: every plugin found is loaded. Otherwise only the plugins whose
    /// short name ("flags") or id ("dev.pincer.flags") is listed; the others
    /// are not started (their libraries are opened to read the id, and stay
    /// mapped: libraries are never closed). A name that matches no plugin is
    /// logged as a warning.
    public var allowedPlugins: [String]?
    /// Whether to open the control socket that `pincer attach` talks to. Default on.
    public var controlSocket: Bool = true
    /// Whether clients of the control socket may run commands and set
    /// entries that change state. Default on.
    public var allowChanges: Bool = true
    /// The socket's directory. nil: $XDG_RUNTIME_DIR/pincer, else /tmp/pincer-<uid>
    /// (where `pincer ps` looks). Created 0700 if missing.
    public var socketDirectory: String?
    /// How long `Pincer.stop()` waits for the plugins (a call still running,
    /// then their shutdown) before it abandons what is left and returns. Default 5 s.
    public var stopTimeout: Duration = .seconds(5)
    /// Receives the host's log lines. nil: warnings and errors go to standard error.
    /// Not compared by `Pincer.start` (a closure has no identity to compare).
    public var logHandler: (@Sendable (LogRecord) -> Void)?

    public init(appName: String) { self.appName = appName }

    /// The fields that differ from `other`, by name (the log handler is not compared).
    func differences(from other: PincerOptions) -> [String] {
        var names: [String] = []
        if appName != other.appName { names.append("appName") }
        if builtinPlugins != other.builtinPlugins { names.append("builtinPlugins") }
        if pluginPaths != other.pluginPaths { names.append("pluginPaths") }
        if stateDirectory != other.stateDirectory { names.append("stateDirectory") }
        if allowedPlugins != other.allowedPlugins { names.append("allowedPlugins") }
        if controlSocket != other.controlSocket { names.append("controlSocket") }
        if allowChanges != other.allowChanges { names.append("allowChanges") }
        if socketDirectory != other.socketDirectory { names.append("socketDirectory") }
        if stopTimeout != other.stopTimeout { names.append("stopTimeout") }
        return names
    }

    /// Checks what can be checked before anything starts.
    func validate() throws(PincerError) {
        if appName.isEmpty { throw PincerError(.invalidOptions, "PincerOptions.appName is empty") }
        if case .directory(let d) = builtinPlugins, d.isEmpty {
            throw PincerError(.invalidOptions, "PincerOptions.builtinPlugins: the directory is empty (use .none for no built-in plugins)")
        }
        if let allowed = allowedPlugins, let bad = allowed.first(where: { $0.isEmpty || $0.contains(",") || $0.contains(" ") }) {
            throw PincerError(.invalidOptions, "PincerOptions.allowedPlugins: '\(bad)' is not a plugin short name or id")
        }
        if stateDirectory?.isEmpty == true { throw PincerError(.invalidOptions, "PincerOptions.stateDirectory is empty (nil means the default)") }
        if stopTimeout < .zero { throw PincerError(.invalidOptions, "PincerOptions.stopTimeout is negative") }
        if socketDirectory?.isEmpty == true { throw PincerError(.invalidOptions, "PincerOptions.socketDirectory is empty (nil means the default)") }
    }

    /// The host options these resolve to.
    func hostOptions() -> Host.Options {
        var o = Host.Options(stateDirectory: stateDirectory ?? SettingsStore.defaultDirectory(environment: ProcessEnvironment.current()))
        switch builtinPlugins {
        case .automatic: o.builtinDirectory = PluginLocator.automaticDirectory()
        case .directory(let d): o.builtinDirectory = d
        case .none: o.builtinDirectory = nil
        }
        o.pluginPaths = pluginPaths
        if let logHandler { o.logHandler = logHandler }
        return o
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}

enum PluginLocator {
    /// Beside the executable when built-in plugins are there, else beside
    /// the binary this code is in (libpincer-embed.so), else the executable's.
    static func automaticDirectory() -> String? {
        let executable = Host.executableDirectory()
        if let executable, hasBuiltins(executable) { return executable }
        if let library = libraryDirectory(), hasBuiltins(library) { return library }
        return executable
    }

    static func hasBuiltins(_ directory: String) -> Bool {
        Host.listDirectory(directory).contains { $0.hasPrefix(Host.builtinPrefix) && $0.hasSuffix(".so") }
    }

    /// The directory of the shared object (or executable) holding this
    /// code: the mapping in /proc/self/maps that contains one of its
    /// functions (dladdr needs _GNU_SOURCE, which Glibc's module lacks).
    static func libraryDirectory() -> String? {
        let marker: @convention(c) () -> Void = {}
        let address = UInt(bitPattern: unsafeBitCast(marker, to: UnsafeRawPointer.self))
        guard let maps = fopen("/proc/self/maps", "r") else { return nil }
        defer { fclose(maps) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, maps) > 0, let line {
            // start-end perms offset dev inode path
            let fields = String(cString: line).split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, let dash = fields[0].firstIndex(of: "-"),
                  let start = UInt(fields[0][..<dash], radix: 16),
                  let end = UInt(fields[0][fields[0].index(after: dash)...], radix: 16),
                  start <= address, address < end else { continue }
            let path = fields[5...].joined(separator: " ").trimmingSuffix("\n")
            guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/") else { return nil }
            return String(path[..<slash])
        }
        return nil
    }

    /// What a plugin library says it is, read from its entry record without
    /// starting it. nil when the file is not a loadable Pincer plugin (the
    /// host's loader would refuse it with the reason).
    static func identity(of path: String) -> (id: String, shortName: String)? {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else { return nil }
        // Never closed, as the host's loader does: the library may hold Swift code.
        guard let symbol = dlsym(handle, PINCER_PLUGIN_ENTRY_SYMBOL) else { return nil }
        let entry = unsafeBitCast(symbol, to: pincer_plugin_entry_fn_t.self)
        guard let record = entry(PINCER_ABI_MAJOR, PINCER_ABI_MINOR) else { return nil }
        let head = UnsafeRawPointer(record).assumingMemoryBound(to: UInt32.self)
        guard head[0] == PINCER_PLUGIN_MAGIC, head[1] == PINCER_ABI_MAJOR,
              head[3] >= UInt32(MemoryLayout<pincer_plugin_t>.size),
              let id = record.pointee.id, let short = record.pointee.short_name else { return nil }
        return (String(cString: id), String(cString: short))
    }
}
