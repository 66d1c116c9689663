// HAR 1.2 export (streamed) and import, without Foundation.
//
// Export: `HARExport.write(entries, creator:, to: sink)` writes
//
//     {"log":{"version":"1.2","creator":{...},"pages":[],"entries":[ e1 , e2 , ... ]}}
//
// entry by entry: only one entry's JSON is in memory at a time (plus a
// buffer of about `chunkSize` bytes handed to the sink), so a log of 100,000
// entries never becomes one big string. Rules beyond the HAR 1.2 schema:
//
// - `time` is the sum of the exported phases that are not -1, `ssl` excluded
//   (it is part of `connect`); blocked/dns/connect/ssl that are negative or
//   not finite become -1, send/wait/receive become 0; when `ssl` is known and
//   `connect` is smaller, `connect` is raised to `ssl`.
// - An entry without a response (state .failed or .pending, or no status)
//   exports status 0, statusText "", content {size 0, mimeType "x-unknown"},
//   bodySize 0 and `_error` (the transport error, or a sentence saying there
//   was no response).
// - `serverIPAddress` only when it is a valid IPv4 or IPv6 address.
// - Bodies are written so that the bytes come back exactly, in Pincer and
//   in mitmproxy 11 (`mitmdump -r file.har`), which is stricter than HAR
//   1.2 about it (see HARCharset below):
//   - response `content`: `text` when a reader gets the same bytes back
//     whichever charset rule it follows (ASCII, UTF-8 with a charset that is
//     UTF-8 for every reader, latin-1 text when latin-1 is declared); any
//     other stored body is base64 with `"encoding": "base64"`, which HAR 1.2
//     defines for `content`;
//   - request `postData`: HAR 1.2 defines no `encoding` there, and mitmproxy
//     encodes `text` with the request's charset as it infers it (UTF-8 for
//     JSON or a declared UTF-8, otherwise latin-1). So `text` is the UTF-8
//     text where that charset is UTF-8, and the latin-1 text (one character
//     per byte) where it is latin-1, marked `"_encoding": "latin-1"` when
//     that differs from plain text; both round-trip byte for byte. Only a
//     body the inferred charset cannot carry (not UTF-8 under a UTF-8
//     charset, or another charset) is base64 with `"_encoding": "base64"`
//     and a `comment`: mitmproxy reads that one as the base64 text.
// - Bodies the log does not hold (withheld/skipped/dropped) keep `size` (the
//   original size), carry `_bodyState` ("withheld"/"skipped"/"dropped"),
//   `_bodyWithheld` (why, for people) and the same reason in `comment`; a
//   request's `postData` has `"text": ""` (HAR 1.2 requires `text`, and
//   mitmproxy refuses the whole file without it).
// - `queryString` comes from the (redacted) URL, `cookies` from the Cookie
//   request headers and Set-Cookie response headers (name, value, path,
//   domain, httpOnly, secure; `expires` is left out).
// - `postData` has mimeType (the Content-Type header, else the body's media
//   type), `text` and, for application/x-www-form-urlencoded, `params`.
// - headersSize is -1; request bodySize is the request body size (0 without
//   one); response bodySize is the response body size; `cache` is {}.
// - The URL is made a valid RFC 3986 URI: bytes that may not appear in a URI
//   (spaces, quotes, non-ASCII, '[' ']' outside the host, a stray '%') are
//   percent-encoded. Valid URLs are unchanged.
// - Extensions: `_stubbed: true` for stubbed entries, `_notes` for the entry's notes.
// - pageref is omitted and `pages` is [].
import Dispatch
import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Export

public enum HARExport {
    /// Streams a HAR 1.2 document for `entries` to `sink`, in chunks of about
    /// `chunkSize` bytes (one chunk may be larger when one entry is). The
    /// chunks concatenated are the UTF-8 JSON document. Errors thrown by the
    /// sink stop the export and are rethrown.
    public static func write(_ entries: some Sequence<NetworkEntry>,
                             creator: (name: String, version: String),
                             chunkSize: Int = 1 << 16,
                             to sink: ([UInt8]) throws -> Void) rethrows {
        var document = Document(creator: creator, chunkSize: chunkSize)
        // Batches of entries are turned into bytes on every processor, then
        // written in order: memory stays bounded by one batch.
        var batch: [NetworkEntry] = []
        func flush() throws {
            for bytes in Parallel.map(batch, entryBytes) { try document.append(entry: bytes, to: sink) }
            batch.removeAll(keepingCapacity: true)
        }
        for entry in entries {
            batch.append(entry)
            if batch.count == Parallel.batchSize { try flush() }
        }
        try flush()
        try document.finish(to: sink)
    }

    /// The document around entries already written (`entryBytes`), handed
    /// to a sink in chunks of about `chunkSize` bytes: `write` streams
    /// through it, and so does net.export-har, whose entries are written in
    /// the pass that reads them from the persisted log.
    public struct Document {
        private var buffer: [UInt8] = []
        private var first = true
        private let chunkSize: Int

        public init(creator: (name: String, version: String), chunkSize: Int = 1 << 16) {
            self.chunkSize = chunkSize
            buffer.reserveCapacity(chunkSize + (64 << 10))
            let head = "{\"log\":{\"version\":\"1.2\",\"creator\":{\"name\":\(JSON.quote(creator.name)),\"version\":\(JSON.quote(creator.version))},\"pages\":[],\"entries\":["
            buffer.append(contentsOf: head.utf8)
        }

