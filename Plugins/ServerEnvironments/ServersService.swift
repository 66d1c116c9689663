import PincerPluginKit

/// The "pincer.servers/1" table (SDK/include/pincer/servers.h).
final class ServersService: ServiceObject<pincer_servers_service_t>, @unchecked Sendable {
    /// Opened by the first call that needs the environments.
    let state: FirstUse<EnvironmentStore>

    init(store: FirstUse<EnvironmentStore>) {
        state = store
        super.init(table: ServersService.makeTable(), header: \.header)
    }

    /// The store, opened now if this is the first use.
    func store() throws(ServersError) -> EnvironmentStore {
        do { return try state.get() } catch { throw .storage("could not open the server environments: \(error)") }
    }

    /// The current environment; nil also when the store cannot be opened
    /// (never for a settings document, whose unreadable text is set aside).
    var current: Environment? { (try? state.get())?.snapshot.current }

    /// A C function and its context, carried into a Sendable closure; the
    /// subscriber promised in servers.h that the context stays valid.
    private struct Callback: @unchecked Sendable {
        let fn: pincer_environment_changed_fn_t
        let context: UnsafeMutableRawPointer?
    }

    private static func makeTable() -> pincer_servers_service_t {
        var t = pincer_servers_service_t()
        t.header.version_minor = 0
        t.register_environment = { ctx, id, name, variables, count in
            ServersService.with(ctx) { s in
                guard let id, let name else { return s.fail(PINCER_INVALID_ARGUMENT, "register_environment: id and name are required") }
                var pairs: [(String, String)] = []
                for i in 0..<Int(count) {
                    guard let variables, let n = variables[2 * i], let v = variables[2 * i + 1] else {
                        return s.fail(PINCER_INVALID_ARGUMENT, "register_environment '\(String(cString: id))': variable \(i) has a NULL name or value")
                    }
                    pairs.append((String(cString: n), String(cString: v)))
                }
                return s.perform { () throws(ServersError) in
                    try s.store().register(String(cString: id), name: String(cString: name), variables: pairs)
                }
            }
        }
        t.use = { ctx, id in
            ServersService.with(ctx) { s in
                guard let id else { return s.fail(PINCER_INVALID_ARGUMENT, "use: id is NULL") }
                return s.perform { () throws(ServersError) in try s.store().use(String(cString: id)) }
            }
        }
        t.current = { ctx, buffer, capacity in
            ServersService.with(ctx) { s in
                guard let e = s.current else { return -1 }
                return copyOut(e.id, to: buffer, capacity: capacity)
            }
        }
        t.get_variable = { ctx, name, buffer, capacity in
            ServersService.with(ctx) { s in
                guard let name, let value = s.current?.variable(String(cString: name)) else { return -1 }
                return copyOut(value, to: buffer, capacity: capacity)
            }
        }
        t.each_variable = { ctx, fn, fnContext in
            ServersService.with(ctx) { s in
                guard let fn, let e = s.current else { return 0 }
                for v in e.variables { v.name.withCString { n in v.value.withCString { fn(fnContext, n, $0) } } }
                return UInt32(e.variables.count)
            }
        }
        t.subscribe = { ctx, fn, fnContext in
            ServersService.with(ctx) { s in
                guard let fn else {
                    _ = s.fail(PINCER_INVALID_ARGUMENT, "subscribe: callback is NULL")
                    return 0
                }
                let callback = Callback(fn: fn, context: fnContext)
                guard let store = try? s.state.get() else {
                    _ = s.fail(PINCER_FAILED, "subscribe: the server environments could not be opened")
                    return 0
                }
                return store.subscribe { from, to in
                    to.withCString { t in
                        if let from { from.withCString { callback.fn(callback.context, $0, t) } } else { callback.fn(callback.context, nil, t) }
                    }
                }
            }
        }
        t.unsubscribe = { ctx, token in
            ServersService.with(ctx) { s in
                // Nothing to unsubscribe from a store never opened.
                s.state.ifOpen?.unsubscribe(token)
            }
        }
        t.set_display_variable = { ctx, name, value in
            ServersService.with(ctx) { s in
                guard let name else { return s.fail(PINCER_INVALID_ARGUMENT, "set_display_variable: name is NULL") }
                return s.perform { () throws(ServersError) in
                    try s.store().setDisplay(String(cString: name), value.map { String(cString: $0) })
                }
            }
        }
        t.last_error = { ctx in
            ServersService.with(ctx) { $0.errors.pointer }
        }
        return t
    }
}
