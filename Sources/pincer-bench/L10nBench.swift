// L10n: pseudo-localisation throughput, against pseudol10nutil (PyPI)
// (PyPI) on the same strings in the same run.
//
// - A deterministic catalog of realistic UI strings (labels, sentences,
//   printf placeholders, {name} braces, ICU plurals, a little HTML, URLs,
//   some non-ASCII) is written as a gettext .po file (msgctxt "key.N", msgid
//   the string, msgstr "") and as a JSON array for the Python side.
// - Ours: PseudoLocalizer with every mode that changes text (accented,
//   lengthened, boundaries, right-to-left; the full accent map) over every
//   string as the .po file holds it (backslash escapes), each result checked.
//   For information, the whole catalog path in process, as l10n.catalog
//   takes it: CatalogRewrite(bytes:format:.po) then write(locale:...) into
//   memory, its output read back and checked.
// - The whole command on the same file: `pincer run l10n.catalog`, its peak
//   RSS (wait4) against the file's size, target at most 3 times, and its
//   output byte for byte the in-process one. The command is started through
//   a forking Python one-liner: a posix_spawn child's ru_maxrss starts at
//   this process's own high-water mark (it shares our address space until
//   exec), which by this part is far above the command's.
// - Theirs: scripts/bench-l10n-baseline.py applies
//   PseudoL10nUtil().pseudolocalize (all its default transforms) to the
//   same strings, unescaped, and times its loop with time.perf_counter.
import PincerHost
import PseudoL10n
#if canImport(Glibc)
import Glibc
#endif

struct L10nFigures: Sendable {
    var strings: Int
    var rounds: Int
    /// Generated strings by length in characters, and those holding non-ASCII.
    var shortestString: Int
    var longestString: Int
    var nonASCIIStrings: Int
    /// Strings holding printf, brace, ICU, markup or URL placeholders (our scanner's view).
    var stringsWithPlaceholders: Int
    var catalogBytes: Int

    /// Best round: PseudoLocalizer.transform over every string.
    var transformNanoseconds: UInt64
    /// Results left alone with a placeholder problem, and results equal to their input.
    var problems: Int
    var firstProblem: String?
    var unchanged: Int

    /// Best round of the whole catalog path (read, rewrite) and its parts; nil when it failed.
    var catalog: CatalogPathFigures?
    var catalogError: String?
    /// `pincer run l10n.catalog` of the same file; nil when it failed.
    var catalogCommand: CatalogCommandFigures?
    var catalogCommandError: String?

    /// pseudol10nutil's figures; nil when it could not run (see baselineError).
    var baseline: L10nBaselineFigures?
    var baselineError: String?

    var transformRate: Double { Double(strings) * 1e9 / Double(max(transformNanoseconds, 1)) }
    var transformMicroseconds: Double { Double(transformNanoseconds) / 1e3 / Double(max(strings, 1)) }
    /// Our rate over theirs: higher is better; nil without a baseline.
    var ratio: Double? { baseline.map { transformRate / max($0.rate, 1e-9) } }

    var errors: [(part: String, message: String)] {
        [("catalog", catalogError), ("l10n.catalog command", catalogCommandError), ("pseudol10nutil", baselineError)].compactMap { part, message in
            message.map { (part, $0) }
        }
    }

    /// Both sides ran over every string, and every one of ours was transformed
    /// without a placeholder problem (no numeric target there); the
    /// whole command's peak RSS is within its target.
    var passed: Bool {
        errors.isEmpty && baseline != nil && problems == 0 && unchanged == 0 && (baseline?.unchanged ?? 1) == 0
            && (catalogCommand?.passed ?? false)
    }
}

/// `pincer run l10n.catalog FILE.po --output OUT.po`, one run, spawn to wait4.
struct CatalogCommandFigures: Sendable {
    static let targetRatio = 3.0

    var fileBytes: Int
    var outputBytes: Int
    var seconds: Double
    var peakRSSBytes: Int
    /// Peak RSS of `pincer run l10n.modes` (the same plugin, no catalog), for scale.
    var idleRSSBytes: Int

    var ratio: Double { Double(peakRSSBytes) / Double(max(fileBytes, 1)) }
    var passed: Bool { ratio <= CatalogCommandFigures.targetRatio }
}