        /// One entry's bytes (`entryBytes`), after the ones before.
        public mutating func append(entry bytes: [UInt8], to sink: ([UInt8]) throws -> Void) rethrows {
            if !first { buffer.append(UInt8(ascii: ",")) }
            first = false
            buffer += bytes
            if buffer.count >= chunkSize {
                try sink(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }

        /// The end of the document, and what is left of it.
        public mutating func finish(to sink: ([UInt8]) throws -> Void) rethrows {
            buffer.append(contentsOf: "]}}\n".utf8)
            try sink(buffer)
            buffer = []
        }
    }

    /// The whole document in memory: for small logs and tests.
    public static func document(_ entries: some Sequence<NetworkEntry>,
                                creator: (name: String, version: String)) -> [UInt8] {
        var out: [UInt8] = []
        write(entries, creator: creator) { out.append(contentsOf: $0) }
        return out
    }

    /// Writes the document to `path` as `net.export-har` does: streamed into
    /// a temporary file beside it, flushed to disk (fsync) and renamed over
    /// `path`, so a reader never sees half a file. Returns the bytes written.
    @discardableResult
    public static func writeFile(_ entries: some Sequence<NetworkEntry>, creator: (name: String, version: String),
                                 to path: String) throws -> Int {
        var written = 0
        try TextFile.writeAtomically(to: path) { write in
            try HARExport.write(entries, creator: creator, chunkSize: fileChunkSize) { chunk in
                try write(chunk)
                written += chunk.count
            }
        }
        return written
    }

    /// What a file is written in: one write(2) a MiB.
    public static let fileChunkSize = 1 << 20

    /// One HAR entry object, as a tree (what `write` streams, parsed back).
    public static func entryJSON(_ entry: NetworkEntry) -> JSON {
        // The writer's output is JSON by construction.
        (try? JSON.parse(bytes: entryBytes(entry))) ?? .null
    }

    /// One HAR entry object's bytes, written straight through JSONWriter
    /// (no tree: building and freeing one per entry was most of an
    /// export's time).
    @Sendable public static func entryBytes(_ entry: NetworkEntry) -> [UInt8] {
        // About what the entry takes: its bodies (base64 grows by a third) and a page of the rest.
        let bodies = entry.requestBody.storedByteCount + entry.responseBody.storedByteCount
        var w = JSONWriter(capacity: bodies + bodies / 3 + 4096)
        write(entry, into: &w)
        return w.finish()
    }

    static func write(_ entry: NetworkEntry, into w: inout JSONWriter) {
        let timings = entry.timings.harNormalized
        let responded = entry.state == .complete && entry.status != nil
        w.beginObject()
        w.field("startedDateTime", HARDate.format(entry.startedAt))
        w.field("time", timings.total)
        w.key("request")
        request(entry, into: &w)
        w.key("response")
        if responded { response(entry, into: &w) } else { failedResponse(entry, into: &w) }
        w.key("cache")
        w.beginObject()
        w.endObject()
        w.key("timings")
        timings.write(into: &w)
        if let ip = entry.serverIP.flatMap(IPAddress.normalized) { w.field("serverIPAddress", ip) }
        if entry.stubbed { w.field("_stubbed", true) }
        if !entry.notes.isEmpty {
            w.key("_notes")
            w.beginArray()
            for note in entry.notes { w.string(note) }
            w.endArray()
        }
        if !entry.interventions.isEmpty {
            w.key("_interventions")
            w.beginArray()
            for i in entry.interventions { w.value(i.json) }
            w.endArray()
        }
        if let of = entry.replayOf {
            w.key("_replayOf")
            w.value(.uint(of))
        }
        w.endObject()
    }

    private static func request(_ entry: NetworkEntry, into w: inout JSONWriter) {
        let headers = entry.requestHeaderList
        w.beginObject()
        w.field("method", entry.method)
        w.field("url", URIText.escaped(entry.url))
        w.field("httpVersion", entry.httpVersion)
        w.key("cookies")
        w.beginArray()
        // Cookies.request reads only the Cookie headers: the others are not built.
        for c in Cookies.request(headers.all(named: "cookie")) { w.value(c) }
        w.endArray()
        w.key("headers")
        Header.write(headers, into: &w)
        w.key("queryString")
        w.beginArray()
        if let query = URLParts(entry.url)?.query {
            for pair in FormEncoding.pairs(query) { nameValue(pair.name, pair.value, into: &w) }
        }
        w.endArray()
        let body = entry.requestBody
        if body.payload != .none || body.size > 0 {
            w.key("postData")
            postData(body, contentType: headers.first("Content-Type"), into: &w)
        }
        w.field("headersSize", Int64(-1))
        w.field("bodySize", Int64(bodySize(body)))
        w.endObject()
    }

    private static func response(_ entry: NetworkEntry, into w: inout JSONWriter) {
        let body = entry.responseBody
        let headers = entry.responseHeaderList
        w.beginObject()
        w.field("status", Int64(entry.status ?? 0))
        w.field("statusText", entry.statusText)
        w.field("httpVersion", entry.httpVersion)
        w.key("cookies")
        w.beginArray()
        for c in Cookies.response(headers.all(named: "set-cookie")) { w.value(c) }
        w.endArray()
        w.key("headers")
        Header.write(headers, into: &w)
        w.key("content")
        content(body, contentType: headers.first("Content-Type"), into: &w)
        w.field("redirectURL", entry.redirectURL)
        w.field("headersSize", Int64(-1))
        w.field("bodySize", Int64(bodySize(body)))
        if let error = entry.error { w.field("_error", error) }
        w.endObject()
    }

    private static func failedResponse(_ entry: NetworkEntry, into w: inout JSONWriter) {
        let error = entry.error ?? (entry.state == .pending ? "no response yet (the request was still pending)" : "no response")
        w.beginObject()
        w.field("status", Int64(0))
        w.field("statusText", "")
        w.field("httpVersion", "")
        w.key("cookies")
        w.beginArray()
        w.endArray()
        w.key("headers")
        w.beginArray()
        w.endArray()
        w.key("content")
        w.beginObject()
        w.field("size", Int64(0))
        w.field("mimeType", "x-unknown")
        w.endObject()
        w.field("redirectURL", "")
        w.field("headersSize", Int64(-1))
        w.field("bodySize", Int64(0))
        w.field("_error", error)
        w.endObject()
    }

    private static func nameValue(_ name: String, _ value: String, into w: inout JSONWriter) {
        w.beginObject()
        w.field("name", name)
        w.field("value", value)
        w.endObject()
    }

    private static func bodySize(_ body: Body) -> Int {
        max(body.size, body.bytes?.count ?? 0)
    }

    /// Whether every byte is ASCII, eight at a time: such a body is its own
    /// text for every reader and charset rule (what HARCharset decides first).
    static func isASCII(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { b in
            guard let base = b.baseAddress else { return true }
            var i = 0
            var any: UInt64 = 0
            while b.count - i >= 8 {
                any |= UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                i += 8
            }
            while i < b.count { any |= UInt64(b[i]); i += 1 }
            return any & 0x8080_8080_8080_8080 == 0
        }
    }

    private static func content(_ body: Body, contentType: String?, into w: inout JSONWriter) {
        let mime = contentType ?? (body.mimeType.isEmpty ? "x-unknown" : body.mimeType)
        w.beginObject()
        w.field("size", Int64(bodySize(body)))
        w.field("mimeType", mime)
        if case .stored(let bytes) = body.payload {
            let mediaType = BodyText.mediaTypeOf(body, contentType: contentType)
            if BodyText.isTextual(mediaType) && isASCII(bytes) {
                // What HARCharset.responseText returns for it, without the String.
                w.key("text")
                bytes.withUnsafeBufferPointer { w.string(utf8: $0) }
            } else if let text = HARCharset.responseText(bytes, mediaType: mediaType, contentType: contentType) {
                w.field("text", text)
            } else {
                w.field("text", Base64.encode(bytes))
                w.field("encoding", "base64")
            }
        } else {
            writeMissing(body, into: &w)
        }
        w.endObject()
    }

    private static func postData(_ body: Body, contentType: String?, into w: inout JSONWriter) {
        let mime = contentType ?? body.mimeType
        w.beginObject()
        w.field("mimeType", mime)
        guard case .stored(let bytes) = body.payload else {
            // HAR 1.2 requires `text`; the comment and _bodyWithheld say why it is empty.
            w.field("text", "")
            writeMissing(body, into: &w)
            w.endObject()
            return
        }
        if isASCII(bytes) {
            // HARCharset.requestText's .text for it, without the String.
            w.key("text")
            bytes.withUnsafeBufferPointer { w.string(utf8: $0) }
        } else {
            switch HARCharset.requestText(bytes, contentType: contentType) {
            case .text(let text):
                w.field("text", text)
            case .latin1(let text):
                w.field("text", text)
                w.field("_encoding", "latin-1")
            case .base64(let text, let why):
                w.field("text", text)
                w.field("_encoding", "base64")
                w.field("comment", why)
            }
        }
        if BodyText.mediaTypeOf(body, contentType: contentType) == "application/x-www-form-urlencoded",
           let text = String(validating: bytes, as: UTF8.self) {
            w.key("params")
            w.beginArray()
            for pair in FormEncoding.pairs(text) { nameValue(pair.name, pair.value, into: &w) }
            w.endArray()
        }
        w.endObject()
    }

    /// A body the log does not hold (or never had): why, for our import and for people.
    private static func writeMissing(_ body: Body, into w: inout JSONWriter) {
        let state: String
        let reason: String
        switch body.payload {
        case .stored:
            return
        case .none:
            guard body.size > 0 else { return }
            w.field("comment", "not recorded")
            return
        case .withheld(let why):
            state = "withheld"
            reason = why.isEmpty ? "withheld" : why
        case .skipped:
            state = "skipped"
            reason = BodyText.skippedReason
        case .dropped:
            state = "dropped"
            reason = BodyText.droppedReason
        }
        w.field("_bodyState", state)
        w.field("_bodyWithheld", reason)
        w.field("comment", "body not included (\(state)): \(reason)")
    }
}

/// The seven phases as exported, and `time`.
extension Timings {
    /// The phases as HAR 1.2 wants them: an unknown optional phase is -1, an
    /// unknown required one 0, and `connect` at least `ssl` (which it
    /// contains). Written with `write(into:)`; HAR's `time` is its `total`.
    var harNormalized: Timings {
        func optional(_ v: Double) -> Double { v.isFinite && v >= 0 ? v : -1 }
        func required(_ v: Double) -> Double { v.isFinite && v >= 0 ? v : 0 }
        var t = Timings()
        t.blocked = optional(blocked)
        t.dns = optional(dns)
        t.ssl = optional(ssl)
        t.connect = optional(connect)
        if t.ssl >= 0 && t.connect < t.ssl { t.connect = t.ssl }
        t.send = required(send)
        t.wait = required(wait)
        t.receive = required(receive)
        return t
    }
}

// MARK: - Import

/// Why a HAR file could not be read at all.
public enum HARImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file is not JSON; the error has the line and column.
    case notJSON(JSONSyntaxError)
    /// The file is JSON but not HAR (no `log.entries` array).
    case notHAR(String)

    public var description: String {
        switch self {
        case .notJSON(let e): "not a HAR file: not JSON: \(e)"
        case .notHAR(let message): "not a HAR file: \(message)"
        }
    }

    /// The position of a JSON syntax error.
    public var line: Int? { if case .notJSON(let e) = self { e.line } else { nil } }
    public var column: Int? { if case .notJSON(let e) = self { e.column } else { nil } }
}

public struct HARImportResult: Sendable {
    /// The entries read, in file order: source .imported, id 0, bodies as
    /// found in the file (`.stored`, unredacted: the store redacts on ingest).
    public var entries: [NetworkEntry]
    /// Entries that could not be read: their index in `log.entries`, the
    /// byte offset in the file where the entry starts (nil when the file was
    /// not read entry by entry, see `HARImport.stream`) and why.
    public var skipped: [(index: Int, offset: Int?, reason: String)]
    /// `log.creator` as "name version", when present.
    public var creator: String?
}

/// What `HARImport.stream` read, beside the entries it handed over.
public struct HARImportSummary: Sendable {
    /// Entries read and handed to the consumer (less `ignored`).
    public var read = 0
    /// Entries read that the `prepare` of `stream`/`readFile` dropped (an
    /// ignore rule); counted in `read`, not handed over.
    public var ignored = 0
    /// Entries that could not be read (as in `HARImportResult.skipped`).
    public var skipped: [(index: Int, offset: Int?, reason: String)] = []
    /// `log.creator` as "name version", when present.
    public var creator: String?

