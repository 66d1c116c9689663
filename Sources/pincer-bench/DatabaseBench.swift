// Db: pages of the database browser's built-in SQLite adapter (DatabaseKit),
// against the sqlite3 command-line tool running the same SQL in the same run.
//
// - A rowid table t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, value REAL,
//   note TEXT) of 1,000,000 rows is built once per run in a temporary
//   directory, with libsqlite3 itself (one transaction, a recursive CTE; the
//   same data every run): names of 16 bytes, values with two decimals,
//   notes of 16-55 bytes, one in seven NULL.
// - Ours: one read-only session of SQLiteAdapter, and readPage of 100 rows
//   at offsets 0, 500,000 and 990,000, by keyset (the cursor is the
//   nextCursor of the page 100 rows before; the first page has no cursor)
//   and by offset, K times in a row per run (values converted, cursors
//   encoded, as the browser gets them).
// - Theirs: /usr/bin/sqlite3 -readonly runs the SQL text readPage prepares
//   (see SQLiteSession.readPage: the visible columns, then any order or key
//   expression that is not one of them; LIMIT is the page size + 1) with the bound values
//   written as literals, K times from one script with its output to
//   /dev/null; the same script without the queries measures start-up and
//   opening, which is subtracted: per page = (t_K - t_0) / K. Both sides
//   give the same rows (checked once on sqlite3's printed output).
// - Every query runs once before it is timed (the file is in the page
//   cache: it was just written); runs alternate between the two sides, and
//   the figure is the median of the runs. K is sized from a first timing so
//   that a run takes about `runSeconds`.
import CSQLite
import DatabaseKit
import PincerHost
#if canImport(Glibc)
import Glibc
#endif

struct DatabaseFigures: Sendable {
    var rows: Int
    var pageRows: Int
    var fileBytes: Int
    var buildSeconds: Double
    /// Of the library the adapter links (libsqlite3), and of the sqlite3 tool.
    var libraryVersion: String
    var toolVersion: String?
    var toolPath: String?
    var runs: Int
    /// Median of the sqlite3 runs without the queries (start-up + open), ns.
    var startupNanoseconds: Double?
    var cases: [DatabaseCase]
    /// Why the sqlite3 side could not run, if it could not.
    var baselineError: String?

    func page(_ mode: DatabaseCase.Mode, at offset: Int) -> DatabaseCase? {
        cases.first { $0.mode == mode && $0.offset == offset }
    }

    /// Adapter time of the deepest keyset page over the first page's.
    var keysetFlatness: Double? { growth(.keyset, to: DatabaseBench.offsets.last!, \.adapterNanoseconds) }
    var sqliteKeysetFlatness: Double? { growth(.keyset, to: DatabaseBench.offsets.last!) { $0.sqliteNanoseconds ?? .nan } }

    func growth(_ mode: DatabaseCase.Mode, to offset: Int, _ value: (DatabaseCase) -> Double) -> Double? {
        guard let first = page(mode, at: 0), let deep = page(mode, at: offset) else { return nil }
        let ratio = value(deep) / value(first)
        return ratio.isFinite ? ratio : nil
    }

    var flatnessPassed: Bool { (keysetFlatness ?? .infinity) <= DatabaseFigures.targetFlatness }

    /// Every page within the ratio of sqlite3, and keyset pages flat.
    var passed: Bool {
        baselineError == nil && !cases.isEmpty && cases.allSatisfy { $0.passed } && flatnessPassed
    }

    static let targetRatio = 1.5
    static let targetFlatness = 1.5
}

struct DatabaseCase: Sendable {
    enum Mode: String, Sendable { case keyset, offset }
    var mode: Mode
    /// Rows before the page.
    var offset: Int
    /// What the sqlite3 tool ran (the adapter's SQL, values as literals).
    var sql: String
    /// Pages read per timed run, on each side.
    var calls: Int
    /// The adapter's time per page of each run, ns.
    var adapterSamples: [Double]
    /// sqlite3's wall time of each run with the K queries, and without them, ns.
    var sqliteSamples: [Double]
    var sqliteStartupSamples: [Double]

