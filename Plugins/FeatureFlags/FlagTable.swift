import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An immutable, resolved copy of every flag, laid out in raw memory so a
/// lookup by C string touches no reference counts and allocates nothing:
/// FNV-1a over the key's bytes, then linear probing in a power-of-two table.
final class FlagTable: @unchecked Sendable {
    struct Record {
        var hash: UInt64
        var key: UnsafePointer<UInt8>
        var keyLength: Int
        var type: pincer_flag_type_t
        var reason: pincer_flag_reason_t
        /// bool (0/1), Int64 or Double bit pattern.
        var bits: UInt64
        /// String values: NUL-terminated bytes and their length without the NUL.
        var string: UnsafePointer<CChar>?
        var stringLength: Int
    }

    let generation: UInt64
    private let slots: UnsafeMutablePointer<Int32>
    private let mask: Int
    private let records: UnsafeMutablePointer<Record>
    private let count: Int
    private let bytes: UnsafeMutablePointer<UInt8>

    init(generation: UInt64, flags: [(key: String, value: FlagValue, reason: Reason)]) {
        self.generation = generation
        count = flags.count
        var capacity = 8
        while capacity < flags.count * 2 { capacity *= 2 }
        mask = capacity - 1
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: -1, count: capacity)
        records = .allocate(capacity: max(count, 1))
        // Keys and string values share one allocation.
        var total = 0
        for f in flags {
            total += f.key.utf8.count + 1
            if case .string(let s) = f.value { total += s.utf8.count + 1 }
        }
        bytes = .allocate(capacity: max(total, 1))
        var cursor = bytes
        func copy(_ s: String) -> (UnsafeMutablePointer<UInt8>, Int) {
            let start = cursor
            let n = s.utf8.count
            _ = UnsafeMutableBufferPointer(start: cursor, count: n).initialize(from: s.utf8)
            cursor[n] = 0
            cursor += n + 1
            return (start, n)
        }
        for (i, f) in flags.enumerated() {
            let (key, keyLength) = copy(f.key)
            var record = Record(hash: FlagTable.hash(UnsafePointer(key), keyLength), key: UnsafePointer(key), keyLength: keyLength,
                                type: f.value.type.sdk, reason: f.reason.sdk, bits: 0, string: nil, stringLength: 0)
            switch f.value {
            case .bool(let b): record.bits = b ? 1 : 0
            case .int(let v): record.bits = UInt64(bitPattern: v)
            case .double(let d): record.bits = d.bitPattern
            case .string(let s):
                let (p, n) = copy(s)
                record.string = UnsafeRawPointer(p).assumingMemoryBound(to: CChar.self)
                record.stringLength = n
            }
            (records + i).initialize(to: record)
            var slot = Int(truncatingIfNeeded: record.hash) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(i)
        }
    }

    deinit {
        slots.deallocate()
        records.deinitialize(count: count)
        records.deallocate()
        bytes.deallocate()
    }

    static func hash(_ p: UnsafePointer<UInt8>, _ n: Int) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for i in 0..<n { h = (h ^ UInt64(p[i])) &* 0x100_0000_01b3 }
        return h
    }

    /// The record for a NUL-terminated key, or nil.
    func find(_ key: UnsafePointer<CChar>) -> UnsafePointer<Record>? {
        let k = UnsafeRawPointer(key).assumingMemoryBound(to: UInt8.self)
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        var n = 0
        while k[n] != 0 {
            h = (h ^ UInt64(k[n])) &* 0x100_0000_01b3
            n += 1
        }
        var slot = Int(truncatingIfNeeded: h) & mask
        while true {
            let index = Int(slots[slot])
            if index < 0 { return nil }
            let r = UnsafePointer(records + index)
            if r.pointee.hash == h && r.pointee.keyLength == n && memcmp(r.pointee.key, k, n) == 0 { return r }
            slot = (slot + 1) & mask
        }
    }
}

/// Publishes FlagTable snapshots to readers on any thread without a lock on
/// the read path. Each thread caches the snapshot it last used (a strong
/// reference in thread-local storage) and compares its generation with one
/// atomic load; only after a change does it take the lock once to pick up
/// the new one. Old snapshots die when the last thread has moved on (or
/// exited), so nothing is freed under a reader.
final class SnapshotPublisher: @unchecked Sendable {
    private let generation = Atomic<UInt64>(0)
    private let latest: Mutex<FlagTable>
    /// A `let`, so reads need no exclusivity check.
    private let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { raw in
            if let raw { Unmanaged<FlagTable>.fromOpaque(raw).release() }
        }
        return key
    }()

    init() {
        latest = Mutex(FlagTable(generation: 0, flags: []))
    }

    /// Whether anything was published yet: false until the store opened.
    /// One atomic load, so the read path stays lock-free once it has.
    @inline(__always)
    var hasPublished: Bool { generation.load(ordering: .acquiring) != 0 }

    /// Makes `flags` the current state for every reader.
    func publish(_ flags: [(key: String, value: FlagValue, reason: Reason)]) {
        latest.withLock { table in
            let next = table.generation + 1
            table = FlagTable(generation: next, flags: flags)
            generation.store(next, ordering: .releasing)
        }
    }

    /// Runs `body` with this thread's current snapshot, borrowed (no retain).
    @inline(__always)
    func withSnapshot<R>(_ body: (FlagTable) -> R) -> R {
        let current = generation.load(ordering: .acquiring)
        if let raw = pthread_getspecific(key) {
            let cached = Unmanaged<FlagTable>.fromOpaque(raw)
            let fresh = cached._withUnsafeGuaranteedRef { $0.generation == current }
            if fresh { return cached._withUnsafeGuaranteedRef(body) }
            cached.release()
        }
        let table = latest.withLock { $0 }
        let retained = Unmanaged.passRetained(table)
        pthread_setspecific(key, retained.toOpaque())
        return retained._withUnsafeGuaranteedRef(body)
    }
}