    /// Counts a converted batch whose first entry is `log.entries[firstIndex]`
    /// and hands its entries on.
    mutating func add(_ converted: [Result<NetworkEntry?, HARImport.SkipReason>], firstIndex: Int, offsets: [Int]?,
                      _ consume: ([NetworkEntry]) -> Void) {
        var entries: [NetworkEntry] = []
        entries.reserveCapacity(converted.count)
        for (k, outcome) in converted.enumerated() {
            switch outcome {
            case .success(let e?): entries.append(e)
            case .success(nil): ignored += 1
            case .failure(let reason): skipped.append((index: firstIndex + k, offset: offsets?[k], reason: reason.message))
            }
        }
        read += entries.count + converted.count(where: { if case .success(nil) = $0 { true } else { false } })
        if !entries.isEmpty { consume(entries) }
    }
}

/// The bytes of a file being imported, shared with the workers that parse
/// its entries (read only while `stream` runs).
struct SharedBytes: @unchecked Sendable {
    let bytes: UnsafeBufferPointer<UInt8>
    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }
}

/// A file mapped read-only: a 584 MB HAR is paged in as it is read and can
/// be dropped from memory again by the kernel, where reading it into an
/// array would hold all of it (and briefly twice while the array grows).
final class MappedFile {
    let bytes: UnsafeBufferPointer<UInt8>
    private let fd: Int32
    private var closed = false

    /// nil when `path` is not a regular file (read it another way).
    init?(_ path: String) throws {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CommandError("cannot open \(path): \(String(cString: strerror(errno)))", status: PINCER_NOT_FOUND)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let why = String(cString: strerror(errno))
            Glibc.close(fd)
            throw CommandError("cannot read \(path): \(why)")
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            Glibc.close(fd)
            throw CommandError("cannot read \(path): it is a directory", status: PINCER_INVALID_ARGUMENT)
        }
        if info.st_mode & S_IFMT != S_IFREG {
            Glibc.close(fd)
            return nil
        }
        let size = Int(info.st_size)
        if size == 0 {
            bytes = UnsafeBufferPointer(start: nil, count: 0)
            return
        }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            let why = String(cString: strerror(errno))
            Glibc.close(fd)
            throw CommandError("cannot map \(path): \(why)")
        }
        // Read front to back twice (the syntax check, then the entries).
        madvise(base, size, MADV_SEQUENTIAL)
        bytes = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: size)
    }

    /// Hands back the pages of the first `n` bytes (they are read in again
    /// from the page cache if touched).
    func drop(upTo n: Int) {
        guard let base = bytes.baseAddress, !closed else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let length = min(n, bytes.count) / page * page
        if length > 0 { madvise(UnsafeMutableRawPointer(mutating: base), length, MADV_DONTNEED) }
    }

    func close() {
        guard !closed else { return }
        closed = true
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
        Glibc.close(fd)
    }

    deinit { close() }
}

/// Reads HAR files, keeping every entry it can and counting the rest.
///
/// Lenient about what real tools write: a UTF-8 BOM; `version` as a number;
/// headers as [{name, value}], as [[name, value]] or as an object {name:
/// value or [values]}; null or missing headersSize/bodySize/redirectURL;
/// empty or partial timings (missing phases: -1, or 0 for send/wait/receive;
/// when all are 0 and `time` > 0, `time` goes into `wait`); `content: {}`;
/// base64 bodies with line breaks or without padding.
///
/// - An entry that is not an object, or whose request is missing or has no
///   method or URL, is skipped with a reason.
/// - An entry without a response imports as failed with error "no response in HAR".
/// - Status 0 (or a response without a numeric status) imports as failed,
///   with the response's `_error` as the error, else "no response (status 0 in HAR)";
///   an `_error` beside a real status becomes a note.
/// - Bodies: `text` is base64-decoded when `encoding` (or our postData
///   `_encoding`) is "base64", latin-1 encoded when `_encoding` is
///   "latin-1", and otherwise encoded with the body's charset as the
///   file's writer chose it (HARCharset): mitmproxy writes binary and
///   unlabelled bodies as latin-1 text, so a file whose creator is mitmproxy
///   is read with mitmproxy's rule and its bytes come back exactly; other
///   files with the declared charset, else UTF-8. postData `params` are
///   form-encoded when `text` is absent or empty; a body the file does not
///   include (size > 0, no text) becomes `.withheld`; our own `_bodyState`
///   is read back; invalid base64 becomes `.withheld` with a note.
///
/// Reading streams (`stream`, `readFile`): the file's syntax is checked
/// whole first (`JSON.validate`, which builds nothing), so a file that is not
/// JSON imports nothing at all, and its error names the line and column and,
/// when it lies inside an entry, that entry's index and byte offset. Then the
/// entries of `log.entries` are parsed and converted a batch at a time (on
/// every processor) and handed over in file order; only one batch of parsed
/// entries exists at once, never a tree of the whole file. An import is thus
/// all-or-nothing for the file's syntax and for a file that is not HAR; an
/// entry that is valid JSON but not a usable HAR entry is skipped and
/// reported (index, byte offset, reason) while the others are imported,
/// as before. The depth limit is PincerJSON's (512) for the file and for
/// each entry.
public enum HARImport {
    /// The whole file's entries in memory: for tests and small files.
    public static func read(_ bytes: [UInt8]) throws(HARImportError) -> HARImportResult {
        var entries: [NetworkEntry] = []
        let summary = try bytes.withUnsafeBufferPointer { buffer throws(HARImportError) in
            try stream(buffer) { entries += $0 }
        }
        return HARImportResult(entries: entries, skipped: summary.skipped, creator: summary.creator)
    }

    /// Entries parsed and converted together by `stream`.
    public static let batchSize = 1024

    /// Reads a HAR document, handing its entries to `consume` in file order,
    /// at most `batchSize` at a time (see "Reading streams" above).
    public static func stream(_ bytes: UnsafeBufferPointer<UInt8>, prepare: @escaping Prepare = { $0 },
                              into consume: ([NetworkEntry]) -> Void) throws(HARImportError) -> HARImportSummary {
        try stream(bytes, done: { _ in }, prepare: prepare, into: consume)
    }

    /// What happens to each entry on the thread that converted it, before
    /// it is handed over (a store's redaction); nil drops it (`ignored`).
    /// Done there, an entry goes from its JSON to its stored form while it
    /// is in that processor's cache, with one wait per batch, not two.
    public typealias Prepare = @Sendable (NetworkEntry) -> NetworkEntry?

    /// `done(n)`: the first n bytes will not be read again (a mapped file
    /// hands their pages back).
    static func stream(_ bytes: UnsafeBufferPointer<UInt8>, done: (Int) -> Void, prepare: @escaping Prepare = { $0 },
                       into consume: ([NetworkEntry]) -> Void) throws(HARImportError) -> HARImportSummary {
        let file = SharedBytes(bytes)
        // The whole file's syntax is checked before any entry is handed over:
        // piece by piece on other processors while the scan finds the
        // entries, when it finds the entries array, else (or when a piece
        // fails, for the exact line and column) in one pass over the whole.
        let (scanned, piecesValid) = EntriesSplitter.scanPieces(file)
        if !piecesValid {
            do { try JSON.validate(bytes: bytes) } catch { throw .notJSON(EntriesSplitter.locate(error, in: bytes)) }
        }
        // The check read every page; the entries are read again from the start.
        done(bytes.count)
        if let found = scanned {
            var skeleton = Array(bytes[..<(found.open + 1)])
            skeleton += bytes[found.close...]
            let top: JSON
            do { top = try JSON.parse(bytes: skeleton) } catch { throw .notJSON(error) }
            let (log, _) = try logAndEntries(top)
            let rule = HARCharset.Rule(creator: log)
            var summary = HARImportSummary(creator: creator(log))
            var start = 0
            while start < found.elements.count {
                let batch = Array(found.elements[start..<min(found.elements.count, start + batchSize)])
                // Each worker parses an element, converts it and frees its JSON.
                let converted = Parallel.map(batch) { range -> Result<NetworkEntry?, SkipReason> in
                    // The file as a whole is valid JSON, so each element is too.
                    guard let json = try? JSON.parse(bytes: UnsafeBufferPointer(rebasing: file.bytes[range])) else {
                        return .failure(SkipReason(message: "the entry could not be parsed on its own"))
                    }
                    return entry(json, rule: rule).map(prepare)
                }
                summary.add(converted, firstIndex: start, offsets: batch.map { EntriesSplitter.valueStart($0, in: bytes) }, consume)
                start += batch.count
                if let last = batch.last { done(last.upperBound) }
            }
            return summary
        }
        // Valid JSON the scan does not follow (an escaped key name such as
        // "entr\u0069es"): parse it whole.
        let root: JSON
        do { root = try JSON.parse(bytes: bytes) } catch { throw .notJSON(error) }
        let (log, list) = try logAndEntries(root)
        let rule = HARCharset.Rule(creator: log)
        var summary = HARImportSummary(creator: creator(log))
        var start = 0
        while start < list.count {
            let batch = Array(list[start..<min(list.count, start + batchSize)])
            summary.add(Parallel.map(batch) { entry($0, rule: rule).map(prepare) }, firstIndex: start, offsets: nil, consume)
            start += batch.count
        }
        return summary
    }

