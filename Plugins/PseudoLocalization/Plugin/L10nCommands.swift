import PincerPluginKit
import PseudoL10n
#if canImport(Glibc)
import Glibc
#endif

/// The l10n.* commands.
struct L10nCommands {
    let store: FirstUse<L10nStore>
    let service: L10nService

    func register(with host: PluginHost) throws {
        let store = self.store
        try host.addCommand("transform(text: string, key: string = \"\", table: string = \"\", modes: string = \"\") -> string",
                            summary: "Pseudo-localise one string with the enabled modes (or --modes a,b)",
                            details: """
                                Prints {"input","output","modes","problem"}. problem is set when the text was left \
                                unchanged because a transform would have changed its placeholders. --key and --table feed \
                                the keys mode. Modes: \(PseudoModes.named.map(\.name).joined(separator: ", ")), all, none.
                                """, jsonResult: true) { args in
            let settings = try store.get().settings
            let modes = try L10nCommands.modes(args[3].string, default: settings.modes)
            let key = args[1].string.isEmpty ? nil : args[1].string
            let table = args[2].string.isEmpty ? L10nSettings.defaultTable : args[2].string
            let result = PseudoLocalizer(modes: modes, accentMap: settings.accentMap).transform(args[0].string, key: key, table: table)
            return .string(JSON.object([("input", .string(args[0].string)), ("output", .string(result.text)),
                                        ("modes", .array(modes.names.map(JSON.string))),
                                        ("problem", result.problem.map(JSON.string) ?? .null)]).serialized())
        }
        try host.addCommand("catalog(input: string, output: string = \"\", modes: string = \"\", locale: string = \"\", in_place: bool = false) -> string",
                            summary: "Pseudo-localise a whole catalog into a new file",
                            details: """
                                Formats by extension: .strings (UTF-8 or UTF-16), .stringsdict, .xcstrings (adds the \
                                pseudo-locale), .xml (Android strings.xml), .po/.pot. Every key, comment and the order are \
                                kept. --output is required unless --in_place true. --locale defaults to en-XA (ar-XB with \
                                the rtl mode). A malformed catalog is reported with line and column and nothing is written. \
                                Prints {"input","output","format","locale","strings","transformed","unchanged":[...]}.
                                """, changesState: true, jsonResult: true) { args in
            try L10nCommands.catalog(input: args[0].string, output: args[1].string, modes: args[2].string,
                                     locale: args[3].string, inPlace: args[4].bool, settings: try store.get().settings)
        }
        try host.addCommand("modes() -> string", summary: "Each mode, whether it is on, and the other settings",
                            jsonResult: true) { _ in
            let s = try store.get().settings
            return .string(JSON.object([
                ("modes", .array(PseudoModes.named.map { mode, name in
                    .object([("mode", .string(name)), ("on", .bool(s.modes.contains(mode))),
                             ("summary", .string(PseudoLocalization.summaries[name] ?? ""))])
                })),
                ("accentMap", .string(s.accentMap.rawValue)), ("layoutRightToLeft", .bool(s.layoutRightToLeft)),
                ("tables", .array(s.tables.map(JSON.string))),
            ]).serialized())
        }
        try host.addCommand("set(mode: string, state: string) -> string",
                            summary: "Switch a mode on or off (persisted): l10n.set accented on",
                            details: "Modes: \(PseudoModes.named.map(\.name).joined(separator: ", ")). The rtl mode also switches the layout flag.",
                            changesState: true) { args in
            guard let mode = PseudoModes(name: args[0].string) else {
                throw L10nError.invalid("unknown mode '\(args[0].string)' (modes: \(PseudoModes.named.map(\.name).joined(separator: ", ")))")
            }
            let on: Bool
            switch args[1].string.lowercased() {
            case "on", "true", "1", "yes": on = true
            case "off", "false", "0", "no": on = false
            default: throw L10nError.invalid("state must be on or off, not '\(args[1].string)'")
            }
            try store.get().set(mode, on: on)
            return .string("\(args[0].string.lowercased()) \(on ? "on" : "off"); enabled: \(L10nCommands.describe(try store.get().settings.modes))")
        }
        try host.addCommand("off() -> string", summary: "Turn every mode (and the mirrored layout) off", changesState: true) { _ in
            try store.get().turnEverythingOff()
            return .string("every mode is off")
        }
        try host.addCommand("tables(list: string = \"\") -> string",
                            summary: "Show, or set (comma-separated), the tables whose strings are transformed",
                            details: "Localizable, the default table, is always transformed; strings of other tables pass unchanged unless listed.",
                            changesState: true) { args in
            if !args[0].string.isEmpty {
                let tables = L10nCommands.tables(from: args[0].string)
                try store.get().change { $0.tables = tables }
            }
            return .string(try store.get().settings.tables.joined(separator: ","))
        }
        try host.addCommand("check(catalog: string, translation: string = \"\") -> string",
                            summary: "Fail when a translation breaks placeholders; list each problem",
                            details: """
                                With one catalog: each string on its own (gaps in numbered arguments, kinds of arguments \
                                mixed) and, for .po and .xcstrings, every translation it holds against its source. With a \
                                second catalog (the translation of the first): each string against the string with the \
                                same key and part, or, when it is a .po or .xcstrings holding translations \
                                (a de.po beside its .pot), those against their sources. A .po message is read by its format flag as msgfmt -c reads it \
                                (c-format, python-format, python-brace-format; fuzzy translations are skipped). No \
                                problem: prints {"catalog","checked","problems":0,"issues":[]}, checked counting messages. \
                                Problems: the command fails (exit 1) with one line per problem \
                                (file:line:column: "key" [part] (language): message); with --json the same report, \
                                issues [{"key","part","language","file","line","column","kind","message","source",\
                                "translation"}], comes first as a line of output.
                                """, jsonResult: true) { args in
            try L10nCommands.check(args[0].string, translation: args[1].string, args: args)
        }
    }

