import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// The "pincer.flags/1" table (SDK/include/pincer/flags.h). Reads go straight
/// to the lock-free snapshot; writes go through the store.
final class FlagsService: ServiceObject<pincer_flags_service_t>, @unchecked Sendable {
    /// Opened by the first call that needs the flags; it publishes to `readers`.
    let state: FirstUse<FlagStore>
    private let readers: SnapshotPublisher

    init(store: FirstUse<FlagStore>, readers: SnapshotPublisher) {
        state = store
        self.readers = readers
        super.init(table: FlagsService.makeTable(), header: \.header)
    }

    /// The store, opened now if this is the first use.
    func store() throws(FlagError) -> FlagStore {
        do { return try state.get() } catch { throw .storage("could not open the flags: \(error)") }
    }

    /// Resolves `key` for a typed getter: the record when it has `type`,
    /// else the reason to return with the caller's default.
    @inline(__always)
    func resolve<R>(_ key: UnsafePointer<CChar>, _ type: pincer_flag_type_t,
                    _ body: (UnsafePointer<FlagTable.Record>) -> R, fallback: (pincer_flag_reason_t) -> R) -> R {
        // The first read opens the store (which publishes); later reads cost one atomic load more.
        if !readers.hasPublished { _ = try? state.get() }
        return readers.withSnapshot { table in
            guard let r = table.find(key) else { return fallback(PINCER_FLAG_REASON_DEFAULT) }
            guard r.pointee.type == type else { return fallback(PINCER_FLAG_REASON_TYPE_MISMATCH) }
            return body(r)
        }
    }

    private static func makeTable() -> pincer_flags_service_t {
        var t = pincer_flags_service_t()
        t.header.version_minor = 0
        t.register_bool = { ctx, key, remote, summary in
            FlagsService.register(ctx, key, summary) { .bool(remote) }
        }
        t.register_int = { ctx, key, remote, summary in
            FlagsService.register(ctx, key, summary) { .int(remote) }
        }
        t.register_double = { ctx, key, remote, summary in
            FlagsService.register(ctx, key, summary) { .double(remote) }
        }
        t.register_string = { ctx, key, remote, summary in
            guard let remote else {
                return FlagsService.with(ctx) { $0.fail(PINCER_INVALID_ARGUMENT, "register_string: remote value is NULL") }
            }
            return FlagsService.register(ctx, key, summary) { .string(String(cString: remote)) }
        }
        t.get_bool = { ctx, key, fallback, out in
            guard let ctx, let key, let out else { out?.pointee = fallback; return PINCER_FLAG_REASON_ERROR }
            return FlagsService.with(ctx) { s in
                s.resolve(key, PINCER_FLAG_BOOL, { r in out.pointee = r.pointee.bits != 0; return r.pointee.reason },
                          fallback: { out.pointee = fallback; return $0 })
            }
        }
        t.get_int = { ctx, key, fallback, out in
            guard let ctx, let key, let out else { out?.pointee = fallback; return PINCER_FLAG_REASON_ERROR }
            return FlagsService.with(ctx) { s in
                s.resolve(key, PINCER_FLAG_INT, { r in out.pointee = Int64(bitPattern: r.pointee.bits); return r.pointee.reason },
                          fallback: { out.pointee = fallback; return $0 })
            }
        }
        t.get_double = { ctx, key, fallback, out in
            guard let ctx, let key, let out else { out?.pointee = fallback; return PINCER_FLAG_REASON_ERROR }
            return FlagsService.with(ctx) { s in
                s.resolve(key, PINCER_FLAG_DOUBLE, { r in out.pointee = Double(bitPattern: r.pointee.bits); return r.pointee.reason },
                          fallback: { out.pointee = fallback; return $0 })
            }
        }
        t.get_string = { ctx, key, fallback, buffer, capacity, length in
            func copyDefault() {
                let n: Int64 = fallback.map { copyOut(UnsafeRawPointer($0), length: strlen($0), to: buffer, capacity: capacity) }
                    ?? copyOut(nil, length: 0, to: buffer, capacity: capacity)
                length?.pointee = UInt64(n)
            }
            guard let ctx, let key, let length else { copyDefault(); return PINCER_FLAG_REASON_ERROR }
            return FlagsService.with(ctx) { s in
                s.resolve(key, PINCER_FLAG_STRING, { r in
                    length.pointee = UInt64(copyOut(UnsafeRawPointer(r.pointee.string), length: r.pointee.stringLength,
                                                    to: buffer, capacity: capacity))
                    return r.pointee.reason
                }, fallback: { reason in copyDefault(); return reason })
            }
        }
        t.set_override = { ctx, key, value in
            FlagsService.with(ctx) { s in
                guard let key, let value else { return s.fail(PINCER_INVALID_ARGUMENT, "set_override: key and value are required") }
                return s.perform { () throws(FlagError) in try s.store().setOverride(String(cString: key), text: String(cString: value)) }
            }
        }
        t.clear_override = { ctx, key in
            FlagsService.with(ctx) { s in
                guard let key else { return s.fail(PINCER_INVALID_ARGUMENT, "clear_override: key is NULL") }
                return s.perform { () throws(FlagError) in try s.store().clearOverride(String(cString: key)) }
            }
        }
        t.clear_all_overrides = { ctx in
            FlagsService.with(ctx) { s in s.perform { () throws(FlagError) in try s.store().clearAll() } }
        }
        t.overrides_enabled = { ctx in
            FlagsService.with(ctx) { (try? $0.state.get())?.snapshot.overridesEnabled ?? true }
        }
        t.set_overrides_enabled = { ctx, on in
            FlagsService.with(ctx) { s in s.perform { () throws(FlagError) in try s.store().setOverridesEnabled(on) } }
        }
        t.last_error = { ctx in
            FlagsService.with(ctx) { $0.errors.pointer }
        }
        return t
    }

    private static func register(_ ctx: UnsafeMutableRawPointer?, _ key: UnsafePointer<CChar>?, _ summary: UnsafePointer<CChar>?,
                                 _ value: () -> FlagValue) -> pincer_status_t {
        FlagsService.with(ctx) { s in
            guard let key else { return s.fail(PINCER_INVALID_ARGUMENT, "register: key is NULL") }
            let k = String(cString: key)
            return s.perform { () throws(FlagError) in
                try s.store().register(k, remote: value(), summary: summary.map { String(cString: $0) })
            }
        }
    }
}