struct CatalogPathFigures: Sendable {
    var strings: Int
    var rounds: Int
    /// Best round of Catalog(bytes:format:table:) plus rewritten(locale:transform:).
    var nanoseconds: UInt64
    /// The read alone and the rewrite alone, in that round.
    var readNanoseconds: UInt64
    var rewriteNanoseconds: UInt64
    var outputBytes: Int

    var rate: Double { Double(strings) * 1e9 / Double(max(nanoseconds, 1)) }
    var readShare: Double { Double(readNanoseconds) / Double(max(nanoseconds, 1)) }
}

struct L10nBaselineFigures: Sendable {
    var strings: Int
    var rounds: Int
    var bestSeconds: Double
    var unchanged: Int
    var python: String
    var version: String
    /// The command run, for the report.
    var command: String

    var rate: Double { Double(strings) / max(bestSeconds, 1e-12) }
    var microseconds: Double { bestSeconds * 1e6 / Double(max(strings, 1)) }
}

enum L10nBench {
    /// Rounds of our transform and of pseudol10nutil's (the same number), and
    /// of the whole catalog path (information; it repeats the transform). A
    /// round of 100,000 strings takes seconds on each side: the part must stay
    /// under about a minute on two cores.
    static let rounds = 3
    static let catalogRounds = 1
    static let table = "bench"
    static let locale = "en-XA"
    static let install = "bash scripts/deps installs it into .build/consumers (or: pip install --pre pseudol10nutil)"
    /// Every mode that changes the text (showKeys replaces it).
    static let localizer = PseudoLocalizer(modes: [.accented, .lengthened, .boundaries, .rightToLeft], accentMap: .full)

    static func run(strings count: Int) throws(BenchError) -> L10nFigures {
        let corpus = L10nCorpus.strings(count)
        let keys = (0..<count).map { "key.\($0)" }
        // What the .po file holds, and what our transform (style .backslash) sees.
        let escaped = corpus.map(PO.escaped)

        let directory = try TemporaryDirectory(prefix: "pincer-bench-l10n")
        defer { directory.remove() }
        let poPath = "\(directory.path)/bench.po", listPath = "\(directory.path)/strings.json"
        let poBytes = PO.catalog(keys: keys, escaped: escaped)
        try writeFile(poPath, poBytes)
        try writeFile(listPath, JSON.array(corpus.map { .string($0) }).serializedBytes())

        var lengths = (shortest: Int.max, longest: 0)
        var nonASCII = 0, withPlaceholders = 0
        let scanner = PlaceholderScanner(style: .backslash)
        for s in escaped {
            lengths.shortest = min(lengths.shortest, s.count)
            lengths.longest = max(lengths.longest, s.count)
            if s.unicodeScalars.contains(where: { !$0.isASCII }) { nonASCII += 1 }
            if !scanner.placeholders(s).isEmpty { withPlaceholders += 1 }
        }

        // Ours: warm up (tables, allocator), then the best of the rounds.
        var outputs = [String](repeating: "", count: count)
        _ = transformAll(escaped, keys: keys, into: &outputs, limit: min(count, 10_000))
        var best = UInt64.max
        var tally = (problems: 0, firstProblem: String?.none, unchanged: 0)
        for _ in 0..<rounds {
            let start = monotonicNanoseconds()
            let t = transformAll(escaped, keys: keys, into: &outputs, limit: count)
            best = min(best, monotonicNanoseconds() - start)
            tally = t
        }
        var figures = L10nFigures(strings: count, rounds: rounds, shortestString: lengths.shortest, longestString: lengths.longest,
                                  nonASCIIStrings: nonASCII, stringsWithPlaceholders: withPlaceholders, catalogBytes: poBytes.count,
                                  transformNanoseconds: best, problems: tally.problems, firstProblem: tally.firstProblem,
                                  unchanged: tally.unchanged)
        // Spot-check that the transform did what its modes say, beyond "changed".
        if let bad = zip(escaped, outputs).first(where: { !looksPseudoLocalized($1, from: $0) }) {
            throw BenchError("the transform of \"\(bad.0)\" gave \"\(bad.1)\", which lacks the brackets, accents, padding or bidi controls of the modes")
        }

        var inProcessOutput: [UInt8] = []
        do { figures.catalog = try catalogPath(poBytes, count: count, expected: outputs, keys: keys, output: &inProcessOutput) } catch {
            figures.catalogError = error.message
        }
        if figures.catalog != nil {
            do {
                figures.catalogCommand = try catalogCommand(poPath, fileBytes: poBytes.count, expected: inProcessOutput, directory: directory.path)
            } catch { figures.catalogCommandError = error.message }
        }
        inProcessOutput = []
        do { figures.baseline = try baseline(listPath: listPath, count: count) } catch { figures.baselineError = error.message }
        return figures
    }