    // MARK: catalog

    static func catalog(input: String, output: String, modes: String, locale: String, inPlace: Bool,
                        settings: L10nSettings) throws -> CommandValue {
        // Read for one rewrite: a .po is held as its bytes only, and the
        // output goes to the file in pieces (README "Catalogs": memory).
        let catalog = try read(input) { bytes, format, table throws(CatalogError) in
            try CatalogRewrite(bytes: bytes, format: format, table: table)
        }
        let target = inPlace ? input : output
        guard !target.isEmpty else {
            throw CommandError.invalidArgument("catalog: give --output <path> (the input is only rewritten with --in_place true)")
        }
        if !inPlace, sameFile(input, target) {
            throw CommandError.invalidArgument("catalog: --output \(target) is the input file; pass --in_place true to rewrite it")
        }
        let selected = try L10nCommands.modes(modes, default: settings.modes)
        let localizer = PseudoLocalizer(modes: selected, accentMap: settings.accentMap)
        let pseudoLocale = locale.isEmpty ? (selected.contains(.rightToLeft) ? "ar-XB" : "en-XA") : locale
        var unchanged: [JSON] = []
        var transformed = 0
        let transform = { (string: CatalogString) -> String in
            let result = localizer.transform(string.raw, style: string.style, key: string.displayKey, table: string.table)
            if let problem = result.problem {
                unchanged.append(.object([("key", .string(string.key)), ("part", .string(string.part)),
                                          ("line", .int(Int64(string.line))), ("column", .int(Int64(string.column))),
                                          ("problem", .string(problem))]))
            } else if result.text != string.raw {
                transformed += 1
            }
            return result.text
        }
        try TextFile.writeAtomically(to: target) { write in
            try catalog.write(locale: pseudoLocale, transform: transform, to: write)
        }
        return .string(JSON.object([
            ("input", .string(input)), ("output", .string(target)), ("format", .string(catalog.format.rawValue)),
            ("locale", .string(pseudoLocale)), ("modes", .array(selected.names.map(JSON.string))),
            ("strings", .int(Int64(catalog.stringCount))), ("transformed", .int(Int64(transformed))),
            ("unchanged", .array(unchanged)),
        ]).serialized())
    }