    /// Streams the HAR file at `path` (mapped, not read into memory) into
    /// `consume`; errors name the path.
    /// A pipe or device (`/dev/stdin`) cannot be mapped: it is read into memory.
    public static func readFile(_ path: String, prepare: @escaping Prepare = { $0 },
                                into consume: ([NetworkEntry]) -> Void) throws -> HARImportSummary {
        guard let mapped = try MappedFile(path) else {
            let bytes = try TextFile.readBytes(path)
            do {
                return try bytes.withUnsafeBufferPointer { buffer throws(HARImportError) in try stream(buffer, prepare: prepare, into: consume) }
            } catch {
                throw CommandError.invalidArgument("\(path): \(error)")
            }
        }
        defer { mapped.close() }
        do {
            return try stream(mapped.bytes, done: mapped.drop(upTo:), prepare: prepare, into: consume)
        } catch {
            throw CommandError.invalidArgument("\(path): \(error)")
        }
    }

    /// `log` and `log.entries` of a parsed document, or why it is not HAR.
    static func logAndEntries(_ root: JSON) throws(HARImportError) -> (log: JSON, entries: [JSON]) {
        guard case .object = root else {
            throw .notHAR("the top level is \(article(root.typeName)), not an object with \"log\"")
        }
        guard let log = root["log"] else { throw .notHAR("no \"log\" object at the top level") }
        guard case .object = log else { throw .notHAR("\"log\" is \(article(log.typeName)), not an object") }
        guard let entriesJSON = log["entries"] else { throw .notHAR("\"log\" has no \"entries\" array") }
        guard let list = entriesJSON.arrayValue else {
            throw .notHAR("\"log.entries\" is \(article(entriesJSON.typeName)), not an array")
        }
        return (log, list)
    }

    /// For tests: the result of converting parsed entries.
    static func result(log: JSON, _ converted: [Result<NetworkEntry, SkipReason>]) -> HARImportResult {
        var entries: [NetworkEntry] = []
        var summary = HARImportSummary(creator: creator(log))
        summary.add(converted.map { $0.map(Optional.init) }, firstIndex: 0, offsets: nil) { entries += $0 }
        return HARImportResult(entries: entries, skipped: summary.skipped, creator: summary.creator)
    }

    /// `log.creator` as "name version".
    static func creator(_ log: JSON) -> String? {
        guard let name = log["creator"]?["name"]?.stringValue else { return nil }
        let version = log["creator"]?["version"].flatMap(scalarString) ?? ""
        return version.isEmpty ? name : name + " " + version
    }

    struct SkipReason: Error { let message: String }

