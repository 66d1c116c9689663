import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The bounds of the log (defaults from the issue: 500 entries, 1 MiB per
/// body, 20 MiB of bodies in all).
public struct LogLimits: Sendable, Equatable {
    public static let entryRange = 1...100_000
    public var entryLimit = 500
    /// Bodies larger than this are withheld (size only): a truncated body cannot be checked for secrets.
    public var bodyCap = 1 << 20
    /// Past this many stored body bytes, the payloads of the oldest completed entries are dropped.
    public var bodyBudget = 20 << 20

    public init(entryLimit: Int = 500, bodyCap: Int = 1 << 20, bodyBudget: Int = 20 << 20) {
        self.entryLimit = entryLimit
        self.bodyCap = bodyCap
        self.bodyBudget = bodyBudget
    }

    /// Why these limits are not acceptable, or nil.
    public var problem: String? {
        if !LogLimits.entryRange.contains(entryLimit) { return "entry limit \(entryLimit) is outside 1...100000" }
        if bodyCap < 0 { return "body cap \(bodyCap) is negative" }
        if bodyBudget < 0 { return "body budget \(bodyBudget) is negative" }
        return nil
    }
}

/// Windshield's capture rules: an ignored request stores nothing; a
/// metadata-only one stores no body bytes. A rule matches a host exactly,
/// or every subdomain with "*.example.com"; optionally only paths under a
/// prefix and only some methods.
public struct CaptureRule: Sendable, Equatable {
    public enum Kind: String, Sendable { case ignore, metadataOnly = "metadata-only" }
    public var kind: Kind
    public var host: String
    public var pathPrefix: String
    /// Uppercased; empty means every method.
    public var methods: [String]

    public init(kind: Kind, host: String, pathPrefix: String = "", methods: [String] = []) {
        self.kind = kind
        self.host = host.lowercased()
        self.pathPrefix = pathPrefix
        self.methods = methods.map { $0.uppercased() }
    }

    public func matches(method: String, url: URLParts) -> Bool {
        let hostMatches = host.hasPrefix("*.") ? url.host.hasSuffix(String(host.dropFirst(1))) : url.host == host
        return hostMatches && (pathPrefix.isEmpty || url.path.hasPrefix(pathPrefix))
            && (methods.isEmpty || methods.contains(method.uppercased()))
    }
}

/// What a completed exchange brings: the response side of an entry before redaction.
public struct RawResponse: Sendable {
    public var status: Int
    public var statusText = ""
    public var httpVersion = "HTTP/1.1"
    public var headers: [Header] = []
    public var body: [UInt8] = []
    /// The body's size as received when `body` holds only part of it (HAR imports with a declared size); nil means body.count.
    public var bodySize: Int?
    public var redirectURL = ""
    public var serverIP: String?
    public var timings = Timings()

    public init(status: Int) { self.status = status }
}

/// The bounded, redacted log. Appending is O(1) amortised: entries live in a
/// ring indexed by id, and the body budget is enforced by a cursor that
/// walks forward over the oldest entries.
public final class NetworkStore: @unchecked Sendable {
    private struct Ring {
        var slots: [NetworkEntry?]
        var start = 0
        var count = 0
        /// Id of the entry in `slots[start]` when count > 0.
        var firstID: UInt64 = 1
        var nextID: UInt64 = 1
        var storedBytes = 0
        /// Every entry with a smaller id holds no payload or is still pending.
        var payloadCursor: UInt64 = 1
        /// Body bytes evicted or dropped since memory was last handed back.
        var freedSinceTrim = 0
        /// The most `storedBytes` has been since memory was last handed back.
        var peakSinceTrim = 0

        init(capacity: Int) { slots = Array(repeating: nil, count: capacity) }

        func slot(_ id: UInt64) -> Int? {
            guard count > 0, id >= firstID, id < firstID + UInt64(count) else { return nil }
            return (start + Int(id - firstID)) % slots.count
        }
    }

    private let state: Mutex<Ring>
    private let settings: Mutex<(limits: LogLimits, rules: [CaptureRule])>
    private let currentRedactor: Mutex<Redactor>
    /// The redactor in use now (`setRedactedNames` replaces it).
    public var redactor: Redactor { currentRedactor.withLock { $0 } }
    private let listeners = Mutex<[(UInt64, @Sendable (NetworkEntry) -> Void)]>([])
    private let batchListeners = Mutex<[(UInt64, @Sendable ([NetworkEntry]) -> Void)]>([])
    private let listenerID = Atomic<UInt64>(1)

    public init(limits: LogLimits = LogLimits(), rules: [CaptureRule] = [], redactor: Redactor = Redactor()) {
        state = Mutex(Ring(capacity: limits.entryLimit))
        settings = Mutex((limits, rules))
        currentRedactor = Mutex(redactor)
    }

    /// Names redacted on top of the defaults (`net.redact-name`), for what is
    /// recorded from now on.
    public func setRedactedNames(_ names: [String]) {
        currentRedactor.withLock { $0 = Redactor(extraNames: names) }
    }

    // MARK: configuration

    public var limits: LogLimits { settings.withLock { $0.limits } }
    public var rules: [CaptureRule] { settings.withLock { $0.rules } }

    /// New limits apply to new bodies; a smaller entry limit evicts the oldest now.
    public func setLimits(_ limits: LogLimits) {
        settings.withLock { $0.limits = limits }
        state.withLock { ring in
            let kept = ring.count > 0 ? (0..<ring.count).compactMap { ring.slots[(ring.start + $0) % ring.slots.count] } : []
            var next = Ring(capacity: limits.entryLimit)
            for entry in kept.suffix(limits.entryLimit) { NetworkStore.append(entry, to: &next) }
            next.nextID = ring.nextID
            if next.count == 0 { next.firstID = ring.nextID }
            next.payloadCursor = next.firstID
            ring = next
            NetworkStore.enforceBudget(&ring, budget: limits.bodyBudget)
        }
    }

    public func setRules(_ rules: [CaptureRule]) { settings.withLock { $0.rules = rules } }

    /// The rule that decides for this request, if any (ignore wins over metadata-only).
    public func rule(method: String, url: String) -> CaptureRule.Kind? {
        let rules = self.rules
        guard !rules.isEmpty, let parts = URLParts(url) else { return nil }
        let matching = rules.filter { $0.matches(method: method, url: parts) }
        if matching.contains(where: { $0.kind == .ignore }) { return .ignore }
        return matching.isEmpty ? nil : .metadataOnly
    }

    // MARK: recording

    /// Records a request that has started. Returns its id, or nil when an
    /// ignore rule matches (nothing is stored).
    /// `bodySize`: the body's real size when `body` holds only part of it
    /// (a proxy streams what it does not keep); the log then withholds it.
    public func begin(source: EntrySource, startedAt: Double, method: String, url: String, headers: [Header],
                      body: [UInt8], bodySize: Int? = nil, stubbed: Bool = false) -> UInt64? {
        let kind = rule(method: method, url: url)
        if kind == .ignore { return nil }
        let redactor = self.redactor
        var entry = NetworkEntry(source: source, startedAt: startedAt, method: redactor.text(method), url: redactor.url(url))
        var headers = headers
        let replay = ReplayMark.take(from: &headers)
        entry.replayOf = replay?.original
        entry.requestHeaders = redactor.headers(headers)
        entry.requestBody = ingest(body, size: bodySize ?? body.count, contentType: headers.first("Content-Type"), metadataOnly: kind == .metadataOnly,
                                   side: "request", notes: &entry.notes)
        entry.stubbed = stubbed
        let id = append(entry)
        if let replay { replays.withLock { $0[replay.token] = id } }
        return id
    }

    /// Entries that net.replay's requests became, by their mark's token.
    private let replays = Mutex<[String: UInt64]>([:])

    /// The entry the replay marked `token` became, once its request began (taken once).
    public func replayEntry(token: String) -> UInt64? {
        replays.withLock { $0.removeValue(forKey: token) }
    }

    /// Completes a pending entry with its response. False when the id is unknown or evicted.
    @discardableResult
    public func complete(_ id: UInt64, _ response: RawResponse) -> Bool {
        guard let pending = entry(id) else { return false }
        let metadataOnly = rule(method: pending.method, url: pending.url) == .metadataOnly
        let redactor = self.redactor
        var notes: [String] = []
        let body = ingest(response.body, size: response.bodySize ?? response.body.count, contentType: response.headers.first("Content-Type"),
                          metadataOnly: metadataOnly, side: "response", notes: &notes)
        let headers = redactor.headers(response.headers)
        let redirect = response.redirectURL.isEmpty ? "" : redactor.url(response.redirectURL)
        return update(id) { e in
            e.state = .complete
            e.status = response.status
            e.statusText = redactor.text(response.statusText)
            e.httpVersion = redactor.text(response.httpVersion)
            e.responseHeaders = headers
            e.responseBody = body
            e.redirectURL = redirect
            e.serverIP = response.serverIP.map(redactor.text)
            e.timings = response.timings
            e.notes += notes.map(redactor.text)
        }
    }

    /// Adds what interception rules did to an entry (and marks it stubbed
    /// when its response did not come from the network). Their texts are
    /// redacted: a mapped URL or a rewritten header may hold a secret.
    @discardableResult
    public func annotate(_ id: UInt64, _ interventions: [Intervention], stubbed: Bool) -> Bool {
        let redactor = self.redactor
        let clean = interventions.map { NetworkStore.redacted($0, redactor) }
        return update(id) { e in
            e.interventions += clean
            if stubbed { e.stubbed = true }
        }
    }

    /// Adds a note for people to an entry ("tunnelled: ..."), redacted.
    @discardableResult
    public func note(_ id: UInt64, _ text: String) -> Bool {
        let clean = redactor.text(text)
        return update(id) { $0.notes.append(clean) }
    }

    static func redacted(_ i: Intervention, _ redactor: Redactor) -> Intervention {
        Intervention(rule: redactor.text(i.rule), kind: redactor.text(i.kind), title: redactor.text(i.title), did: redactor.text(i.did))
    }

    /// Completes a pending entry without a response. The error text is
    /// redacted like everything else (a client may quote the URL or a token).
    @discardableResult
    public func fail(_ id: UInt64, error: String, timings: Timings? = nil) -> Bool {
        let error = redactor.text(error)
        return update(id) { e in
            e.state = .failed
            e.error = error
            if let timings { e.timings = timings }
        }
    }

    /// Adds a finished entry (an import, a file being opened, an exchange
    /// the proxy saw to its end): request and response sides pass redaction
    /// like captured ones, and the store's lock is taken once. Bodies arrive
    /// as `.stored(raw bytes)` with their size as sent. Returns the entry as
    /// stored, or nil when an ignore rule matches.
    @discardableResult
    public func add(_ raw: NetworkEntry) -> NetworkEntry? {
        let kind = rule(method: raw.method, url: raw.url)
        if kind == .ignore { return nil }
        let stored = appendQuietly(redacted(raw, metadataOnly: kind == .metadataOnly, restoring: false))
        announce(stored)
        return stored
    }

    /// Adds finished entries as `add` does, in order (ids increase in the
    /// array's order). Their redaction, the costly part, runs on every
    /// processor, a batch at a time, so the redacted copies of only one
    /// batch exist beside the raw entries. Returns how many were stored (the
    /// others matched an ignore rule).
    @discardableResult
    public func add(contentsOf raws: [NetworkEntry]) -> Int {
        var stored = 0
        var start = 0
        while start < raws.count {
            let end = min(raws.count, start + NetworkStore.redactionBatch)
            stored += add(prepared: Parallel.map(Array(raws[start..<end]), prepare).compactMap { $0 })
            start = end
        }
        return stored
    }

    /// A finished entry as `add` stores it (through redaction), or nil when
    /// an ignore rule matches. On any thread: an importer prepares each
    /// entry where it converted it (HARImport's `prepare`), then hands the
    /// batch to `add(prepared:)`.
    public func prepare(_ raw: NetworkEntry) -> NetworkEntry? {
        let kind = rule(method: raw.method, url: raw.url)
        if kind == .ignore { return nil }
        return redacted(raw, metadataOnly: kind == .metadataOnly, restoring: false)
    }

    /// Stores entries `prepare` made, in order (ids increase in the array's
    /// order), and tells the listeners once. Returns how many.
    @discardableResult
    public func add(prepared entries: [NetworkEntry]) -> Int {
        var added: [NetworkEntry] = []
        added.reserveCapacity(entries.count)
        for e in entries { added.append(appendQuietly(e)) }
        announce(added)
        return added.count
    }

    /// Entries redacted together by `add(contentsOf:)`.
    static let redactionBatch = 1024

    /// Adds entries from a persisted log file: ids are new. They pass
    /// redaction again (idempotent), so a file written by hand or before a
    /// name was added (`net.redact-name`) holds nothing more than a new entry would.
    public func restore(_ entries: [NetworkEntry]) {
        for e in entries { _ = append(redacted(e, metadataOnly: false, restoring: true)) }
    }

    /// An entry read from a log file, redacted as `restore` would store it
    /// (net.tail prints what it follows through this).
    public func redactedForDisplay(_ entry: NetworkEntry) -> NetworkEntry {
        redacted(entry, metadataOnly: false, restoring: true)
    }

    /// Every text of an entry through the redactor: URLs, headers, bodies,
    /// and the free texts (method, status text, error, server address,
    /// notes, the reasons a body is not held).
    private func redacted(_ raw: consuming NetworkEntry, metadataOnly: Bool, restoring: Bool) -> NetworkEntry {
        let redactor = self.redactor
        // Changed in place: the raw entry is not needed afterwards (no copy
        // of its every field).
        var e = raw
        e.method = redactor.text(e.method)
        e.url = redactor.url(e.url)
        e.httpVersion = redactor.text(e.httpVersion)
        if !e.redirectURL.isEmpty { e.redirectURL = redactor.url(e.redirectURL) }
        // Headers are held packed: pack again only what redaction changed.
        let requestHeaders = e.requestHeaders, responseHeaders = e.responseHeaders
        let redactedRequest = redactor.headers(requestHeaders), redactedResponse = redactor.headers(responseHeaders)
        if redactedRequest != requestHeaders { e.requestHeaders = redactedRequest }
        if redactedResponse != responseHeaders { e.responseHeaders = redactedResponse }
        e.statusText = redactor.text(e.statusText)
        e.error = e.error.map(redactor.text)
        e.serverIP = e.serverIP.map(redactor.text)
        var notes: [String] = []
        e.requestBody = reingest(e.requestBody, metadataOnly: metadataOnly, restoring: restoring, side: "request", notes: &notes)
        e.responseBody = reingest(e.responseBody, metadataOnly: metadataOnly, restoring: restoring, side: "response", notes: &notes)
        e.notes = (e.notes + notes).map(redactor.text)
        e.interventions = e.interventions.map { NetworkStore.redacted($0, redactor) }
        return e
    }

    /// `restoring`: the bytes are what the log kept (already redacted, so
    /// maybe shorter than `size`, the size as sent).
    private func reingest(_ body: Body, metadataOnly: Bool, restoring: Bool, side: String, notes: inout [String]) -> Body {
        var body = body
        body.mimeType = mediaType(redactor.text(body.mimeType))
        switch body.payload {
        case .stored(let bytes):
            var b = ingest(bytes, size: restoring ? bytes.count : max(body.size, bytes.count), contentType: body.mimeType,
                           metadataOnly: metadataOnly, side: side, notes: &notes)
            if b.mimeType.isEmpty { b.mimeType = body.mimeType }
            if restoring { b.size = max(body.size, bytes.count) }
            return b
        case .withheld(let reason):
            // A HAR file's comment or `_bodyWithheld`: free text like any other.
            body.payload = .withheld(reason: redactor.text(reason))
            return body
        case .none, .skipped, .dropped:
            return body
        }
    }

    /// Decides what is kept of one body: nothing (metadata-only), its size
    /// (over the cap, or not checkable), or its redacted bytes.
    private func ingest(_ bytes: [UInt8], size: Int, contentType: String?, metadataOnly: Bool, side: String,
                        notes: inout [String]) -> Body {
        let mime = mediaType(contentType)
        if size == 0 && bytes.isEmpty { return Body(payload: .none, size: 0, mimeType: mime) }
        if metadataOnly {
            notes.append("\(side) body not kept: a metadata-only rule matches")
            return Body(payload: .skipped, size: size, mimeType: mime)
        }
        let cap = limits.bodyCap
        if size > cap || bytes.count < size {
            let why = size > cap ? "larger than the \(ByteCount.text(cap)) body cap" : "only \(bytes.count) of \(size) bytes are known"
            notes.append("\(side) body withheld: \(why)")
            return Body(payload: .withheld(reason: why), size: size, mimeType: mime)
        }
        var payload = redactor.body(bytes, contentType: contentType ?? mime)
        if case .withheld(let why) = payload { notes.append("\(side) body withheld: \(why)") }
        // Redaction writes into a buffer reserved for the input's size; the
        // log may hold 100,000 bodies, so each keeps only the bytes it has.
        if case .stored(let b) = payload, b.capacity - b.count > 64 {
            // Array(b[...]) would share b's buffer: copy into one of b.count bytes.
            payload = .stored([UInt8](unsafeUninitializedCapacity: b.count) { buffer, n in
                n = b.withUnsafeBufferPointer { source in _ = buffer.initialize(from: source); return source.count }
            })
        }
        return Body(payload: payload, size: size, mimeType: mime)
    }

    // MARK: the ring

    private func append(_ entry: NetworkEntry) -> UInt64 {
        let stored = appendQuietly(entry)
        announce(stored)
        return stored.id
    }

    /// Appends without telling the listeners (the caller announces). Returns the entry as stored.
    private func appendQuietly(_ entry: NetworkEntry) -> NetworkEntry {
        let budget = limits.bodyBudget
        var e = entry
        if e.recordedAt == 0 { e.recordedAt = WallClock.now() }
        let (stored, trim) = state.withLock { ring -> (NetworkEntry, Bool) in
            e.id = ring.nextID
            NetworkStore.append(e, to: &ring)
            NetworkStore.enforceBudget(&ring, budget: budget)
            let trim = NetworkStore.shouldTrim(&ring)
            return (ring.slots[ring.slot(e.id)!]!, trim)
        }
        if trim { NetworkStore.returnFreedMemory() }
        return stored
    }

    /// Appends an entry whose id is already set (ids stay contiguous).
    private static func append(_ entry: NetworkEntry, to ring: inout Ring) {
        let e = entry
        ring.nextID = max(ring.nextID, e.id + 1)
        if ring.count == ring.slots.count {
            // Full: the oldest entry leaves.
            if let old = ring.slots[ring.start] {
                let bytes = old.requestBody.storedByteCount + old.responseBody.storedByteCount
                ring.storedBytes -= bytes
                ring.freedSinceTrim += bytes
            }
            ring.slots[ring.start] = nil
            ring.start = (ring.start + 1) % ring.slots.count
            ring.firstID += 1
            ring.count -= 1
            ring.payloadCursor = max(ring.payloadCursor, ring.firstID)
        }
        if ring.count == 0 { ring.firstID = e.id; ring.start = 0; ring.payloadCursor = max(ring.payloadCursor, e.id) }
        ring.slots[(ring.start + ring.count) % ring.slots.count] = e
        ring.count += 1
        ring.storedBytes += e.requestBody.storedByteCount + e.responseBody.storedByteCount
    }

    /// Drops the payloads of the oldest completed entries until the stored
    /// bytes fit the budget; their metadata stays and the entry says so.
    private static func enforceBudget(_ ring: inout Ring, budget: Int) {
        var id = max(ring.payloadCursor, ring.firstID)
        var advancing = true
        while ring.storedBytes > budget, let slot = ring.slot(id) {
            if var e = ring.slots[slot] {
                if e.state == .pending {
                    advancing = false // its body may still come: the cursor must not pass it
                } else {
                    for side in [\NetworkEntry.requestBody, \NetworkEntry.responseBody] where e[keyPath: side].storedByteCount > 0 {
                        ring.storedBytes -= e[keyPath: side].storedByteCount
                        ring.freedSinceTrim += e[keyPath: side].storedByteCount
                        e[keyPath: side].payload = .dropped
                        e.notes.append("\(side == \NetworkEntry.requestBody ? "request" : "response") body dropped: the log keeps at most \(ByteCount.text(budget)) of bodies")
                    }
                    ring.slots[slot] = e
                }
            }
            id += 1
            if advancing { ring.payloadCursor = id }
        }
    }

    private func update(_ id: UInt64, _ change: (inout NetworkEntry) -> Void) -> Bool {
        let budget = limits.bodyBudget
        let updated: NetworkEntry? = state.withLock { ring in
            guard let slot = ring.slot(id), var e = ring.slots[slot] else { return nil }
            let before = e.requestBody.storedByteCount + e.responseBody.storedByteCount
            change(&e)
            ring.slots[slot] = e
            ring.storedBytes += e.requestBody.storedByteCount + e.responseBody.storedByteCount - before
            ring.payloadCursor = min(ring.payloadCursor, id)
            NetworkStore.enforceBudget(&ring, budget: budget)
            return ring.slots[slot]
        }
        if let updated { announce(updated) }
        return updated != nil
    }

    // MARK: reading

    public func entry(_ id: UInt64) -> NetworkEntry? {
        state.withLock { ring in ring.slot(id).flatMap { ring.slots[$0] } }
    }

    /// Every entry, oldest first (a copy: readers never hold the lock).
    public func entries() -> [NetworkEntry] {
        state.withLock { ring in (0..<ring.count).compactMap { ring.slots[(ring.start + $0) % ring.slots.count] } }
    }

    public var count: Int { state.withLock { $0.count } }
    public var storedBodyBytes: Int { state.withLock { $0.storedBytes } }

    /// Removes every entry; ids keep increasing. The memory goes back to the
    /// system (unless a reader still holds copies of the entries).
    public func clear() {
        let capacity = limits.entryLimit
        do {
            // Freed outside the lock (100,000 entries take a while), before the trim.
            let old = state.withLock { ring -> Ring in
                let next = ring.nextID
                let old = ring
                ring = Ring(capacity: capacity)
                ring.nextID = next
                ring.firstID = next
                ring.payloadCursor = next
                return old
            }
            _ = old.count
        }
        NetworkStore.returnFreedMemory()
    }

    /// Evicted or dropped body bytes after which an append hands memory back
    /// (a trim walks the heap, so not after every eviction).
    static let trimThreshold = 64 << 20

    /// Whether an append hands memory back: only when the log holds at least
    /// `trimThreshold` fewer body bytes than it did. A log that evicts as much
    /// as it takes in (a proxy streaming bodies through a full log) reuses
    /// the freed memory; trimming it would make every new body fault its
    /// pages in again.
    private static func shouldTrim(_ ring: inout Ring) -> Bool {
        ring.peakSinceTrim = max(ring.peakSinceTrim, ring.storedBytes)
        guard ring.freedSinceTrim >= trimThreshold, ring.peakSinceTrim - ring.storedBytes >= trimThreshold else { return false }
        ring.freedSinceTrim = 0
        ring.peakSinceTrim = ring.storedBytes
        return true
    }

    /// glibc keeps freed memory in its arenas (RSS stays where it was after
    /// a clear of 100,000 entries); malloc_trim hands the free pages back.
    static func returnFreedMemory() {
        _ = mallocTrim?(0)
    }

    /// glibc's malloc_trim, looked up once: it is declared in <malloc.h>,
    /// which the Glibc module does not export (nil on another C library).
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
        return nil
        #endif
    }()

    // MARK: listeners (net.tail, events, persistence)

    /// Called with each new or updated entry, outside the lock, on the recording thread.
    @discardableResult
    public func listen(_ listener: @escaping @Sendable (NetworkEntry) -> Void) -> UInt64 {
        let id = listenerID.add(1, ordering: .relaxed).oldValue
        listeners.withLock { $0.append((id, listener)) }
        return id
    }

    /// Called as `listen`'s listeners are, with the new or updated entries
    /// in order: the entries `add(contentsOf:)` stores together come in one
    /// call (the persisted log serialises them on every processor).
    @discardableResult
    public func listen(batches listener: @escaping @Sendable ([NetworkEntry]) -> Void) -> UInt64 {
        let id = listenerID.add(1, ordering: .relaxed).oldValue
        batchListeners.withLock { $0.append((id, listener)) }
        return id
    }

    public func stopListening(_ id: UInt64) {
        listeners.withLock { $0.removeAll { $0.0 == id } }
        batchListeners.withLock { $0.removeAll { $0.0 == id } }
    }

    private func announce(_ entry: NetworkEntry) {
        for (_, l) in listeners.withLock({ $0 }) { l(entry) }
        for (_, l) in batchListeners.withLock({ $0 }) { l([entry]) }
    }

    private func announce(_ entries: [NetworkEntry]) {
        guard !entries.isEmpty else { return }
        for (_, l) in listeners.withLock({ $0 }) { for e in entries { l(e) } }
        for (_, l) in batchListeners.withLock({ $0 }) { l(entries) }
    }
}

/// Byte counts for people: "1 MiB", "512 KiB", "37 B".
public enum ByteCount {
    public static func text(_ n: Int) -> String {
        if n >= 1 << 20 && n % (1 << 20) == 0 { return "\(n >> 20) MiB" }
        if n >= 1 << 10 && n % (1 << 10) == 0 { return "\(n >> 10) KiB" }
        return "\(n) B"
    }
}