    /// One pass of our transform over the first `limit` strings; the results go into `outputs`.
    @inline(never)
    static func transformAll(_ strings: [String], keys: [String], into outputs: inout [String],
                             limit: Int) -> (problems: Int, firstProblem: String?, unchanged: Int) {
        var problems = 0, unchanged = 0
        var firstProblem: String?
        for i in 0..<limit {
            let s = strings[i]
            let result = localizer.transform(s, style: .backslash, key: keys[i], table: table)
            if let problem = result.problem {
                problems += 1
                if firstProblem == nil { firstProblem = "\(keys[i]) \"\(s)\": \(problem)" }
            }
            if result.text == s { unchanged += 1 }
            outputs[i] = result.text
        }
        return (problems, firstProblem, unchanged)
    }

    /// Brackets around it, bidi controls in it, and longer than the input (padding).
    static func looksPseudoLocalized(_ output: String, from input: String) -> Bool {
        output.hasPrefix("[\u{2060}") && output.hasSuffix("\u{2060}]")
            && output.unicodeScalars.contains("\u{202E}")
            && output.unicodeScalars.count > input.unicodeScalars.count + 4
    }

    // MARK: the whole catalog path

    static func catalogPath(_ poBytes: [UInt8], count: Int, expected: [String],
                            keys: [String], output: inout [UInt8]) throws(BenchError) -> CatalogPathFigures {
        func once() throws(BenchError) -> (read: UInt64, rewrite: UInt64, output: [UInt8]) {
            let start = monotonicNanoseconds()
            let catalog: CatalogRewrite
            do { catalog = try CatalogRewrite(bytes: poBytes, format: .po, table: table) } catch {
                throw BenchError("CatalogRewrite(bytes:format:.po) of the generated catalog: \(error)")
            }
            let read = monotonicNanoseconds()
            var output: [UInt8] = []
            output.reserveCapacity(poBytes.count * 5)
            // Where l10n.catalog hands each piece to the file, this appends it.
            do {
                try catalog.write(locale: locale, transform: { s in
                    localizer.transform(s.raw, style: s.style, key: s.displayKey, table: s.table).text
                }, to: { output.append(contentsOf: $0) })
            } catch {
                throw BenchError("CatalogRewrite.write of the generated catalog: \(error)")
            }
            let end = monotonicNanoseconds()
            guard catalog.stringCount == count else {
                throw BenchError("the catalog read \(catalog.stringCount) strings from \(count) entries")
            }
            return (read - start, end - read, output)
        }
        // The transform is warm from the rounds before; the reader is not.
        var best: (read: UInt64, rewrite: UInt64, output: [UInt8])?
        for _ in 0..<catalogRounds {
            let r = try once()
            if r.read + r.rewrite < (best.map { $0.read + $0.rewrite } ?? .max) { best = r }
        }
        guard let best else { throw BenchError("no catalog round ran") }
        try verifyRewritten(best.output, expected: expected, keys: keys)
        output = best.output
        return CatalogPathFigures(strings: count, rounds: catalogRounds, nanoseconds: best.read + best.rewrite, readNanoseconds: best.read,
                                  rewriteNanoseconds: best.rewrite, outputBytes: best.output.count)
    }

    /// Forks (from a small process of its own), execs the command in argv,
    /// waits: prints "peak STATUS MAXRSS_KB SECONDS" last.
    static let peakScript = """
        import os, sys, time
        os.environ.pop("PINCER_PLUGIN_PATH", None)
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                os.execv(sys.argv[1], sys.argv[1:])
            finally:
                os._exit(127)
        _, status, usage = os.wait4(pid, 0)
        print("peak", os.waitstatus_to_exitcode(status), usage.ru_maxrss, time.monotonic() - start)
        """