    var adapterNanoseconds: Double { DatabaseBench.median(adapterSamples) }
    /// (median t_K - median t_0) / K; nil without sqlite3 runs.
    var sqliteNanoseconds: Double? {
        guard !sqliteSamples.isEmpty, !sqliteStartupSamples.isEmpty else { return nil }
        return max(DatabaseBench.median(sqliteSamples) - DatabaseBench.median(sqliteStartupSamples), 0) / Double(calls)
    }
    var ratio: Double? { sqliteNanoseconds.map { adapterNanoseconds / max($0, 1) } }
    var passed: Bool { (ratio ?? .infinity) <= DatabaseFigures.targetRatio }
    var label: String { offset == 0 && mode == .keyset ? "keyset at 0 (first page)" : "\(mode.rawValue) at \(offset)" }
}

enum DatabaseBench {
    static let rows = 1_000_000
    static let pageRows = 100
    static let offsets = [0, 500_000, 990_000]
    /// Many short runs rather than a few long ones: on a shared (virtual)
    /// machine the speed of both sides drifts by up to 2x over seconds, and
    /// short alternating runs see the same conditions.
    static let runs = 9
    /// About this long per timed run, on each side.
    static let runSeconds = 0.15
    static let callRange = 3...5_000
    static let table = "t"
    static let install = "sqlite3 not found; scripts/deps installs it (the Debian package sqlite3)"

    static var progress: Bool { isatty(2) != 0 }

    static func note(_ text: String) {
        if progress { printError("pincer-bench: db: \(text)") }
    }

    static func run() throws(BenchError) -> DatabaseFigures {
        let directory = try TemporaryDirectory(prefix: "pincer-bench-db")
        defer { directory.remove() }
        let path = "\(directory.path)/bench.sqlite"
        note("building a \(rows)-row table...")
        let start = monotonicNanoseconds()
        try build(path: path)
        let buildSeconds = Double(monotonicNanoseconds() - start) / 1e9
        var st = stat()
        let fileBytes = stat(path, &st) == 0 ? Int(st.st_size) : 0

        let adapter = SQLiteAdapter(paths: { [] })
        let session: DatabaseSession
        do { session = try adapter.open(path, write: false, timeoutMilliseconds: 0) } catch {
            throw BenchError("SQLiteAdapter.open of the generated database: \(error.message)")
        }
        defer { session.close() }
        let description: ObjectDescription
        do { description = try session.describe(table) } catch { throw BenchError("describe \(table): \(error.message)") }

        var figures = DatabaseFigures(rows: rows, pageRows: pageRows, fileBytes: fileBytes, buildSeconds: buildSeconds,
                                      libraryVersion: String(cString: sqlite3_libversion()), toolVersion: nil, toolPath: nil,
                                      runs: runs, startupNanoseconds: nil, cases: [])
        var tool: SQLiteTool?
        do throws(BenchError) {
            tool = try SQLiteTool(database: path, directory: directory.path)
            figures.toolVersion = tool?.version
            figures.toolPath = tool?.path
        } catch { figures.baselineError = error.message }

        var startups: [Double] = []
        for offset in offsets {
            for mode in [DatabaseCase.Mode.keyset, .offset] {
                note("\(mode.rawValue) page at \(offset)...")
                let (request, sql, expected) = try prepare(session, description, mode: mode, offset: offset)
                var c = try measure(session, request, sql: sql, expected: expected, mode: mode, offset: offset,
                                    tool: &tool, figures: &figures)
                if tool == nil { c.sqliteSamples = []; c.sqliteStartupSamples = [] }
                startups += c.sqliteStartupSamples
                figures.cases.append(c)
            }
        }
        if !startups.isEmpty { figures.startupNanoseconds = median(startups) }
        return figures
    }

    // MARK: the database