    static func read(_ path: String) throws -> Catalog {
        try read(path) { bytes, format, table throws(CatalogError) in try Catalog(bytes: bytes, format: format, table: table) }
    }

    /// The catalog at `path` as `make` reads its bytes; a malformed one is
    /// an error naming the file, line and column.
    static func read<C>(_ path: String, _ make: ([UInt8], CatalogFormat, String) throws(CatalogError) -> C) throws -> C {
        guard let format = Catalog.format(forPath: path) else {
            throw CommandError.invalidArgument("\(path): not a catalog this reads (.strings, .stringsdict, .xcstrings, .xml, .po, .pot)")
        }
        let bytes = try readFile(path)
        do {
            return try make(bytes, format, tableName(path))
        } catch {
            throw CommandError.invalidArgument("\(path): \(error) (nothing was written)")
        }
    }

    /// A file's bytes in one buffer of its size (TextFile.readBytes grows
    /// its buffer as it reads, which for a 10 MB catalog peaks at twice
    /// that); a pipe or device, whose size is not known, is read that way.
    static func readFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return try TextFile.readBytes(path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 else { return try TextFile.readBytes(path) }
        let size = Int(info.st_size)
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            while count < size {
                let n = Glibc.read(fd, buffer.baseAddress! + count, size - count)
                if n > 0 { count += n } else if n < 0 && errno == EINTR { continue } else { failure = n < 0 ? errno : 0; break }
            }
        }
        if failure != 0 { throw CommandError("cannot read \(path): \(String(cString: strerror(failure)))") }
        // A file that shrank while it was read: read it again the ordinary way.
        return bytes.count == size ? bytes : try TextFile.readBytes(path)
    }

    /// The table of a catalog file: its name without directory and extension.
    static func tableName(_ path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    static func sameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return a == b }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    // MARK: check

    /// One problem found, with where it is.
    struct Finding {
        var file: String
        var string: CatalogString
        var language: String
        var issue: PlaceholderCheck.Issue
        var source: String?
        var translation: String?

        var json: JSON {
            .object([("key", .string(string.key)), ("part", .string(string.part)), ("language", .string(language)),
                     ("file", .string(file)), ("line", .int(Int64(string.line))), ("column", .int(Int64(string.column))),
                     ("kind", .string(issue.kind.rawValue)), ("message", .string(issue.message)),
                     ("source", source.map(JSON.string) ?? .null), ("translation", translation.map(JSON.string) ?? .null)])
        }

        /// `file:line:column: key [part] (language): message`, as compilers and msgfmt write them.
        var line: String {
            "\(file):\(string.line):\(string.column): \"\(string.displayKey)\"\(string.part.isEmpty ? "" : " [\(string.part)]")"
                + "\(language.isEmpty ? "" : " (\(language))"): \(issue.message)"
        }
    }

    /// The report of l10n.check: the messages checked (a key with all its
    /// parts and translations is one message) and the problems found.
    /// Problems make the command fail; its message lists them, and under
    /// --json the report goes first as a line of live output.
    static func check(_ path: String, translation: String, args: Arguments) throws -> CommandValue {
        let (report, findings) = try checkReport(path, translation: translation)
        if findings.isEmpty { return .string(report.serialized()) }
        if args.wantsJSON { args.output(json: report) }
        let messages = Set(findings.map { $0.string.key }).count
        throw CommandError("\(findings.count) placeholder problem\(findings.count == 1 ? "" : "s") in \(messages) of "
                           + "\(report["checked"]?.int64Value ?? 0) messages:\n" + findings.map(\.line).joined(separator: "\n"))
    }

    static func checkReport(_ path: String, translation: String) throws -> (JSON, [Finding]) {
        let source = try read(path)
        var findings: [Finding] = []
        func add(_ found: [PlaceholderCheck.Issue], file: String, at string: CatalogString, language: String,
                 source: String?, translation: String?) {
            for issue in found {
                findings.append(Finding(file: file, string: string, language: language, issue: issue, source: source,
                                        translation: translation))
            }
        }
        for string in source.strings {
            add(PlaceholderCheck.check(string.raw, style: string.style, grammar: string.grammar), file: path, at: string,
                language: "", source: string.raw, translation: nil)
        }
        // The translations a file holds, each against its source. Fuzzy ones
        // are not used (msgfmt leaves them out unchecked).
        func checkTranslations(of catalog: Catalog, file: String) {
            for pair in catalog.translations where !pair.fuzzy {
                add(PlaceholderCheck.compare(source: pair.source.raw, translation: pair.translated.raw, style: pair.translated.style,
                                             grammar: pair.source.grammar, relaxed: pair.fewCounts),
                    file: file, at: pair.translated, language: pair.language, source: pair.source.raw, translation: pair.translated.raw)
            }
        }
        checkTranslations(of: source, file: path)
        if !translation.isEmpty {
            let translated = try read(translation)
            // A .po or .xcstrings translation holds its own sources (a de.po
            // beside its .pot): its translations are what to check.
            if !translated.translations.isEmpty {
                checkTranslations(of: translated, file: translation)
                let messages = Set(source.strings.map(\.key)).union(translated.translations.map(\.translated.key))
                return report(path, translation: translation, checked: messages.count, findings)
            }
            var byKey: [String: CatalogString] = [:]
            for string in source.strings { byKey[string.key + "\u{1}" + string.part] = string }
            for string in translated.strings {
                guard let original = byKey[string.key + "\u{1}" + string.part] else { continue }
                add(PlaceholderCheck.compare(source: original.raw, translation: string.raw, style: string.style, grammar: original.grammar),
                    file: translation, at: string, language: tableName(translation), source: original.raw, translation: string.raw)
            }
        }
        return report(path, translation: translation, checked: Set(source.strings.map(\.key)).count, findings)
    }

    static func report(_ path: String, translation: String, checked: Int, _ findings: [Finding]) -> (JSON, [Finding]) {
        var fields: [(String, JSON)] = [("catalog", .string(path))]
        if !translation.isEmpty { fields.append(("translation", .string(translation))) }
        fields += [("checked", .int(Int64(checked))), ("problems", .int(Int64(findings.count))),
                   ("issues", .array(findings.map(\.json)))]
        return (.object(fields), findings)
    }

    // MARK: arguments

    /// Modes from "a,b", "all" or "none"; `fallback` when empty.
    static func modes(_ text: String, default fallback: PseudoModes) throws -> PseudoModes {
        let trimmed = trim(Substring(text))
        if trimmed.isEmpty { return fallback }
        if trimmed == "all" { return [.accented, .lengthened, .boundaries, .rightToLeft] }
        if trimmed == "none" { return [] }
        var modes: PseudoModes = []
        for name in trimmed.split(separator: ",") {
            let name = trim(name)
            guard let mode = PseudoModes(name: name) else {
                throw L10nError.invalid("unknown mode '\(name)' (modes: \(PseudoModes.named.map(\.name).joined(separator: ", ")), all, none)")
            }
            modes.insert(mode)
        }
        return modes
    }

    static func tables(from text: String) -> [String] {
        var tables = [L10nSettings.defaultTable]
        for name in text.split(separator: ",").map(trim) where !name.isEmpty && !tables.contains(name) {
            tables.append(name)
        }
        return tables
    }

    static func trim(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    static func describe(_ modes: PseudoModes) -> String {
        modes.isEmpty ? "none" : modes.names.joined(separator: ", ")
    }
}