    /// `pincer` with `arguments` through `peakScript`: exit status, peak RSS, seconds.
    static func peak(_ arguments: [String], what: String) throws(BenchError) -> (rss: Int, seconds: Double) {
        guard let directory = Host.executableDirectory() else { throw BenchError("cannot find this executable's directory") }
        let pincer = "\(directory)/pincer"
        guard access(pincer, X_OK) == 0 else {
            throw BenchError("\(pincer) is missing; build it beside pincer-bench: swift build -c release --product pincer")
        }
        let venv = PackageFile.path(".build/consumers/bin/python3").flatMap { access($0, X_OK) == 0 ? $0 : nil }
        guard let python = venv ?? findInPath("python3") else { throw BenchError("python3 (which starts the command) is not on PATH") }
        let (_, output) = try HARSpeedBench.measured(python, ["-c", peakScript, pincer] + arguments, what: what)
        let last = String(decoding: output, as: UTF8.self).split(separator: "\n").last ?? ""
        let fields = last.split(separator: " ")
        guard fields.count == 4, fields[0] == "peak", let status = Int(fields[1]), let kilobytes = Int(fields[2]),
              let seconds = Double(fields[3]) else {
            throw BenchError("\(what): the peak-RSS wrapper printed \(last.prefix(200))")
        }
        guard status == 0 else { throw BenchError("\(what) exited with status \(status)") }
        return (kilobytes * 1024, seconds)
    }

    /// The whole command on the file the in-process path read; its output
    /// must be the in-process output, byte for byte.
    static func catalogCommand(_ poPath: String, fileBytes: Int, expected: [UInt8],
                               directory: String) throws(BenchError) -> CatalogCommandFigures {
        let state = "\(directory)/state", out = "\(directory)/bench.en-XA.po"
        guard mkdir(state, 0o700) == 0 || errno == EEXIST else { throw BenchError("cannot create \(state)") }
        let modes = localizer.modes.names.joined(separator: ",")
        let idle = try peak(["--state-dir", state, "run", "l10n.modes"], what: "pincer run l10n.modes")
        let run = try peak(["--state-dir", state, "run", "l10n.catalog", poPath, "--output", out, "--modes", modes, "--locale", locale],
                           what: "pincer run l10n.catalog")
        let written = try readFileBytes(out)
        unlink(out)
        guard written == expected else {
            let at = (0..<min(written.count, expected.count)).first { written[$0] != expected[$0] } ?? min(written.count, expected.count)
            throw BenchError("pincer run l10n.catalog wrote \(written.count) bytes, the in-process path \(expected.count); they differ from byte \(at)")
        }
        return CatalogCommandFigures(fileBytes: fileBytes, outputBytes: written.count, seconds: run.seconds, peakRSSBytes: run.rss,
                                     idleRSSBytes: idle.rss)
    }

    /// The rewritten catalog reads back with every msgstr equal to our
    /// transform of its msgid, in order, and the header names the locale.
    static func verifyRewritten(_ bytes: [UInt8], expected: [String], keys: [String]) throws(BenchError) {
        let back: Catalog
        do { back = try Catalog(bytes: bytes, format: .po, table: table) } catch {
            throw BenchError("the rewritten catalog does not read back: \(error)")
        }
        let translated = back.translations
        guard translated.count == expected.count else {
            throw BenchError("the rewritten catalog holds \(translated.count) translations, expected \(expected.count)")
        }
        for (i, t) in translated.enumerated() {
            guard t.source.key.hasPrefix(keys[i] + "\u{4}"), t.translated.raw == expected[i], t.language == locale else {
                throw BenchError("rewritten entry \(i) (\(t.source.key.split(separator: "\u{4}").first ?? "")) has msgstr \"\(t.translated.raw)\" (language \(t.language)), expected \"\(expected[i])\" (\(locale))")
            }
        }
    }

    // MARK: the baseline

