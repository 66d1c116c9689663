// The network log's NDJSON form (NetworkLog's LegacyLog): what an old
// network-log.ndjson being migrated, or a file given to net.open, holds.
import NetworkLog

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let contents = LegacyLog.parse(bytes)
    let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).count
    guard contents.entries.count + contents.skipped.count == lines else {
        fatalError("\(lines) non-empty lines, but \(contents.entries.count) entries and \(contents.skipped.count) skipped")
    }
    // What the log writes of an entry reads back as one entry.
    for entry in contents.entries {
        guard LegacyLog.parse(LegacyLog.line(entry)).entries.count == 1 else { fatalError("an entry's own line does not read back") }
        // The streaming writer (JSONWriter) makes valid, compact JSON of any text, and HAR of any entry.
        guard entry.json.serializedBytes() == entry.jsonBytes else { fatalError("an entry's JSON is not the compact form of its tree") }
        guard (try? JSON.parse(bytes: HARExport.entryBytes(entry))) != nil else { fatalError("an entry's HAR is not JSON") }
        guard HeaderList(entry.responseHeaders).headers == entry.responseHeaders else { fatalError("packed headers changed") }
    }
    return 0
}