    /// One entry; `rule` is how its bodies' `text` becomes bytes (from `log.creator`).
    static func entry(_ json: JSON, rule: HARCharset.Rule = .declaredOrUTF8) -> Result<NetworkEntry, SkipReason> {
        guard case .object = json else { return .failure(SkipReason(message: "the entry is \(article(json.typeName)), not an object")) }
        guard let request = json["request"], request != .null else { return .failure(SkipReason(message: "the entry has no request")) }
        guard case .object = request else { return .failure(SkipReason(message: "the request is \(article(request.typeName)), not an object")) }
        guard let method = request["method"]?.stringValue, !method.isEmpty else {
            return .failure(SkipReason(message: "the request has no method"))
        }
        guard let url = request["url"]?.stringValue, !url.isEmpty else {
            return .failure(SkipReason(message: "the request has no url"))
        }
        var notes: [String] = []
        var startedAt = 0.0
        if let text = json["startedDateTime"]?.stringValue, let t = HARDate.parse(text) {
            startedAt = t
        } else {
            notes.append("HAR import: startedDateTime missing or not a date")
        }
        var entry = NetworkEntry(source: .imported, startedAt: startedAt, method: method, url: url)
        let response: JSON? = json["response"].flatMap { $0.objectValue == nil ? nil : $0 }
        if let v = request["httpVersion"]?.stringValue, !v.isEmpty {
            entry.httpVersion = v
        } else if let v = response?["httpVersion"]?.stringValue, !v.isEmpty {
            entry.httpVersion = v
        }
        // Headers are held packed: keep the array built here for the body.
        let requestHeaders = headers(request["headers"], side: "request", notes: &notes)
        entry.requestHeaders = requestHeaders
        entry.requestBody = requestBody(request, headers: requestHeaders, rule: rule, notes: &notes)

        if let response {
            let status = response["status"]?.int64Value.flatMap { Int(exactly: $0) } ?? 0
            let harError = response["_error"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            if status > 0 {
                entry.state = .complete
                entry.status = status
                entry.statusText = response["statusText"]?.stringValue ?? ""
                let responseHeaders = headers(response["headers"], side: "response", notes: &notes)
                entry.responseHeaders = responseHeaders
                entry.responseBody = responseBody(response, headers: responseHeaders, rule: rule, notes: &notes)
                entry.redirectURL = response["redirectURL"]?.stringValue ?? ""
                if let harError { notes.append("HAR _error: \(harError)") }
            } else {
                entry.state = .failed
                entry.error = harError ?? (response["status"]?.int64Value == nil
                    ? "no response (no status in HAR)" : "no response (status 0 in HAR)")
            }
        } else {
            entry.state = .failed
            entry.error = "no response in HAR"
        }
        entry.timings = timings(json["timings"], time: json["time"]?.doubleValue)
        if let ip = json["serverIPAddress"]?.stringValue, !ip.isEmpty { entry.serverIP = ip }
        if json["_stubbed"]?.boolValue == true { entry.stubbed = true }
        entry.interventions = json["_interventions"]?.arrayValue?.compactMap(Intervention.init(json:)) ?? []
        entry.replayOf = json["_replayOf"]?.int64Value.flatMap { $0 > 0 ? UInt64($0) : nil }
        if let saved = json["_notes"]?.arrayValue { notes = saved.compactMap(\.stringValue) + notes }
        entry.notes = notes
        return .success(entry)
    }

    // MARK: Parts

    static func headers(_ json: JSON?, side: String, notes: inout [String]) -> [Header] {
        var out: [Header] = []
        var malformed = 0
        switch json {
        case .array(let items)?:
            for item in items {
                switch item {
                case .object:
                    if let name = item["name"]?.stringValue, !name.isEmpty {
                        out.append(Header(name, item["value"].flatMap(scalarString) ?? ""))
                    } else {
                        malformed += 1
                    }
                case .array(let pair) where pair.count == 2:
                    if let name = pair[0].stringValue, !name.isEmpty, let value = scalarString(pair[1]) {
                        out.append(Header(name, value))
                    } else {
                        malformed += 1
                    }
                default:
                    malformed += 1
                }
            }
        case .object(let members)?:
            for (name, value) in members where !name.isEmpty {
                if let list = value.arrayValue {
                    for v in list {
                        if let s = scalarString(v) { out.append(Header(name, s)) } else { malformed += 1 }
                    }
                } else if let s = scalarString(value) {
                    out.append(Header(name, s))
                } else {
                    malformed += 1
                }
            }
        case nil, .null?:
            break
        default:
            notes.append("HAR import: \(side) headers are not a list")
        }
        if malformed > 0 {
            notes.append("HAR import: \(malformed) malformed \(side) header\(malformed == 1 ? "" : "s") dropped")
        }
        return out
    }

    static func requestBody(_ request: JSON, headers: [Header], rule: HARCharset.Rule, notes: inout [String]) -> Body {
        let declared = request["bodySize"]?.int64Value.flatMap { Int(exactly: $0) } ?? -1
        guard let post = request["postData"], case .object = post else {
            return declared > 0 ? Body(payload: .withheld(reason: "not included in the HAR file"), size: declared,
                                       mimeType: mediaType(headers.first("Content-Type"))) : .empty
        }
        var mime = mediaType(post["mimeType"]?.stringValue)
        if mime.isEmpty { mime = mediaType(headers.first("Content-Type")) }
        if let state = savedState(post) {
            return Body(payload: state, size: max(declared, 0), mimeType: mime)
        }
        var bytes: [UInt8]?
        if let text = post["text"]?.stringValue, !text.isEmpty {
            bytes = decodeText(text, encoding: post["_encoding"]?.stringValue ?? post["encoding"]?.stringValue,
                               contentType: headers.first("Content-Type") ?? post["mimeType"]?.stringValue, rule: rule,
                               what: "request body", notes: &notes)
            if bytes == nil {
                return Body(payload: .withheld(reason: "the HAR file's base64 is not valid"), size: max(declared, 0), mimeType: mime)
            }
        } else if let params = post["params"]?.arrayValue, !params.isEmpty {
            var pairs: [(name: String, value: String)] = []
            for p in params {
                guard let name = p["name"]?.stringValue else { continue }
                pairs.append((name, p["value"].flatMap(scalarString) ?? ""))
            }
            bytes = Array(FormEncoding.encode(pairs).utf8)
            if mime.isEmpty { mime = "application/x-www-form-urlencoded" }
        }
        guard let bytes else {
            return declared > 0 ? Body(payload: .withheld(reason: "not included in the HAR file"), size: declared, mimeType: mime)
                                : Body(payload: .none, size: 0, mimeType: mime)
        }
        return Body(payload: .stored(bytes), size: declared > 0 ? declared : bytes.count, mimeType: mime)
    }

    static func responseBody(_ response: JSON, headers: [Header], rule: HARCharset.Rule, notes: inout [String]) -> Body {
        guard let content = response["content"], case .object = content else {
            return Body(payload: .none, size: 0, mimeType: mediaType(headers.first("Content-Type")))
        }
        var mime = mediaType(content["mimeType"]?.stringValue)
        if mime == "x-unknown" { mime = "" }
        if mime.isEmpty { mime = mediaType(headers.first("Content-Type")) }
        let declared = content["size"]?.int64Value.flatMap { Int(exactly: $0) } ?? -1
        if let state = savedState(content) {
            return Body(payload: state, size: max(declared, 0), mimeType: mime)
        }
        guard let text = content["text"]?.stringValue, !text.isEmpty else {
            if declared > 0 || content["comment"]?.stringValue != nil {
                let why = content["comment"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "not included in the HAR file"
                return Body(payload: .withheld(reason: why), size: max(declared, 0), mimeType: mime)
            }
            return Body(payload: .none, size: 0, mimeType: mime)
        }
        guard let bytes = decodeText(text, encoding: content["encoding"]?.stringValue,
                                     contentType: headers.first("Content-Type") ?? content["mimeType"]?.stringValue, rule: rule,
                                     what: "response body", notes: &notes) else {
            return Body(payload: .withheld(reason: "the HAR file's base64 is not valid"), size: max(declared, 0), mimeType: mime)
        }
        return Body(payload: .stored(bytes), size: declared > 0 ? declared : bytes.count, mimeType: mime)
    }

    /// Our own export's record of a body it did not include.
    private static func savedState(_ json: JSON) -> BodyPayload? {
        let reason = json["_bodyWithheld"]?.stringValue
        switch json["_bodyState"]?.stringValue {
        case "skipped": return .skipped
        case "dropped": return .dropped
        case "withheld": return .withheld(reason: reason ?? "withheld")
        default: return reason.map { .withheld(reason: $0) }
        }
    }

    /// The bytes of a body's `text`: base64 or latin-1 when the file says so,
    /// else encoded with the charset `rule` finds; nil for invalid base64.
    private static func decodeText(_ text: String, encoding: String?, contentType: String?, rule: HARCharset.Rule,
                                   what: String, notes: inout [String]) -> [UInt8]? {
        if let encoding, !encoding.isEmpty {
            if encoding.lowercased() == "base64" {
                if let bytes = Base64.decode(text) { return bytes }
                notes.append("HAR import: the \(what) is marked base64 but is not valid base64")
                return nil
            }
            if HARCharset.named(encoding) == .latin1 {
                if let bytes = HARCharset.latin1.encode(text) { return bytes }
                notes.append("HAR import: the \(what) is marked latin-1 but has characters above U+00FF; kept as UTF-8")
                return Array(text.utf8)
            }
            notes.append("HAR import: unknown \(what) encoding \"\(encoding)\", kept as text")
            return Array(text.utf8)
        }
        let charset = rule.charset(contentType: contentType, text: text)
        if let bytes = charset.encode(text) { return bytes }
        // The charset cannot hold the text (latin-1 above U+00FF) or is one
        // this reader does not know: UTF-8, as mitmproxy falls back too.
        if case .other(let name) = charset, text.utf8.contains(where: { $0 >= 0x80 }) {
            notes.append("HAR import: the \(what)'s charset \"\(name)\" is not supported here; its text is kept as UTF-8")
        }
        return Array(text.utf8)
    }

    static func timings(_ json: JSON?, time: Double?) -> Timings {
        var t = Timings()
        func phase(_ key: String) -> Double? {
            guard let v = json?[key]?.doubleValue, v.isFinite else { return nil }
            return v
        }
        t.blocked = phase("blocked").map { $0 >= 0 ? $0 : -1 } ?? -1
        t.dns = phase("dns").map { $0 >= 0 ? $0 : -1 } ?? -1
        t.connect = phase("connect").map { $0 >= 0 ? $0 : -1 } ?? -1
        t.ssl = phase("ssl").map { $0 >= 0 ? $0 : -1 } ?? -1
        t.send = max(phase("send") ?? 0, 0)
        t.wait = max(phase("wait") ?? 0, 0)
        t.receive = max(phase("receive") ?? 0, 0)
        if t.total == 0, let time, time.isFinite, time > 0 { t.wait = time }
        return t
    }

    /// A string, number or boolean as text (header values written by tools
    /// that do not quote numbers); nil for null, arrays and objects.
    static func scalarString(_ json: JSON) -> String? {
        switch json {
        case .string(let s): s
        case .int(let i): String(i)
        case .uint(let u): String(u)
        case .double(let d): d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .bool(let b): b ? "true" : "false"
        default: nil
        }
    }

    private static func article(_ typeName: String) -> String {
        typeName == "array" || typeName == "object" ? "an \(typeName)" : "a \(typeName)"
    }
}

// MARK: - Body text and charsets

/// How a HAR body's `text` maps to bytes. HAR holds bodies as decoded text,
/// and the bytes come back by encoding it with the body's charset; readers
/// differ on that charset when the Content-Type declares none:
///
/// - browsers (and files from other tools) decode with the declared charset,
///   else UTF-8;
/// - mitmproxy 11 uses `infer_content_encoding` (mitmproxy/net/http/headers.py):
///   the `charset` parameter, else UTF-8 when the Content-Type contains
///   "json", else an HTML `<meta charset>` or a CSS `@charset` found in the
///   body, else latin-1. It writes HAR text with that charset
///   (`get_text`, addons/savehar.py: a binary request body becomes latin-1
///   text, one character per byte), and reads `postData.text` and
///   `content.text` back with it (io/har.py, without the body, so without
///   the HTML and CSS probes), falling back to UTF-8 when the text does not
///   fit the charset.
///
/// Only ASCII, UTF-8 under a charset both rules call UTF-8, and latin-1
/// under a declared latin-1 mean the same bytes to every reader.
public enum HARCharset: Equatable, Sendable {
    case utf8
    case latin1
    case ascii
    /// A charset this code cannot encode (its name as written).
    case other(String)

    /// Who wrote the file decides how its unlabelled text is read.
    public enum Rule: Equatable, Sendable {
        /// The declared charset, else UTF-8.
        case declaredOrUTF8
        /// mitmproxy's `infer_content_encoding`, with the body.
        case mitmproxy

        /// `log.creator.name` "mitmproxy" means mitmproxy's rule.
        init(creator log: JSON) {
            self = log["creator"]?["name"]?.stringValue?.lowercased() == "mitmproxy" ? .mitmproxy : .declaredOrUTF8
        }

        func charset(contentType: String?, text: String) -> HARCharset {
            switch self {
            case .declaredOrUTF8: HARCharset.declared(contentType) ?? .utf8
            case .mitmproxy: HARCharset.mitmproxy(contentType, body: Array(text.utf8))
            }
        }
    }

    /// A charset by name, as Python's codec lookup normalises names
    /// (lowercase; runs of anything but letters, digits and '.' become '_').
    static func named(_ name: String) -> HARCharset? {
        var normalised = ""
        var pendingUnderscore = false
        for c in name.lowercased().unicodeScalars {
            if (c >= "a" && c <= "z") || (c >= "0" && c <= "9") || c == "." {
                if pendingUnderscore && !normalised.isEmpty { normalised += "_" }
                pendingUnderscore = false
                normalised.unicodeScalars.append(c)
            } else {
                pendingUnderscore = true
            }
        }
        switch normalised {
        case "": return nil
        case "utf_8", "utf8", "u8", "utf", "cp65001", "utf8_ucs2", "utf8_ucs4": return .utf8
        case "latin_1", "latin1", "latin", "l1", "iso_8859_1", "iso8859_1", "8859", "cp819", "iso_ir_100", "csisolatin1",
             "ibm819", "iso_8859_1_1987":
            return .latin1
        case "ascii", "us_ascii", "646", "us", "cp367", "csascii", "ibm367", "iso646_us", "iso_646.irv_1991", "iso_ir_6",
             "ansi_x3.4_1968", "ansi_x3_4_1968", "ansi_x3.4_1986":
            return .ascii
        default: return .other(name)
        }
    }

    /// The `charset` parameter of a Content-Type (case-insensitive name,
    /// quotes removed), for the declared-or-UTF-8 rule.
    static func declared(_ contentType: String?) -> HARCharset? {
        guard let contentType else { return nil }
        // On the UTF-8 bytes: Foundation's trimming was a tenth of converting an entry.
        func trimmed(_ s: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
            var s = s
            while let c = s.first, c == 0x20 || c == 0x09 { s.removeFirst() }
            while let c = s.last, c == 0x20 || c == 0x09 { s.removeLast() }
            return s
        }
        let bytes = Array(contentType.utf8)
        for parameter in bytes.split(separator: UInt8(ascii: ";")).dropFirst() {
            guard let eq = parameter.firstIndex(of: UInt8(ascii: "=")) else { continue }
            // Only ASCII letters lowercase to those of "charset".
            guard trimmed(parameter[..<eq]).map({ $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }).elementsEqual("charset".utf8) else { continue }
            var value = trimmed(parameter[(eq + 1)...])
            if value.count >= 2, value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\"") { value = value.dropFirst().dropLast() }
            return named(String(decoding: value, as: UTF8.self))
        }
        return nil
    }

    /// mitmproxy 11's `infer_content_encoding(content_type, body)`, step by
    /// step: its parameter parsing is exact ("charset" lowercase, the value
    /// as written); the HTML and CSS probes run only when `body` is given.
    static func mitmproxy(_ contentType: String?, body: [UInt8]?) -> HARCharset {
        let ct = contentType ?? ""
        let pieces = ct.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        if pieces.count == 2, pieces[0].contains("/") {
            // Python's dict keeps the last of repeated keys.
            var value: String?
            for clause in pieces[1].split(separator: ";", omittingEmptySubsequences: false) {
                guard let eq = clause.firstIndex(of: "=") else { continue }
                if String(clause[..<eq]).trimmingCharacters(in: " \t\r\n") == "charset" {
                    value = String(clause[clause.index(after: eq)...]).trimmingCharacters(in: " \t\r\n")
                }
            }
            if let value, !value.isEmpty { return named(value) ?? .other(value) }
        }
        if ct.contains("json") { return .utf8 }
        if let body, ct.contains("html"), let name = metaCharset(body) { return named(name) ?? .other(name) }
        if let body, ct.contains("text/css"), let name = cssCharset(body) { return named(name) ?? .other(name) }
        return .latin1
    }

    /// `<meta[^>]+charset=['"]?([^'">]+)`, case-insensitive, first match.
    static func metaCharset(_ b: [UInt8]) -> String? {
        func lower(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c + 0x20 : c }
        func at(_ i: Int, _ word: [UInt8]) -> Bool {
            i + word.count <= b.count && word.indices.allSatisfy { lower(b[i + $0]) == word[$0] }
        }
        let meta = Array("<meta".utf8), charset = Array("charset=".utf8)
        var i = 0
        while i < b.count {
            defer { i += 1 }
            guard at(i, meta) else { continue }
            // [^>]+ is greedy: the last "charset=" before the tag's first '>' that has a value.
            let start = i + meta.count
            var end = start
            while end < b.count && b[end] != UInt8(ascii: ">") { end += 1 }
            var k = end - charset.count
            while k >= start + 1 {
                if at(k, charset) {
                    var v = k + charset.count
                    if v < b.count, b[v] == UInt8(ascii: "'") || b[v] == UInt8(ascii: "\"") { v += 1 }
                    var e = v
                    while e < b.count, ![UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: ">")].contains(b[e]) { e += 1 }
                    if e > v { return String(decoding: b[v..<e], as: UTF8.self) }
                }
                k -= 1
            }
        }
        return nil
    }