    static func baseline(listPath: String, count: Int) throws(BenchError) -> L10nBaselineFigures {
        let (parsed, command) = try PythonBaseline.run("bench-l10n-baseline.py", arguments: [listPath, "--rounds", String(rounds)],
                                                       shown: [listPath: "<strings.json>"], library: "pseudol10nutil", install: install)
        let line = parsed.serialized(pretty: false)
        guard let n = parsed["count"]?.int64Value, n == Int64(count),
              let seconds = parsed["best_seconds"]?.doubleValue, seconds > 0,
              let unchanged = parsed["unchanged"]?.int64Value,
              let characters = parsed["output_characters"]?.int64Value else {
            throw BenchError("`\(command)` printed \(line.prefix(300)), not the expected count of \(count), best_seconds, unchanged and output_characters")
        }
        // Every string got at least its two brackets.
        guard characters >= 2 * Int64(count) else {
            throw BenchError("pseudol10nutil's output has \(characters) characters in all for \(count) strings: it did not transform them")
        }
        return L10nBaselineFigures(strings: count, rounds: Int(parsed["rounds"]?.int64Value ?? Int64(rounds)), bestSeconds: seconds,
                                   unchanged: Int(unchanged), python: parsed["python"]?.stringValue ?? "?",
                                   version: parsed["pseudol10nutil"]?.stringValue ?? "?", command: command)
    }
}

// MARK: - .po writing