    /// The table, built with the library in one transaction.
    static func build(path: String) throws(BenchError) {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        guard rc == SQLITE_OK, let db = handle else {
            let why = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(handle)
            throw BenchError("cannot create \(path): \(why)")
        }
        defer { sqlite3_close_v2(db) }
        let sql = """
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            CREATE TABLE \(table) (id INTEGER PRIMARY KEY, name TEXT NOT NULL, value REAL, note TEXT);
            BEGIN;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
            INSERT INTO \(table) (id, name, value, note)
            SELECT i, printf('customer %07d', (i * 7919) % 9999991),
                   ((i * 104729) % 10000019) / 100.0,
                   CASE WHEN i % 7 = 0 THEN NULL
                        ELSE substr('shipped on time; paid by card; returned one item; gift wrapped; call before delivery',
                                    1 + (i * 13) % 29, 16 + (i * 31) % 40) END
            FROM n;
            COMMIT;
            """
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &message) == SQLITE_OK else {
            let why = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(db))
            sqlite3_free(message)
            throw BenchError("building the \(rows)-row table: \(why)")
        }
    }

    // MARK: the pages

    static func readPage(_ session: DatabaseSession, _ request: PageRequest) throws(BenchError) -> Page {
        do { return try session.readPage(request) } catch {
            let at = request.cursor != nil ? "after a cursor" : "at offset \(request.offset)"
            throw BenchError("readPage of \(request.object) \(at): \(error.message)")
        }
    }

    static func ids(_ page: Page) -> [Int64] {
        page.rows.map { row in if case .integer(let i)? = row.first { i } else { -1 } }
    }

    /// The request for a page, the SQL SQLiteSession.readPage runs for it
    /// with the values as literals, and the ids of the page's rows.
    static func prepare(_ session: DatabaseSession, _ d: ObjectDescription, mode: DatabaseCase.Mode,
                        offset: Int) throws(BenchError) -> (PageRequest, String, [Int64]) {
        // The default order is the key, a visible column here, so the page
        // query selects the visible columns only.
        guard d.identity == .primaryKey, d.keyColumns.count == 1 else {
            throw BenchError("\(d.name) should be keyed by one INTEGER PRIMARY KEY, has \(d.identity.name) (\(d.keyColumns))")
        }
        let key = quoted(d.keyColumns[0])
        let selected = d.columns.filter { !$0.hidden }.map { quoted($0.name) }
        var sql = "SELECT \(selected.joined(separator: ", ")) FROM \(quoted(d.name))"
        var request = PageRequest(object: d.name, limit: pageRows, offset: offset)
        if mode == .keyset && offset > 0 {
            let before = try readPage(session, PageRequest(object: d.name, limit: pageRows, offset: offset - pageRows))
            guard let cursor = before.nextCursor, let last = ids(before).last, last >= 0 else {
                throw BenchError("the page at offset \(offset - pageRows) has no next cursor or no integer key")
            }
            request = PageRequest(object: d.name, limit: pageRows, cursor: cursor)
            sql += " WHERE \(key) > \(last)"
        }
        sql += " ORDER BY \(key) LIMIT \(pageRows + 1)"
        if request.cursor == nil && offset > 0 { sql += " OFFSET \(offset)" }

        // Keyset and offset give the same rows; the paging is the one asked for.
        let page = try readPage(session, request)
        let expected = Array(Int64(offset + 1)...Int64(offset + pageRows))
        guard ids(page) == expected else {
            throw BenchError("the \(mode.rawValue) page at \(offset) has ids \(ids(page).prefix(3))..., expected \(offset + 1)...\(offset + pageRows)")
        }
        guard page.paging == (request.cursor != nil ? .keyset : .offset), page.nextCursor != nil else {
            throw BenchError("the \(mode.rawValue) page at \(offset) came back with paging \(String(describing: page.paging)) and no next cursor")
        }
        return (request, sql, expected)
    }

    static func quoted(_ name: String) -> String {
        "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// K pages through the adapter: the elapsed time and the rows read.
    @inline(never)
    static func readPages(_ session: DatabaseSession, _ request: PageRequest, count: Int) throws(BenchError) -> (UInt64, Int) {
        var read = 0
        let start = monotonicNanoseconds()
        for _ in 0..<count { read &+= try readPage(session, request).rows.count }
        return (monotonicNanoseconds() - start, read)
    }

    static func measure(_ session: DatabaseSession, _ request: PageRequest, sql: String, expected: [Int64],
                        mode: DatabaseCase.Mode, offset: Int, tool: inout SQLiteTool?,
                        figures: inout DatabaseFigures) throws(BenchError) -> DatabaseCase {
        // Warm, then size K from a short timing.
        _ = try readPages(session, request, count: 1)
        let (probe, _) = try readPages(session, request, count: 3)
        let perPage = Double(probe) / 3
        let calls = min(max(Int(runSeconds * 1e9 / max(perPage, 1)), callRange.lowerBound), callRange.upperBound)

        var c = DatabaseCase(mode: mode, offset: offset, sql: sql, calls: calls, adapterSamples: [], sqliteSamples: [],
                             sqliteStartupSamples: [])
        // sqlite3 prints the same rows (and the one more that says a page follows).
        var toolReady = false
        if let t = tool {
            do throws(BenchError) {
                try t.check(sql, ids: expected, limit: pageRows + 1)
                try t.writeScripts(sql, calls: calls)
                toolReady = true
            } catch {
                figures.baselineError = "\(c.label): \(error.message)"
                tool = nil
            }
        }
        for _ in 0..<runs {
            let (elapsed, read) = try readPages(session, request, count: calls)
            guard read == calls * pageRows else { throw BenchError("\(c.label): \(read) rows in \(calls) pages of \(pageRows)") }
            c.adapterSamples.append(Double(elapsed) / Double(calls))
            if toolReady, let t = tool {
                do throws(BenchError) {
                    c.sqliteStartupSamples.append(try t.timeStartup())
                    c.sqliteSamples.append(try t.timeQueries())
                } catch {
                    figures.baselineError = "\(c.label): \(error.message)"
                    tool = nil
                    toolReady = false
                }
            }
        }
        return c
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}

/// The sqlite3 command-line tool on the generated database, read-only, with
/// no ~/.sqliterc.
struct SQLiteTool {
    let path: String
    let database: String
    let version: String
    let queriesScript: String
    let startupScript: String
    /// Makes the tool open the database and read its schema, as the
    /// adapter's open does; the same first line of both scripts.
    static let opening = "SELECT count(*) FROM sqlite_schema;"

    init(database: String, directory: String) throws(BenchError) {
        guard let path = findInPath("sqlite3") else { throw BenchError(DatabaseBench.install) }
        self.path = path
        self.database = database
        queriesScript = "\(directory)/queries.sql"
        startupScript = "\(directory)/startup.sql"
        let (status, out, err) = try runCapturing(path, ["-version"])
        guard status == 0 else {
            throw BenchError("`\(path) -version` exited with \(describeWaitStatus(status)): \(String(decoding: err.prefix(300), as: UTF8.self))")
        }
        version = String(String(decoding: out, as: UTF8.self).split(separator: " ").first ?? "?")
        try writeFile(startupScript, Array(".output /dev/null\n\(SQLiteTool.opening)\n".utf8))
    }

    func arguments(_ script: String) -> [String] { ["-batch", "-init", "/dev/null", "-readonly", database, ".read \(script)"] }

    /// Runs `script`; its wall time in ns.
    func time(_ script: String) throws(BenchError) -> Double {
        let start = monotonicNanoseconds()
        let (status, _, err) = try runCapturing(path, arguments(script))
        let elapsed = monotonicNanoseconds() - start
        guard status == 0, err.isEmpty else {
            let tail = String(decoding: err.prefix(400), as: UTF8.self).split(separator: "\n").prefix(3).joined(separator: " | ")
            throw BenchError("`sqlite3 ... \(script)` exited with \(describeWaitStatus(status))\(tail.isEmpty ? "" : ": \(tail)")")
        }
        return Double(elapsed)
    }

    func timeStartup() throws(BenchError) -> Double { try time(startupScript) }
    func timeQueries() throws(BenchError) -> Double { try time(queriesScript) }

    /// The query once, printed: the first column is the ids of the page
    /// and one more row. Also warms the tool's side.
    func check(_ sql: String, ids: [Int64], limit: Int) throws(BenchError) {
        let script = "\(queriesScript).check"
        try writeFile(script, Array("\(SQLiteTool.opening)\n\(sql);\n".utf8))
        let (status, out, err) = try runCapturing(path, arguments(script))
        guard status == 0, err.isEmpty else {
            throw BenchError("sqlite3 on `\(sql)` exited with \(describeWaitStatus(status)): \(String(decoding: err.prefix(300), as: UTF8.self))")
        }
        let lines = String(decoding: out, as: UTF8.self).split(separator: "\n")
        let printed = lines.dropFirst().map { Int64($0.split(separator: "|", omittingEmptySubsequences: false).first ?? "") ?? -1 }
        guard printed.count == limit, Array(printed.prefix(ids.count)) == ids else {
            throw BenchError("sqlite3 printed \(printed.count) rows (ids \(printed.prefix(3))...) for `\(sql)`; the adapter read ids \(ids.first ?? -1)...\(ids.last ?? -1) and one more")
        }
    }

    func writeScripts(_ sql: String, calls: Int) throws(BenchError) {
        var text = ".output /dev/null\n\(SQLiteTool.opening)\n"
        text.reserveCapacity(text.utf8.count + calls * (sql.utf8.count + 2))
        for _ in 0..<calls { text += sql + ";\n" }
        try writeFile(queriesScript, Array(text.utf8))
    }
}

// MARK: - report

/// 1000000 -> "1,000,000".
private func grouped(_ n: Int) -> String {
    var digits = Array(String(n.magnitude))
    var out: [Character] = []
    while digits.count > 3 {
        out.insert(contentsOf: [","] + digits.suffix(3), at: 0)
        digits.removeLast(3)
    }
    return (n < 0 ? "-" : "") + String(digits + out)
}

extension Report {
    func dbText(_ f: DatabaseFigures, row: (String, String, String, String) -> String) -> [String] {
        var lines: [String] = []
        func time(_ ns: Double?) -> String {
            guard let ns, ns.isFinite else { return "-" }
            return ns >= 1e6 ? "\(Format.fixed(ns / 1e6, ns >= 1e7 ? 1 : 2)) ms" : "\(Format.short(ns / 1e3)) us"
        }
        let target = "<= \(Format.fixed(DatabaseFigures.targetRatio, 1))x"
        lines.append(Format.padded("db", 10) + Format.padded("\(f.pageRows)-row pages of \(grouped(f.rows)) rows", 34)
                     + Format.leftPadded("adapter", 10) + Format.leftPadded("sqlite3", 11) + Format.leftPadded("ratio", 9)
                     + "   target")
        for c in f.cases {
            let verdict = c.ratio == nil ? "FAIL (no sqlite3 figure)" : "\(target)  \(Report.verdict(c.passed))"
            lines.append(Format.padded("", 10) + Format.padded(c.label, 34) + Format.leftPadded(time(c.adapterNanoseconds), 10)
                         + Format.leftPadded(time(c.sqliteNanoseconds), 11)
                         + Format.leftPadded(c.ratio.map { Format.ratio($0) } ?? "-", 9) + "   " + verdict)
        }
        let deepest = DatabaseBench.offsets.last!
        if let flat = f.keysetFlatness {
            let theirs = f.sqliteKeysetFlatness.map { " (sqlite3: \(Format.ratio($0)))" } ?? ""
            lines.append(row("", "keyset flatness: page at \(deepest) / at 0", Format.ratio(flat),
                             "target: <= \(Format.fixed(DatabaseFigures.targetFlatness, 1))x  \(Report.verdict(f.flatnessPassed))\(theirs)"))
        }
        if let grow = f.growth(.offset, to: deepest, \.adapterNanoseconds) {
            let middle = DatabaseBench.offsets.count > 2 ? DatabaseBench.offsets[DatabaseBench.offsets.count / 2] : deepest
            let half = f.growth(.offset, to: middle, \.adapterNanoseconds).map { ", at \(middle) \(Format.ratio($0))" } ?? ""
            lines.append(row("", "offset growth: page at \(deepest) / at 0", Format.ratio(grow), "information\(half)"))
        }
        if let s = f.startupNanoseconds {
            lines.append(row("", "info: sqlite3 start-up + open (subtracted)", time(s), ""))
        }
        let mb = Format.fixed(Double(f.fileBytes) / 1e6, 1)
        lines.append("          median of \(f.runs) runs each side, alternating, of K pages in a row (K = \(f.cases.map { String($0.calls) }.joined(separator: ", ")));")
        lines.append("          a \(mb) MB rowid table built in \(Format.fixed(f.buildSeconds, 1)) s; libsqlite3 \(f.libraryVersion), sqlite3 tool \(f.toolVersion ?? "missing")")
        if f.toolVersion != nil {
            lines.append("          (-readonly, output to /dev/null, per page = (t_K - t_0) / K)\(f.baselineError == nil ? "; same rows on both sides, checked" : "")")
        }
        if let c = f.page(.keyset, at: deepest) { lines.append("          SQL, keyset: \(c.sql)") }
        if let c = f.page(.offset, at: deepest) { lines.append("          SQL, offset: \(c.sql)") }
        if let e = f.baselineError {
            lines.append("")
            lines.append(row("", "error: sqlite3: \(e)", "", "FAIL"))
        }
        return lines
    }

    func dbJSON(_ f: DatabaseFigures) -> JSON {
        func us(_ ns: Double?) -> JSON { ns.map { .rounded($0 / 1e3, 2) } ?? .null }
        var members: [(String, JSON)] = [
            ("rows", .int(Int64(f.rows))),
            ("page_rows", .int(Int64(f.pageRows))),
            ("file_bytes", .int(Int64(f.fileBytes))),
            ("build_seconds", .rounded(f.buildSeconds, 3)),
            ("libsqlite3", .string(f.libraryVersion)),
            ("sqlite3_tool", f.toolVersion.map { .string($0) } ?? .null),
            ("runs", .int(Int64(f.runs))),
            ("sqlite3_startup_ms", f.startupNanoseconds.map { .rounded($0 / 1e6, 3) } ?? .null),
            ("pages", .array(f.cases.map { c in
                .object([
                    ("mode", .string(c.mode.rawValue)),
                    ("offset", .int(Int64(c.offset))),
                    ("cursor", .bool(c.mode == .keyset && c.offset > 0)),
                    ("sql", .string(c.sql)),
                    ("calls_per_run", .int(Int64(c.calls))),
                    ("adapter_us_per_page", us(c.adapterNanoseconds)),
                    ("sqlite3_us_per_page", us(c.sqliteNanoseconds)),
                    ("ratio_adapter_over_sqlite3", c.ratio.map { .rounded($0, 3) } ?? .null),
                    ("adapter_samples_us", .array(c.adapterSamples.map { .rounded($0 / 1e3, 2) })),
                    ("sqlite3_run_samples_ms", .array(c.sqliteSamples.map { .rounded($0 / 1e6, 3) })),
                    ("sqlite3_startup_samples_ms", .array(c.sqliteStartupSamples.map { .rounded($0 / 1e6, 3) })),
                    ("target_ratio", .double(DatabaseFigures.targetRatio)),
                    ("pass", .bool(c.passed)),
                ])
            })),
            ("keyset_flatness", f.keysetFlatness.map { .rounded($0, 3) } ?? .null),
            ("sqlite3_keyset_flatness", f.sqliteKeysetFlatness.map { .rounded($0, 3) } ?? .null),
            ("offset_growth", f.growth(.offset, to: DatabaseBench.offsets.last!, \.adapterNanoseconds).map { .rounded($0, 2) } ?? .null),
            ("target_flatness", .double(DatabaseFigures.targetFlatness)),
        ]
        if let e = f.baselineError { members.append(("sqlite3", .object([("error", .string(e)), ("pass", .bool(false))]))) }
        members.append(("pass", .bool(f.passed)))
        return .object(members)
    }
}