    /// `@charset "([^"]+)";` at the very start, case-insensitive.
    static func cssCharset(_ b: [UInt8]) -> String? {
        let head = Array("@charset \"".utf8)
        guard b.count > head.count, zip(b, head).allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0) == $1 }) else { return nil }
        var e = head.count
        while e < b.count && b[e] != UInt8(ascii: "\"") { e += 1 }
        guard e > head.count, e + 1 < b.count, b[e + 1] == UInt8(ascii: ";") else { return nil }
        return String(decoding: b[head.count..<e], as: UTF8.self)
    }

    /// The text's bytes in this charset; nil when the charset cannot hold
    /// the text (or is not one this code knows).
    func encode(_ text: String) -> [UInt8]? {
        switch self {
        case .utf8:
            return Array(text.utf8)
        case .latin1, .ascii:
            let limit: UInt32 = self == .latin1 ? 0xFF : 0x7F
            var out: [UInt8] = []
            out.reserveCapacity(text.utf8.count)
            for scalar in text.unicodeScalars {
                guard scalar.value <= limit else { return nil }
                out.append(UInt8(scalar.value))
            }
            return out
        case .other:
            return nil
        }
    }

    /// The bytes as text in this charset; nil when they are not text in it.
    func decode(_ bytes: [UInt8]) -> String? {
        switch self {
        case .utf8: return String(validating: bytes, as: UTF8.self)
        case .latin1: return HARCharset.latin1Text(bytes)
        case .ascii: return bytes.allSatisfy { $0 < 0x80 } ? String(decoding: bytes, as: UTF8.self) : nil
        case .other: return nil
        }
    }

    /// One character per byte (U+0000-U+00FF).
    static func latin1Text(_ bytes: [UInt8]) -> String {
        var s = ""
        s.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
        return s
    }

    /// The response `content.text` for a stored body, or nil for base64:
    /// text only when every reader gets these bytes back from it.
    static func responseText(_ bytes: [UInt8], mediaType: String, contentType: String?) -> String? {
        guard BodyText.isTextual(mediaType) else { return nil }
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        let theirs = mitmproxy(contentType, body: nil), ours = declared(contentType) ?? .utf8
        switch (theirs, ours) {
        case (.utf8, .utf8): return String(validating: bytes, as: UTF8.self)
        case (.latin1, .latin1): return latin1Text(bytes)
        default: return nil
        }
    }

    /// How a request body is written in `postData.text`.
    enum RequestText: Equatable {
        /// Plain text: the same bytes for every reader.
        case text(String)
        /// One character per byte, for a body whose charset (as mitmproxy
        /// infers it) is latin-1; marked `_encoding: "latin-1"`.
        case latin1(String)
        /// No text form that mitmproxy reads back exactly: base64, marked
        /// `_encoding: "base64"`, with why in `comment`.
        case base64(String, why: String)
    }

    /// The postData text of a stored request body, chosen with the charset
    /// mitmproxy reads it with (it has no `encoding` to look at).
    static func requestText(_ bytes: [UInt8], contentType: String?) -> RequestText {
        if bytes.allSatisfy({ $0 < 0x80 }) { return .text(String(decoding: bytes, as: UTF8.self)) }
        let charset = mitmproxy(contentType, body: nil)
        switch charset {
        case .latin1:
            return .latin1(latin1Text(bytes))
        case .utf8:
            if let text = String(validating: bytes, as: UTF8.self) { return .text(text) }
            return .base64(Base64.encode(bytes), why: "base64: the body is not valid UTF-8, its Content-Type's charset")
        case .ascii, .other:
            let name = if case .other(let n) = charset { n } else { "us-ascii" }
            return .base64(Base64.encode(bytes), why: "base64: the body has bytes its charset \(name) cannot carry as text here")
        }
    }
}

// MARK: - Shared helpers (HAR, cURL, text)

/// Deciding whether a body is shown as text.
enum BodyText {
    static let skippedReason = "skipped: a metadata-only capture rule matched"
    static let droppedReason = "dropped to stay within the total body budget"

    /// The body's media type, else the Content-Type header's.
    static func mediaTypeOf(_ body: Body, contentType: String?) -> String {
        body.mimeType.isEmpty ? mediaType(contentType) : body.mimeType
    }

    /// Media types whose bodies are text when they are valid UTF-8. An
    /// unknown ("") type counts as text: the bytes decide.
    static func isTextual(_ mediaType: String) -> Bool {
        let m = mediaType
        if m.isEmpty || m == "x-unknown" { return true }
        if m.hasPrefix("text/") || m.hasPrefix("multipart/") { return true }
        if m.hasSuffix("+json") || m.hasSuffix("+xml") || m.hasSuffix("+yaml") { return true }
        switch m {
        case "application/json", "application/xml", "application/javascript", "application/x-javascript",
             "application/ecmascript", "application/x-www-form-urlencoded", "application/graphql",
             "application/x-ndjson", "application/ndjson", "application/jsonl", "application/yaml",
             "application/x-yaml", "application/sql", "application/csv", "application/x-sh",
             "application/manifest+json", "application/x-protobuf-text", "application/jsonp":
            return true
        default:
            return false
        }
    }

    /// The bytes as a string when they are valid UTF-8 and the media type is textual.
    static func text(_ bytes: [UInt8], mediaType: String) -> String? {
        guard isTextual(mediaType) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Why a body is not held, for people; nil when it is held or absent.
    static func missingReason(_ payload: BodyPayload) -> String? {
        switch payload {
        case .none, .stored: nil
        case .withheld(let reason): "withheld: " + (reason.isEmpty ? "not checked for secrets" : reason)
        case .skipped: skippedReason
        case .dropped: droppedReason
        }
    }
}

/// application/x-www-form-urlencoded (WHATWG URL) pairs.
enum FormEncoding {
    /// Splits `a=1&b=2`; names and values are percent-decoded with '+' as a
    /// space when the result is UTF-8, else kept as written.
    static func pairs(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { piece in
            if let eq = piece.firstIndex(of: "=") {
                return (decode(piece[..<eq]), decode(piece[piece.index(after: eq)...]))
            }
            return (decode(piece), "")
        }
    }