enum PO {
    /// The gettext escaping of a msgid: backslash, quote, newline, tab.
    static func escaped(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { $0 == "\\" || $0 == "\"" || $0 == "\n" || $0 == "\t" }) else { return s }
        var out = String.UnicodeScalarView()
        for c in s.unicodeScalars {
            switch c {
            case "\\": out.append(contentsOf: #"\\"#.unicodeScalars)
            case "\"": out.append(contentsOf: #"\""#.unicodeScalars)
            case "\n": out.append(contentsOf: #"\n"#.unicodeScalars)
            case "\t": out.append(contentsOf: #"\t"#.unicodeScalars)
            default: out.append(c)
            }
        }
        return String(out)
    }

    /// A UTF-8 .po catalog: a header, then one entry per string with its
    /// key as msgctxt (so equal strings stay distinct messages) and an empty msgstr.
    static func catalog(keys: [String], escaped: [String]) -> [UInt8] {
        var text = """
            # Generated by pincer-bench (l10n part).
            msgid ""
            msgstr ""
            "Project-Id-Version: pincer-bench\\n"
            "MIME-Version: 1.0\\n"
            "Content-Type: text/plain; charset=UTF-8\\n"
            "Content-Transfer-Encoding: 8bit\\n"
            "Language: en\\n"


            """
        text.reserveCapacity(escaped.reduce(0) { $0 + $1.utf8.count } + escaped.count * 48)
        for (n, (key, s)) in zip(keys, escaped).enumerated() {
            if n % 7 == 0 { text += "#: Sources/App/View\(n % 97).swift:\(n % 400 + 1)\n" }
            text += "msgctxt \"\(key)\"\nmsgid \"\(s)\"\nmsgstr \"\"\n\n"
        }
        return Array(text.utf8)
    }
}

// MARK: - the strings

/// Realistic UI strings, the same for every run (a seeded generator).
enum L10nCorpus {
    static func strings(_ count: Int) -> [String] {
        var g = Generator(seed: 0x5EED_110E)
        var out: [String] = []
        out.reserveCapacity(count)
        for _ in 0..<count { out.append(g.string()) }
        return out
    }

    struct Generator {
        var random: SplitMix64
        init(seed: UInt64) { random = SplitMix64(seed: seed) }

        mutating func next() -> UInt64 { random.next() }
        mutating func below(_ n: Int) -> Int { random.below(n) }
        mutating func pick(_ items: [String]) -> String { random.pick(items) }
        mutating func chance(_ percent: Int) -> Bool { random.chance(percent) }

        mutating func string() -> String {
            let roll = below(100)
            var s: String
            switch roll {
            case 0..<22: s = label()
            case 22..<48: s = sentences(target: 20 + below(181))
            case 48..<68: s = printf()
            case 68..<79: s = braces()
            case 79..<83: s = plural()
            case 83..<91: s = html()
            case 91..<96: s = url()
            default: s = multiline()
            }
            if s.count > 200 { s = trimmed(s, to: 200) }
            return s
        }

        /// Cuts a string of sentences after its last whole sentence within
        /// `limit` characters, else at a word boundary ending with a period.
        func trimmed(_ s: String, to limit: Int) -> String {
            let head = Array(s.prefix(limit))
            let sentenceEnd = { (i: Int) in ".?!".contains(head[i]) && i > limit / 2 && (i + 1 == head.count || head[i + 1] == " ") }
            if let end = head.indices.last(where: sentenceEnd) {
                return String(head[...end])
            }
            var words: [Substring] = []
            var length = 0
            for word in s.split(separator: " ") {
                if length + word.count + 1 > limit - 1 { break }
                words.append(word)
                length += word.count + 1
            }
            return words.joined(separator: " ") + "."
        }

        // Vocabulary.
        static let labels = [
            "Save", "Cancel", "Done", "Edit", "Delete", "Share", "Settings", "Back", "Next", "Open", "Close",
            "Retry", "Undo", "Redo", "Copy", "Paste", "Help", "Search", "Sign In", "Sign Out", "Log Out",
            "Continue", "Skip", "Add", "Remove", "More", "Less", "Yes, Delete", "Send", "Reply", "Archive",
            "Rename", "Move to…", "New Folder", "Select All", "Show Details", "Hide", "Learn More", "Try Again",
            "Allow", "Don’t Allow", "Not Now", "Get Started", "Upgrade", "Restore Purchases", "Privacy",
            "Notifications", "Appearance", "Dark Mode", "Language", "About", "Version", "Feedback", "Log In",
            "Forgot Password?", "Create Account", "Sign in with Email", "Filter", "Sort by Name", "Sort by Date",
            "Favorites", "Recents", "Downloads", "Trash", "Empty Trash", "Export…", "Import…", "Print…",
        ]
        static let nouns = [
            "file", "folder", "photo", "message", "account", "password", "device", "project", "document",
            "album", "playlist", "contact", "event", "note", "download", "backup", "workspace", "team",
            "invoice", "report", "subscription", "profile", "comment", "label", "server", "item", "attachment",
        ]
        static let verbs = [
            "save", "delete", "share", "rename", "move", "copy", "upload", "download", "archive", "restore",
            "sync", "open", "export", "import", "print", "edit", "send", "invite", "remove", "update",
        ]
        static let pastVerbs = [
            "saved", "deleted", "shared", "renamed", "moved", "copied", "uploaded", "downloaded", "archived",
            "restored", "synced", "opened", "exported", "imported", "printed", "edited", "sent", "updated",
        ]
        static let adjectives = ["new", "selected", "shared", "recent", "private", "archived", "unsaved", "offline", "large", "hidden"]
        static let words = [
            "the", "your", "this", "a", "all", "some", "any", "will", "be", "can", "not", "could", "is", "are",
            "has", "have", "been", "to", "from", "with", "in", "on", "for", "of", "and", "or", "when", "after",
            "before", "until", "again", "now", "later", "today", "changes", "settings", "connection",
            "internet", "storage", "space", "available", "required", "permission", "access", "network",
            "please", "check", "try", "make", "sure", "that", "it", "you", "we", "they", "app", "screen",
            "button", "list", "window", "page", "data", "information", "security", "time", "minutes", "hours",
        ]
        static let nonASCII = [
            "café", "naïve", "Zürich", "résumé", "São Paulo", "Ærøskøbing", "Straße", "日本語", "Привет",
            "😀", "🎉", "—", "€5", "© 2025", "«Bonjour»", "Ελληνικά", "ångström", "piñata",
        ]

        mutating func noun() -> String { pick(Self.nouns) }
        mutating func nouns() -> String { pick(Self.nouns) + "s" }
        func capitalized(_ s: String) -> String {
            guard let first = s.first else { return s }
            return first.uppercased() + s.dropFirst()
        }

        mutating func label() -> String {
            switch below(4) {
            case 0: return "\(capitalized(pick(Self.verbs))) \(capitalized(pick(Self.adjectives))) \(capitalized(nouns()))"
            case 1: return "\(capitalized(pick(Self.verbs))) \(capitalized(noun()))"
            default: return pick(Self.labels)
            }
        }

        /// One or more sentences of about `target` characters.
        mutating func sentences(target: Int) -> String {
            var s = ""
            while s.count < target {
                if !s.isEmpty { s += " " }
                s += sentence()
            }
            return s
        }

        mutating func sentence() -> String {
            var words: [String] = []
            switch below(4) {
            case 0: words = ["The", pick(Self.adjectives), noun(), "could", "not", "be", pick(Self.pastVerbs)]
            case 1: words = ["Your", nouns(), "will", "be", pick(Self.pastVerbs)]
            case 2: words = [capitalized(pick(Self.verbs)), "the", pick(Self.adjectives), noun()]
            default: words = [capitalized(pick(Self.words))]
            }
            for _ in 0..<below(9) { words.append(pick(Self.words)) }
            if chance(10) { words.insert(pick(Self.nonASCII), at: 1 + below(words.count)) }
            let end = below(10)
            return words.joined(separator: " ") + (end < 7 ? "." : end < 9 ? "?" : "!")
        }

        mutating func printf() -> String {
            let n = noun(), ns = nouns(), v = pick(Self.verbs), p = pick(Self.pastVerbs)
            let templates = [
                "%@ \(p) %lld \(ns) with you.",
                "Deleting %1$@ will also remove %2$lld \(ns).",
                "Downloaded %.2f MB of %.2f MB",
                "%d%% complete",
                "Battery at %d%%",
                "%1$@ and %2$@ liked your \(n)",
                "Last \(p) %@ ago",
                "Version %@ (%lld)",
                "Page %ld of %ld",
                "%@ is typing…",
                "Are you sure you want to \(v) \"%@\"?",
                "%2$@ \(p) the \(n) “%1$@”.",
                "Could not \(v) %lu \(ns): %@",
                "%@ left in your \(n) · %.1f GB free",
                "Uploading %1$lld of %2$lld \(ns) (%3$.0f%%)",
            ]
            var s = pick(templates)
            if chance(35) { s += " " + sentence() }
            if chance(5) { s = pick(Self.nonASCII) + " " + s }
            return s
        }

        mutating func braces() -> String {
            let n = noun(), ns = nouns(), p = pick(Self.pastVerbs)
            let templates = [
                "Welcome back, {name}!",
                "{count} \(ns) selected",
                "Hi {firstName}, your \(n) is ready.",
                "{user} \(p) {item}",
                "{name} invited you to join {team}.",
                "Storage: {used} of {total} used",
                "Sent to {email} at {time}",
                "{{appName}} needs access to your \(ns).",
            ]
            var s = pick(templates)
            if chance(30) { s += " " + sentence() }
            return s
        }

        mutating func plural() -> String {
            let n = noun(), ns = nouns()
            let templates = [
                "{count, plural, one {# \(n)} other {# \(ns)}}",
                "You have {count, plural, =0 {no new messages} one {# new message} other {# new messages}}.",
                "{count, plural, one {Delete # \(n)?} other {Delete # \(ns)?}}",
                "{name} \(pick(Self.pastVerbs)) {count, plural, one {# \(n)} other {# \(ns)}} with you.",
                "{count, plural, one {# minute left} other {# minutes left}}",
            ]
            return pick(templates)
        }

        mutating func html() -> String {
            let n = noun(), p = pick(Self.pastVerbs)
            let templates = [
                "<b>%@</b> \(p) your \(n)",
                "Terms &amp; Conditions",
                "Read our <a href=\"https://example.com/privacy\">Privacy Policy</a>.",
                "Press <i>Save</i> to keep your changes.<br/>Press <i>Cancel</i> to discard them.",
                "Tom &amp; Jerry’s \(n)",
                "<strong>Warning:</strong> this \(n) will be \(p) for everyone.",
                "Price: <b>&euro;%.2f</b> per month",
                "<p>Your \(n) was \(p).</p>",
            ]
            return pick(templates)
        }

        mutating func url() -> String {
            let n = noun()
            switch below(4) {
            case 0: return "Visit https://help.example.com/articles/\(below(90_000) + 1000) for more information."
            case 1: return "Learn more at www.example.org/\(n)s"
            case 2: return "Contact support@example.com if this \(n) keeps failing."
            default: return "Open https://example.com/\(n)?id=\(below(1_000_000))&ref=app in your browser"
            }
        }

        mutating func multiline() -> String {
            switch below(3) {
            case 0: return sentence() + "\n" + sentence()
            case 1: return "\(capitalized(noun())):\t%@\nStatus:\t%@"
            default: return sentences(target: 150 + below(51))
            }
        }
    }
}
