import Synchronization

/// State a plugin opens on first use, not in `init` (SDK/include/pincer/entry.h:
/// "init only registers"). The first `get()` runs `open`; later calls return
/// what it made. A failed open is not remembered, so the next use tries
/// again (a settings store that was locked, a file that appeared). Safe to
/// call from any thread; `open` runs at most once at a time.
///
///     let state = FirstUse { try LoggerState(host: host) }
///     try host.addCommand("count() -> int", summary: "...") { _ in .int(try state.get().count) }
public final class FirstUse<Value>: @unchecked Sendable {
    private let open: () throws -> Value
    // The value is the plugin's own, shared by its callbacks as the plugin
    // arranges; the box only carries it through the mutex.
    private struct Box: @unchecked Sendable { var value: Value? }
    private let slot = Mutex(Box(value: nil))
    // Held while `open` runs, so two first uses open once; separate from
    // `slot` so `isOpen` never waits for an open in progress.
    private let opening = Mutex<Void>(())

    public init(_ open: @escaping () throws -> Value) { self.open = open }

    /// The state, opened now if this is the first use.
    public func get() throws -> Value {
        if let value = ifOpen { return value }
        return try opening.withLock { _ in
            if let value = ifOpen { return value }
            let value = try open()
            slot.withLock { $0.value = value }
            return value
        }
    }

    /// The state if something already opened it: what shutdown or a
    /// best-effort path uses so it never opens state just to close it.
    public var ifOpen: Value? { slot.withLock { $0.value } }
}