    static func decode(_ s: Substring) -> String {
        var out: [UInt8] = []
        let bytes = Array(s.utf8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "+") {
                out.append(0x20)
            } else if b == UInt8(ascii: "%"), i + 2 < bytes.count, let h = hexValue(bytes[i + 1]), let l = hexValue(bytes[i + 2]) {
                out.append(h << 4 | l)
                i += 2
            } else {
                out.append(b)
            }
            i += 1
        }
        return String(validating: out, as: UTF8.self) ?? String(s)
    }

    static func encode(_ pairs: [(name: String, value: String)]) -> String {
        pairs.map { encodeComponent($0.name) + "=" + encodeComponent($0.value) }.joined(separator: "&")
    }

    static func encodeComponent(_ s: String) -> String {
        var out: [UInt8] = []
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                out.append(b)
            case 0x20:
                out.append(UInt8(ascii: "+"))
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hexDigit(b >> 4))
                out.append(hexDigit(b & 0x0F))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func hexDigit(_ v: UInt8) -> UInt8 { Array("0123456789ABCDEF".utf8)[Int(v)] }
}

/// Making a URL a valid URI (RFC 3986) for HAR's `"format": "uri"`.
enum URIText {
    static func escaped(_ url: String) -> String {
        let bytes = Array(url.utf8)
        // The authority runs from after "scheme://" to the first '/', '?' or '#'.
        var authority = 0..<0
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon + 2 < bytes.count,
           bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") {
            let start = colon + 3
            var end = start
            while end < bytes.count, ![UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#")].contains(bytes[end]) { end += 1 }
            authority = start..<end
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var seenHash = false
        var changed = false
        for (i, b) in bytes.enumerated() {
            var keep: Bool
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                keep = true
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "/"),
                 UInt8(ascii: "?"), UInt8(ascii: "@"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
                 UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
                 UInt8(ascii: "="):
                keep = true
            case UInt8(ascii: "#"):
                keep = !seenHash
                seenHash = true
            case UInt8(ascii: "["), UInt8(ascii: "]"):
                keep = authority.contains(i)
            case UInt8(ascii: "%"):
                keep = i + 2 < bytes.count && FormEncoding.hexValue(bytes[i + 1]) != nil && FormEncoding.hexValue(bytes[i + 2]) != nil
            default:
                keep = false
            }
            if keep {
                out.append(b)
            } else {
                changed = true
                out.append(UInt8(ascii: "%"))
                out.append(FormEncoding.hexDigit(b >> 4))
                out.append(FormEncoding.hexDigit(b & 0x0F))
            }
        }
        return changed ? String(decoding: out, as: UTF8.self) : url
    }
}

/// Cookies for HAR's `cookies` arrays.
enum Cookies {
    static func request(_ headers: [Header]) -> [JSON] {
        var out: [JSON] = []
        for h in headers where h.name.lowercased() == "cookie" {
            for piece in h.value.split(separator: ";") {
                let p = String(piece).trimmingCharacters(in: " \t")
                guard !p.isEmpty else { continue }
                let (name, value) = split(p)
                guard !name.isEmpty else { continue }
                out.append(.object([("name", .string(name)), ("value", .string(value))]))
            }
        }
        return out
    }

    static func response(_ headers: [Header]) -> [JSON] {
        var out: [JSON] = []
        for h in headers where h.name.lowercased() == "set-cookie" {
            let parts = h.value.split(separator: ";").map { String($0).trimmingCharacters(in: " \t") }
            guard let first = parts.first else { continue }
            let (name, value) = split(first)
            guard !name.isEmpty else { continue }
            var fields: [(String, JSON)] = [("name", .string(name)), ("value", .string(value))]
            for attribute in parts.dropFirst() {
                let (key, v) = split(attribute)
                switch key.lowercased() {
                case "path": fields.append(("path", .string(v)))
                case "domain": fields.append(("domain", .string(v)))
                case "httponly": fields.append(("httpOnly", .bool(true)))
                case "secure": fields.append(("secure", .bool(true)))
                default: break
                }
            }
            out.append(.object(fields))
        }
        return out
    }

    private static func split(_ s: String) -> (String, String) {
        guard let eq = s.firstIndex(of: "=") else { return (s, "") }
        return (String(s[..<eq]).trimmingCharacters(in: " \t"), String(s[s.index(after: eq)...]).trimmingCharacters(in: " \t"))
    }
}

/// IP address checks for `serverIPAddress` (the schema wants ipv4 or ipv6).
enum IPAddress {
    /// The address without brackets when it is a valid IPv4 or IPv6 address.
    static func normalized(_ text: String) -> String? {
        var s = Substring(text)
        if s.hasPrefix("[") && s.hasSuffix("]") { s = s.dropFirst().dropLast() }
        if isIPv4(s) || isIPv6(s) { return String(s) }
        return nil
    }

    static func isIPv4(_ s: Substring) -> Bool {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        for p in parts {
            guard !p.isEmpty, p.count <= 3, p.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let v = Int(p), v <= 255, p.count == 1 || p.first != "0" else { return false }
        }
        return true
    }

    static func isIPv6(_ s: Substring) -> Bool {
        guard s.count >= 2, s.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == ":" || $0 == ".") }) else { return false }
        var groups = s.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        var budget = 8
        // An embedded IPv4 address counts as two groups.
        if let last = groups.last, last.contains(".") {
            guard isIPv4(Substring(last)) else { return false }
            groups.removeLast()
            groups.append("0")
            groups.append("0")
            budget = 8
        }
        let text = groups.joined(separator: ":")
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return false }
        func valid(_ part: String) -> Int? {
            if part.isEmpty { return 0 }
            let gs = part.split(separator: ":", omittingEmptySubsequences: false)
            for g in gs where g.isEmpty || g.count > 4 { return nil }
            return gs.count
        }
        if halves.count == 2 {
            guard let a = valid(halves[0]), let b = valid(halves[1]), a + b <= budget - 1 else { return false }
            return true
        }
        guard let n = valid(text), n == budget else { return false }
        return true
    }
}

extension String {
    /// Splits on a multi-character separator (no Foundation).
    fileprivate func components(separatedBy separator: String) -> [String] {
        var out: [String] = []
        var rest = Substring(self)
        while let r = rest.firstRange(of: separator) {
            out.append(String(rest[..<r.lowerBound]))
            rest = rest[r.upperBound...]
        }
        out.append(String(rest))
        return out
    }
}

/// ISO 8601 dates for `startedDateTime`, without Foundation.
enum HARDate {
    /// "2023-07-25T10:42:01.726Z" (UTC, milliseconds).
    static func format(_ seconds: Double) -> String {
        let maxMillis = 253_402_300_799_999.0 // 9999-12-31T23:59:59.999Z
        var ms = seconds.isFinite ? (seconds * 1000).rounded() : 0
        ms = min(max(ms, 0), maxMillis)
        let total = Int64(ms)
        let days = total / 86_400_000
        var rem = total % 86_400_000
        let (y, m, d) = civil(days)
        let hour = rem / 3_600_000; rem %= 3_600_000
        let minute = rem / 60_000; rem %= 60_000
        let second = rem / 1000
        let milli = rem % 1000
        return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T" + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2)
            + "." + pad(milli, 3) + "Z"
    }

