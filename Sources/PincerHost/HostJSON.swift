import CPincerSDK

/// The JSON shapes of what the host holds (README "JSON output"). The shell's
/// `--json` output and the control protocol both come from here, so an
/// attached client sees exactly what `pincer … --json` prints.
extension Host {
    /// "major.minor" of the plugin ABI this host implements.
    public static let abiVersion = "\(PINCER_ABI_MAJOR).\(PINCER_ABI_MINOR)"

    /// `pincer plugins --json`: {"plugins":[…],"failed":[…]}.
    public func pluginsJSON() -> JSON {
        .object([("plugins", .array(pluginListJSON())), ("failed", .array(failureListJSON()))])
    }

    public func pluginListJSON() -> [JSON] {
        plugins.map { p in
            .object([("id", .string(p.id)), ("short_name", .string(p.shortName)), ("name", .string(p.name)),
                     ("version", .string(p.version)), ("summary", .string(p.summary)),
                     ("abi", .string("\(p.abiMajor).\(p.abiMinor)")), ("path", .string(p.path)),
                     // false: known from the plugin registry, loaded when first used.
                     ("loaded", .bool(isLoaded(pluginID: p.id)))])
        }
    }

    public func failureListJSON() -> [JSON] {
        failures.map { f in
            .object([("path", .string(f.path)), ("id", f.pluginID.map(JSON.string) ?? .null), ("reason", .string(f.reason))])
        }
    }

    /// One entry as `pincer get --json` prints it; its value is read now
    /// (plugin callbacks run). `pinned` is the set of pinned entry ids.
    public func entryJSON(_ e: Entry, pinned: Set<String>) -> JSON {
        var fields: [(String, JSON)] = [
            ("id", .string(e.fullID)), ("kind", .string(e.kind.rawValue)), ("title", .string(e.title)),
            ("summary", .string(e.summary)), ("plugin", .string(e.pluginID)), ("pinned", .bool(pinned.contains(e.fullID))),
        ]
        if !e.choices.isEmpty { fields.append((e.kind == .choice ? "choices" : "suggestions", .array(e.choices.map(JSON.string)))) }
        switch state(of: e) {
        case .value(let v): fields.append(("value", .string(e.isSecret && !v.isEmpty ? "********" : v)))
        case .pluginValue(let v, let details):
            fields.append(("value", .string(e.isSecret && !v.isEmpty ? "********" : v)))
            fields.append(("details", .object(details.map { ($0.title, $0.value.map(JSON.string) ?? .null) })))
        case .rows(let rows):
            fields.append(("rows", .array(rows.map { .object([("title", .string($0.title)), ("value", $0.value.map(JSON.string) ?? .null)]) })))
        case .action(let c): fields.append(("command", .string(c)))
        case .failed(let why): fields.append(("error", .string(why)))
        }
        return .object(fields)
    }

    /// The `sections` array of `pincer menu --json`.
    public func sectionsJSON(_ sections: [Section]) -> [JSON] {
        let pinned = Set(pinnedEntryIDs())
        return sections.map { s in
            .object([("id", .string(s.id)), ("title", .string(s.title)),
                     ("entries", .array(entries(inSection: s.id).map { entryJSON($0, pinned: pinned) }))])
        }
    }

    /// One command as `pincer help <command> --json` prints it.
    public static func commandJSON(_ c: Command) -> JSON {
        .object([
            ("name", .string(c.fullName)), ("signature", .string(c.signature.text)), ("usage", .string(c.usage)),
            ("summary", .string(c.summary)), ("plugin", .string(c.pluginID)), ("changes_state", .bool(c.changesState)),
            // A rest parameter counts as optional: it may be left out (zero items).
            ("parameters", .array(c.signature.parameters.map { p in
                .object([("name", .string(p.name)), ("type", .string(p.type.rawValue)), ("optional", .bool(p.isOptional || p.isRest)),
                         ("default", p.defaultValue?.json ?? .null), ("secret", .bool(p.isSecret)), ("rest", .bool(p.isRest)),
                         ("option", .string("--" + p.optionName))])
            })),
            ("result", .string(c.signature.result.rawValue)),
        ])
    }

    /// `commandJSON(c)` written straight into bytes, the same text as
    /// `commandJSON(c).serializedBytes()` (RegistryTests compares them):
    /// `pincer commands --json` writes one per command on every start, a
    /// thousand with a thousand plugins, and building the tree first cost
    /// more than the rest of the listing.
    public static func writeCommandJSON(_ c: Command, into out: inout [UInt8]) {
        writeCommandJSON(fullName: c.fullName, signature: c.signature, summary: c.summary, pluginID: c.pluginID,
                         changesState: c.changesState, into: &out)
    }

    /// The version of the object `writeCommandJSON` writes: the registry
    /// caches each scanned command's object, and a file made for another
    /// version is scanned again. Raise it with any change to that object.
    static let commandListingFormat = 1