    /// Parses `YYYY-MM-DD[T ]hh:mm[:ss[.fff]][Z|±hh[:]mm]` (no zone means UTC)
    /// into Unix seconds.
    static func parse(_ text: String) -> Double? {
        let b = Array(text.utf8)
        var i = 0
        func number(_ digits: Int) -> Int64? {
            guard i + digits <= b.count else { return nil }
            var v: Int64 = 0
            for k in i..<i + digits {
                guard b[k] >= 0x30 && b[k] <= 0x39 else { return nil }
                v = v * 10 + Int64(b[k] - 0x30)
            }
            i += digits
            return v
        }
        func expect(_ c: Character) -> Bool {
            guard i < b.count, b[i] == c.asciiValue! else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        guard i < b.count, b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: "t") || b[i] == 0x20 else { return nil }
        i += 1
        guard let hour = number(2), expect(":"), let minute = number(2), hour < 24, minute < 60 else { return nil }
        var second = 0.0
        if expect(":") {
            guard let s = number(2), s <= 60 else { return nil }
            second = Double(s)
            if expect(".") || expect(",") {
                var scale = 0.1
                var any = false
                while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
                    second += Double(b[i] - 0x30) * scale
                    scale /= 10
                    i += 1
                    any = true
                }
                guard any else { return nil }
            }
        }
        var offset: Int64 = 0
        if i < b.count {
            if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
                i += 1
            } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard let oh = number(2) else { return nil }
                _ = expect(":")
                let om = i < b.count ? (number(2) ?? 0) : 0
                offset = sign * (oh * 3600 + om * 60)
            }
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year, month, day)
        return Double(days * 86400 + hour * 3600 + minute * 60 - offset) + second
    }

    private static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// Days since 1970-01-01 to (year, month, day) (Howard Hinnant's algorithm).
    static func civil(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

/// Parses a large HAR faster by parsing the elements of `log.entries` in
/// parallel: a byte scan finds the array and its elements, the rest of the
/// document is parsed with the array emptied, and each element on its own.
/// Whenever anything does not parse (or the scan finds no such array), it
/// returns nil and the caller parses the whole document sequentially, which
/// reports the exact line and column of the problem.
enum EntriesSplitter {
    /// Where the element at `range` starts (past white space), for messages.
    static func valueStart(_ range: Range<Int>, in b: UnsafeBufferPointer<UInt8>) -> Int {
        var i = range.lowerBound
        while i < range.upperBound, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
        return i
    }

    /// `error` with the index and byte offset of the entry it lies in, when
    /// it lies in one of `log.entries` (line and column are kept).
    static func locate(_ error: JSONSyntaxError, in b: UnsafeBufferPointer<UInt8>) -> JSONSyntaxError {
        // The byte offset of line/column: lines end at LF, CR or CRLF, as the parser counts them.
        var line = 1, i = 0
        while line < error.line, i < b.count {
            if b[i] == 0x0A || b[i] == 0x0D {
                if b[i] == 0x0D, i + 1 < b.count, b[i + 1] == 0x0A { i += 1 }
                line += 1
            }
            i += 1
        }
        let offset = i + error.column - 1
        guard let elements = scanPrefix(b, upTo: offset) else { return error }
        guard let index = elements.lastIndex(where: { $0.lowerBound <= offset }) else { return error }
        let start = valueStart(elements[index], in: b)
        return JSONSyntaxError(line: error.line, column: error.column,
                               message: "in log.entries[\(index)] (which starts at byte \(start)): \(error.message)")
    }

    /// The element ranges of `log.entries` that start before `offset` (the
    /// last one open-ended), when the error lies inside that array.
    private static func scanPrefix(_ b: UnsafeBufferPointer<UInt8>, upTo offset: Int) -> [Range<Int>]? {
        guard offset <= b.count else { return nil }
        let prefix = UnsafeBufferPointer(rebasing: b[..<offset])
        var found = scanElements(prefix)
        guard found.open >= 0, !found.closed else { return nil }
        if found.elementStart <= offset { found.elements.append(found.elementStart..<offset) }
        return found.elements
    }

    /// The `[` and `]` of the array under "log" -> "entries", and its elements' byte ranges.
    static func scan(_ b: [UInt8]) -> (open: Int, close: Int, elements: [Range<Int>])? {
        b.withUnsafeBufferPointer { scan($0) }
    }

    static func scan(_ b: UnsafeBufferPointer<UInt8>) -> (open: Int, close: Int, elements: [Range<Int>])? {
        let found = scanElements(b)
        guard !found.failed, found.closed else { return nil }
        return (found.open, found.close, found.elements)
    }

    /// The scan (`scan`), and true when the file is one valid JSON text,
    /// shown piece by piece: the skeleton (the entries array emptied) is
    /// valid, the array's content is the elements separated by single
    /// commas (the scan splits there; no trailing comma), and each element
    /// is a valid JSON text as deep as it sits (three containers in), with
    /// no byte order mark of its own. Then the whole is valid, since a
    /// comma-separated list of values put into an empty array of a valid
    /// text leaves it valid. False says nothing: the caller checks the whole
    /// file, which reports the exact place. The elements are checked on
    /// other processors while the scan goes on (`scanChecking`).
    static func scanPieces(_ file: SharedBytes) -> (found: (open: Int, close: Int, elements: [Range<Int>])?, piecesValid: Bool) {
        let (found, elementsValid) = scanChecking(file)
        guard let found else { return (nil, false) }
        return (found, elementsValid && skeletonIsValid(found, in: file))
    }

    /// The text around the elements (`scanPieces`).
    static func skeletonIsValid(_ found: (open: Int, close: Int, elements: [Range<Int>]), in file: SharedBytes) -> Bool {
        let b = file.bytes
        var skeleton = Array(b[..<(found.open + 1)])
        skeleton += b[found.close...]
        guard (try? skeleton.withUnsafeBufferPointer({ buffer throws(JSONSyntaxError) in try JSON.validate(bytes: buffer) })) != nil else {
            return false
        }
        // The scan leaves out a last piece of white space only: after a comma, that is a trailing comma.
        if let last = found.elements.last, last.upperBound != found.close { return false }
        return true
    }

    /// One element of `log.entries`, checked as deep as it sits, with no byte order mark of its own.
    static func elementIsValid(_ range: Range<Int>, in file: SharedBytes) -> Bool {
        let piece = UnsafeBufferPointer(rebasing: file.bytes[range])
        if piece.count >= 3, piece[0] == 0xEF, piece[1] == 0xBB, piece[2] == 0xBF { return false }
        return (try? JSON.validate(bytes: piece, enclosingDepth: 3)) != nil
    }

    /// Elements the scan hands over to be checked together (`scanChecking`).
    static let checkBlock = 256

    /// `scan`, and whether every element it found passes `elementIsValid`:
    /// the elements are checked on other processors, a block at a time,
    /// while the scan (one thread's walk of the whole file) goes on, not
    /// after it. False when the scan found no entries array.
    static func scanChecking(_ file: SharedBytes) -> (found: (open: Int, close: Int, elements: [Range<Int>])?, elementsValid: Bool) {
        let checks = ElementChecks(file)
        var handed = 0
        let scanned = scanElements(file.bytes) { elements in
            guard elements.count - handed >= checkBlock else { return }
            checks.start(Array(elements[handed...]))
            handed = elements.count
        }
        guard !scanned.failed, scanned.closed else {
            _ = checks.wait()
            return (nil, false)
        }
        if handed < scanned.elements.count { checks.start(Array(scanned.elements[handed...])) }
        return ((scanned.open, scanned.close, scanned.elements), checks.wait())
    }

    /// Blocks of elements being checked on other threads.
    private final class ElementChecks: @unchecked Sendable {
        let file: SharedBytes
        let group = DispatchGroup()
        let failed = Atomic<Bool>(false)

        init(_ file: SharedBytes) { self.file = file }

        func start(_ elements: [Range<Int>]) {
            group.enter()
            DispatchQueue.global().async { [self] in
                if !failed.load(ordering: .relaxed), !elements.allSatisfy({ EntriesSplitter.elementIsValid($0, in: file) }) {
                    failed.store(true, ordering: .relaxed)
                }
                group.leave()
            }
        }

        /// True when every block started passed; waits for them all (they read the caller's bytes).
        func wait() -> Bool {
            group.wait()
            return !failed.load(ordering: .relaxed)
        }
    }

    struct Scan {
        var open = -1
        var close = -1
        var closed = false
        var failed = false
        var elements: [Range<Int>] = []
        var elementStart = -1
    }

    /// Walks the bytes as far as the end of `log.entries` (or of the bytes);
    /// `report` is given the elements found so far each time one is added.
    static func scanElements(_ b: UnsafeBufferPointer<UInt8>, report: (([Range<Int>]) -> Void)? = nil) -> Scan {
        var found = Scan()
        var depth = 0
        var i = 0
        var keys: [String?] = [] // the key being read at each object depth
        var lastString: Range<Int>?
        while i < b.count {
            let c = b[i]
            if c == 0x22 { // a string: skip it, remembering where it was
                // Most of a HAR is inside strings.
                let start = i + 1
                guard let end = JSON.endOfString(in: b, openingQuoteAt: i) else {
                    found.failed = true
                    return found
                }
                i = end - 1
                lastString = start..<i
                i += 1
                continue
            }
            switch c {
            case 0x3A: // ':' names the key of the value that follows
                // Only the keys of the two outer levels can lead to log.entries (no String for the others).
                if let r = lastString, !keys.isEmpty, keys.count <= 2 {
                    keys[keys.count - 1] = String(decoding: UnsafeBufferPointer(rebasing: b[r]), as: UTF8.self)
                }
            case 0x7B, 0x5B: // '{' '['
                if found.open < 0 && c == 0x5B && depth == 2 && keys.count == 2 && keys[0] == "log" && keys[1] == "entries" {
                    found.open = i
                    found.elementStart = i + 1
                }
                depth += 1
                keys.append(nil)
            case 0x7D, 0x5D: // '}' ']'
                depth -= 1
                guard depth >= 0 else { found.failed = true; return found }
                keys.removeLast()
                if found.open >= 0 && depth == 2 && c == 0x5D {
                    let last = found.elementStart..<i
                    if b[last].contains(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) { found.elements.append(last) }
                    found.close = i
                    found.closed = true
                    return found
                }
            case 0x2C: // ',' between elements of the entries array
                if found.open >= 0 && depth == 3 {
                    found.elements.append(found.elementStart..<i)
                    found.elementStart = i + 1
                    report?(found.elements)
                }
            default:
                break
            }
            lastString = c == 0x3A ? nil : (c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 ? lastString : nil)
            i += 1
        }
        return found
    }
}