    /// A command's object in `pincer commands --json`, for its registry record.
    static func listing(of c: Command) -> [UInt8] {
        var out: [UInt8] = []
        writeCommandJSON(c, into: &out)
        return out
    }

    /// `pincer commands --json`: {"commands":[…]} in name order, written
    /// into `out`; a deferred plugin's commands come from its registry
    /// records, in the same shape `writeCommandJSON` gives a Command.
    public func writeCommandsJSON(into out: inout [UInt8]) {
        writeCommandsJSON(flushingAt: Int.max) { out += $0 }
    }

    /// The same listing handed to `flush` a part at a time, each part at
    /// least `flushingAt` bytes (but the last) and ending after a whole
    /// command: a thousand plugins' listing (250 KB) goes out through a
    /// buffer reused, not one whose every page is new memory.
    public func writeCommandsJSON(flushingAt limit: Int, _ flush: ([UInt8]) -> Void) {
        let listing = commandListing()
        var out: [UInt8] = []
        out.reserveCapacity(min(limit, listing.count * 256) + 1024)
        out += #"{"commands":["#.utf8
        var first = true
        for item in listing {
            if out.count >= limit {
                flush(out)
                out.removeAll(keepingCapacity: true)
            }
            switch item.source {
            case .command(let c):
                if !first { out.append(UInt8(ascii: ",")) }
                Host.writeCommandJSON(c, into: &out)
            case .record(let plugin, let n):
                let listing = plugin.scanned.commands[n].listing
                if !listing.isEmpty {
                    // As the scanner wrote it (checked to be a JSON object when its record came in).
                    if !first { out.append(UInt8(ascii: ",")) }
                    out += listing
                } else {
                    let record = plugin.scanned.commands[n]
                    guard let signature = plugin.scanned.signature(ofCommand: n) else { continue }
                    if !first { out.append(UInt8(ascii: ",")) }
                    Host.writeCommandJSON(fullName: item.fullName, signature: signature, summary: record.summary, pluginID: plugin.info.id,
                                          changesState: record.changesState, into: &out)
                }
            case .registry(let known, let n):
                let image = known.image, command = image.commands[n]
                if command.listing.count > 0 {
                    if !first { out.append(UInt8(ascii: ",")) }
                    image.append(command.listing, to: &out)
                } else {
                    guard let signature = try? Signature.parse(image.string(command.signature)) else { continue }
                    if !first { out.append(UInt8(ascii: ",")) }
                    Host.writeCommandJSON(fullName: item.fullName, signature: signature, summary: image.string(command.summary),
                                          pluginID: known.id, changesState: command.flags & 1 != 0, into: &out)
                }
            }
            first = false
        }
        out += "]}\n".utf8
        flush(out)
    }

    /// The names and summaries of every command in name order, for the text listing.
    public func commandSummaries() -> [(name: String, summary: String)] {
        commandListing().map { ($0.fullName, $0.summary) }
    }

    static func writeCommandJSON(fullName: String, signature: Signature, summary: String, pluginID: String, changesState: Bool,
                                 into out: inout [UInt8]) {
        // Literal pieces are copied from their static bytes, not appended as a String's UTF-8 view.
        func put(_ text: StaticString) { text.withUTF8Buffer { out.append(contentsOf: $0) } }
        let parameters = signature.parameters
        put(#"{"name":"#)
        JSON.quote(fullName, into: &out)
        put(#","signature":"#)
        JSON.quote(signature.text, into: &out)
        put(#","usage":"#)
        // Without parameters the usage line is the name.
        JSON.quote(parameters.isEmpty ? fullName : signature.usage(fullName: fullName), into: &out)
        put(#","summary":"#)
        JSON.quote(summary, into: &out)
        put(#","plugin":"#)
        JSON.quote(pluginID, into: &out)
        out += changesState ? #","changes_state":true,"parameters":["#.utf8 : #","changes_state":false,"parameters":["#.utf8
        for (i, p) in parameters.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            put(#"{"name":"#)
            JSON.quote(p.name, into: &out)
            put(#","type":"#)
            JSON.quote(p.type.rawValue, into: &out)
            out += (p.isOptional || p.isRest) ? #","optional":true,"default":"#.utf8 : #","optional":false,"default":"#.utf8
            (p.defaultValue?.json ?? .null).write(into: &out)
            out += p.isSecret ? #","secret":true,"rest":"#.utf8 : #","secret":false,"rest":"#.utf8
            out += p.isRest ? #"true,"option":"#.utf8 : #"false,"option":"#.utf8
            JSON.quote("--" + p.optionName, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        put(#"],"result":"#)
        JSON.quote(signature.result.rawValue, into: &out)
        out.append(UInt8(ascii: "}"))
    }
}

extension Command {
    /// The `type` of a `pincer run --json` result: "json" for a JSON
    /// document, else the signature's result type.
    public var resultTypeName: String { returnsJSON ? "json" : signature.result.rawValue }
}
