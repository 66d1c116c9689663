// A small strict XML 1.0 reader over UTF-8 bytes, shared by the importers of
// UI dumps (uiautomator, Appium / WebDriverAgent page sources) and of GPX
// files. It builds a tree of elements with their attributes and, unless told
// not to, their character data.
//
// Accepted: elements, self-closing tags, attributes quoted with " or ', the
// five predefined entities (&lt; &gt; &amp; &quot; &apos;), decimal and
// hexadecimal character references, comments, processing instructions (the
// <?xml ...?> declaration first of all), CDATA sections (their text is kept),
// a UTF-8 byte order mark. Line ends in text are normalised to LF as XML
// requires. Refused, with the line and column (columns count characters,
// from 1): empty input, UTF-16, invalid UTF-8 or control characters,
// mismatched or unclosed tags, unknown entities or '&' without ';',
// attributes without a value or without quotes, duplicate attributes, '<' in
// an attribute value, text or a second element after the root, text before
// the root, DOCTYPE (unless `allowDoctype`), nesting deeper than
// `maximumDepth`, more than `maximumAttributes` attributes on one element.
// Namespaces are not interpreted (`a:b` is just a name).
//
// Limits, so hostile input cannot exhaust the stack or the time: the reader
// never recurses (open elements live on an explicit stack) and refuses
// elements nested deeper than `maximumDepth` (1000 unless the caller asks
// for less); an element may carry at most `maximumAttributes` (256);
// character references are parsed with checked arithmetic (`&#99999999999;`
// is refused, not wrapped). Consumers that walk the tree recursively are
// bounded by the depth they asked for.
//
// With `keepSource: true` every element also records where it sits in the
// input (byte offsets of its tags, content and attributes) and, in order,
// the text, CDATA, comment and processing-instruction pieces between its
// children, so a caller can rewrite values in place and keep every other
// byte (the catalog rewriters do).

public enum XMLReader {
    /// One element of a parsed document.
    public struct Node: Sendable {
        /// The qualified name as written (`gpxtpx:speed`).
        public var name: String
        /// In document order, references resolved, attribute-value
        /// normalisation applied (a literal tab or line break becomes a space).
        public var attributes: [(name: String, value: String)]
        public var children: [Node]
        /// The element's own character data (not its children's), CDATA
        /// included, references resolved, line ends normalised to LF. Empty
        /// when the document was parsed with `keepText: false`.
        public var text: String
        /// Byte offset of the `<` of the start tag.
        public var offset: Int
        /// Byte offset of each attribute's name, parallel to `attributes`.
        public var attributeOffsets: [Int] = []
        /// Bytes after the start tag's `>` up to the `<` of the end tag;
        /// empty, at the `/` of `/>`, for a self-closing element.
        public var contentRange: Range<Int> = 0..<0
        /// Byte offset just past the end tag (or `/>`).
        public var end: Int = 0
        public var selfClosing = false
        /// With `keepSource: true`: the element's content in document order,
        /// as raw byte ranges (references not resolved); else empty.
        public var items: [Item] = []

        public init(name: String, attributes: [(name: String, value: String)] = [], children: [Node] = [], text: String = "", offset: Int = 0) {
            self.name = name
            self.attributes = attributes
            self.children = children
            self.text = text
            self.offset = offset
        }

        public func attribute(_ name: String) -> String? {
            attributes.first { $0.name == name }?.value
        }
    }

    /// One piece of an element's content, for lossless rewrites.
    public enum Item: Sendable, Equatable {
        /// `children[index]`.
        case element(Int)
        /// Character data as written (references not resolved).
        case text(Range<Int>)
        /// A whole `<![CDATA[...]]>` section.
        case cdata(Range<Int>)
        /// A whole `<!-- ... -->`.
        case comment(Range<Int>)
        /// A whole `<? ... ?>`.
        case instruction(Range<Int>)
    }

    /// The default depth limit of `parse`.
    public static let defaultMaximumDepth = 1000
    /// The most attributes one element may carry (duplicates are found by
    /// comparing each with those before it, so this also bounds the time).
    public static let maximumAttributes = 256

    public struct Document: Sendable {
        public var root: Node
        /// Byte offsets where each line starts (for positions in messages).
        fileprivate var lineStarts: [Int]
        fileprivate var bytes: [UInt8]

        /// The 1-based line and column (in characters) of a byte offset.
        public func position(of offset: Int) -> (line: Int, column: Int) {
            XMLReader.position(of: offset, lineStarts: lineStarts, bytes: bytes)
        }

        public func line(of node: Node) -> Int { position(of: node.offset).line }
    }

    /// A refused document: where (1-based line, column in characters) and why.
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public var message: String

        public init(line: Int, column: Int, message: String) {
            self.line = line
            self.column = column
            self.message = message
        }

        /// "line L, column C: message".
        public var description: String { "line \(line), column \(column): \(message)" }
    }

    /// Parses a whole document. Elements nested more than `maximumDepth`
    /// levels are refused; with `keepText: false` character data is checked
    /// but not kept (every `text` is empty); with `keepSource: true` each
    /// node's `items` list its content as byte ranges; with `allowDoctype:
    /// true` a `<!DOCTYPE name ...>` without an internal subset (a plist's)
    /// is skipped rather than refused.
    public static func parse(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth, keepText: Bool = true,
                             keepSource: Bool = false, allowDoctype: Bool = false) throws(SyntaxError) -> Document {
        var reader = Reader(bytes: bytes, maximumDepth: max(1, maximumDepth), keepText: keepText,
                            keepSource: keepSource, allowDoctype: allowDoctype)
        let root = try reader.document()
        return Document(root: root, lineStarts: reader.lineStarts, bytes: bytes)
    }

    fileprivate static func position(of offset: Int, lineStarts: [Int], bytes: [UInt8]) -> (line: Int, column: Int) {
        // The last line start at or before the offset.
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        var column = 1
        var i = lineStarts[low]
        let end = min(offset, bytes.count)
        while i < end {
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        return (low + 1, column)
    }
}

private struct Reader {
    typealias Node = XMLReader.Node
    typealias SyntaxError = XMLReader.SyntaxError

    let bytes: [UInt8]
    let maximumDepth: Int
    let keepText: Bool
    let keepSource: Bool
    let allowDoctype: Bool
    var i = 0
    var lineStarts: [Int] = [0]

    init(bytes: [UInt8], maximumDepth: Int, keepText: Bool, keepSource: Bool, allowDoctype: Bool) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.keepText = keepText
        self.keepSource = keepSource
        self.allowDoctype = allowDoctype
    }

    // MARK: Errors

    func error(at offset: Int, _ message: String) -> SyntaxError {
        let p = XMLReader.position(of: offset, lineStarts: lineStarts, bytes: bytes)
        return SyntaxError(line: p.line, column: p.column, message: message)
    }

    func describe(_ offset: Int) -> String {
        let p = XMLReader.position(of: offset, lineStarts: lineStarts, bytes: bytes)
        return "line \(p.line), column \(p.column)"
    }

    // MARK: Bytes

    var atEnd: Bool { i >= bytes.count }

    func peek(_ ahead: Int = 0) -> UInt8? {
        i + ahead < bytes.count ? bytes[i + ahead] : nil
    }

    func startsWith(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard i + count <= bytes.count else { return false }
        return literal.withUTF8Buffer { buffer in
            for k in 0..<count where bytes[i + k] != buffer[k] { return false }
            return true
        }
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    /// Bytes >= 0x80 (parts of non-ASCII characters) are accepted in names.
    static func isNameStart(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b == 0x3A || b >= 0x80
    }

    static func isNameChar(_ b: UInt8) -> Bool {
        isNameStart(b) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2E
    }

    static func isXMLChar(_ c: UInt32) -> Bool {
        c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF)
    }

    mutating func skipSpace() {
        while let b = peek(), Reader.isSpace(b) { i += 1 }
    }

    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return digits.count < 4 ? String(repeating: "0", count: 4 - digits.count) + digits : digits
    }

    static func byteHex(_ b: UInt8) -> String {
        let digits = String(b, radix: 16, uppercase: true)
        return digits.count < 2 ? "0" + digits : digits
    }

    /// Checks the whole input is UTF-8 made of XML characters and records
    /// where lines start (CR LF, CR and LF each end a line).
    mutating func scanLines() throws(SyntaxError) {
        var k = 0
        while k < bytes.count {
            let b = bytes[k]
            if b < 0x80 {
                if b == 0x0A {
                    lineStarts.append(k + 1)
                } else if b == 0x0D {
                    if k + 1 < bytes.count, bytes[k + 1] == 0x0A { k += 1 }
                    lineStarts.append(k + 1)
                } else if b < 0x20 && b != 0x09 {
                    throw error(at: k, "control character U+\(Reader.hex(UInt32(b))) is not allowed in XML")
                }
                k += 1
                continue
            }
            let length: Int, initial: UInt32
            switch b {
            case 0xC2...0xDF: length = 2; initial = UInt32(b & 0x1F)
            case 0xE0...0xEF: length = 3; initial = UInt32(b & 0x0F)
            case 0xF0...0xF4: length = 4; initial = UInt32(b & 0x07)
            default: throw error(at: k, "invalid UTF-8 (byte 0x\(Reader.byteHex(b))); the file must be UTF-8")
            }
            guard k + length <= bytes.count else { throw error(at: k, "invalid UTF-8 (truncated character at the end)") }
            var scalar = initial
            for n in 1..<length {
                let c = bytes[k + n]
                guard c & 0xC0 == 0x80 else {
                    throw error(at: k, "invalid UTF-8 (byte 0x\(Reader.byteHex(b)) is not followed by the rest of its character); the file must be UTF-8")
                }
                scalar = scalar << 6 | UInt32(c & 0x3F)
            }
            let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
            guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else {
                throw error(at: k, "invalid UTF-8 (overlong or out-of-range character)")
            }
            guard Reader.isXMLChar(scalar) else { throw error(at: k, "character U+\(Reader.hex(scalar)) is not allowed in XML") }
            k += length
        }
    }

    // MARK: Document

    mutating func document() throws(SyntaxError) -> Node {
        if bytes.count >= 2, (bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF) {
            throw SyntaxError(line: 1, column: 1, message: "the file is UTF-16; only UTF-8 is supported")
        }
        try scanLines()
        if startsWith("\u{FEFF}") { i += 3 }
        let contentStart = i
        skipSpace()
        guard !atEnd else { throw error(at: i, "empty input (no root element)") }

        // Prolog: the declaration, comments, processing instructions.
        while true {
            skipSpace()
            guard !atEnd else { throw error(at: i, "no root element") }
            if startsWith("<?") {
                let start = i
                try instruction()
                if isDeclaration(at: start), start != contentStart {
                    throw error(at: start, "the <?xml ...?> declaration must come first in the input")
                }
            } else if startsWith("<!--") {
                try comment()
            } else if startsWith("<!DOCTYPE") {
                guard allowDoctype else { throw error(at: i, "DOCTYPE is not supported") }
                try doctype()
            } else if peek() == UInt8(ascii: "<") {
                break
            } else {
                throw error(at: i, "text before the root element")
            }
        }

        let root = try element()

        // After the root: only space, comments and processing instructions.
        while true {
            skipSpace()
            if atEnd { break }
            if startsWith("<!--") {
                try comment()
            } else if startsWith("<?") {
                let start = i
                try instruction()
                if isDeclaration(at: start) { throw error(at: start, "the <?xml ...?> declaration must come first in the input") }
            } else if peek() == UInt8(ascii: "<") {
                throw error(at: i, "a second element after the root element <\(root.name)>")
            } else {
                throw error(at: i, "text after the root element <\(root.name)>")
            }
        }
        return root
    }

    /// A `<!DOCTYPE name "public id" "system id">`, skipped. An internal
    /// subset (`[...]`) is refused: the entities it may declare would change
    /// what the rest of the document means.
    mutating func doctype() throws(SyntaxError) {
        let start = i
        i += 9
        while let b = peek() {
            if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                i += 1
                while let c = peek(), c != b { i += 1 }
                guard !atEnd else { break }
            } else if b == UInt8(ascii: "[") {
                throw error(at: i, "a DOCTYPE with an internal subset ('[...]') is not supported")
            } else if b == UInt8(ascii: ">") {
                i += 1
                return
            }
            i += 1
        }
        throw error(at: start, "unterminated DOCTYPE (no '>')")
    }

    func isDeclaration(at offset: Int) -> Bool {
        guard offset + 5 < bytes.count else { return false }
        let target = bytes[(offset + 2)..<(offset + 5)].map { $0 | 0x20 }
        return target == Array("xml".utf8) && (Reader.isSpace(bytes[offset + 5]) || bytes[offset + 5] == UInt8(ascii: "?"))
    }

    mutating func instruction() throws(SyntaxError) {
        let start = i
        i += 2
        guard let b = peek(), Reader.isNameStart(b) else { throw error(at: i, "expected a processing instruction name after '<?'") }
        while !atEnd {
            if startsWith("?>") { i += 2; return }
            i += 1
        }
        throw error(at: start, "unterminated processing instruction (no '?>')")
    }

    mutating func comment() throws(SyntaxError) {
        let start = i
        i += 4
        while !atEnd {
            if startsWith("--") {
                guard peek(2) == UInt8(ascii: ">") else { throw error(at: i, "'--' is not allowed inside a comment") }
                i += 3
                return
            }
            i += 1
        }
        throw error(at: start, "unterminated comment (no '-->')")
    }

    /// A CDATA section at `<![CDATA[`; its text is appended to `text`.
    mutating func cdata(into text: inout [UInt8]) throws(SyntaxError) {
        let start = i
        i += 9
        while !atEnd {
            if startsWith("]]>") { i += 3; return }
            appendText(bytes[i], into: &text)
        }
        throw error(at: start, "unterminated CDATA section (no ']]>')")
    }

    /// Appends the byte of character data at `i` (when text is kept) with XML
    /// line-end normalisation (CR LF and lone CR become LF) and advances past it.
    mutating func appendText(_ b: UInt8, into text: inout [UInt8]) {
        if b == 0x0D {
            if keepText { text.append(0x0A) }
            i += peek(1) == 0x0A ? 2 : 1
        } else {
            if keepText { text.append(b) }
            i += 1
        }
    }

    mutating func name(what: String) throws(SyntaxError) -> String {
        let start = i
        guard let b = peek(), Reader.isNameStart(b) else {
            if let b = peek() {
                throw error(at: i, "expected \(what), found \(b < 0x80 ? "'\(Character(Unicode.Scalar(b)))'" : "a non-name character")")
            }
            throw error(at: i, "expected \(what), found the end of the input")
        }
        i += 1
        while let b = peek(), Reader.isNameChar(b) { i += 1 }
        return String(decoding: bytes[start..<i], as: UTF8.self)
    }

    /// An entity or character reference at `&`; appends the character.
    mutating func reference(into out: inout [UInt8]) throws(SyntaxError) {
        let start = i
        i += 1
        var end = i
        while end < bytes.count, end - i < 12, bytes[end] != UInt8(ascii: ";"),
              Reader.isNameChar(bytes[end]) || bytes[end] == UInt8(ascii: "#") { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: ";"), end > i else {
            throw error(at: start, "'&' must start a reference such as &amp; &lt; &gt; &quot; &apos; or &#...; (write '&amp;' for '&')")
        }
        let body = String(decoding: bytes[i..<end], as: UTF8.self)
        i = end + 1
        switch body {
        case "lt": out.append(UInt8(ascii: "<")); return
        case "gt": out.append(UInt8(ascii: ">")); return
        case "amp": out.append(UInt8(ascii: "&")); return
        case "quot": out.append(UInt8(ascii: "\"")); return
        case "apos": out.append(UInt8(ascii: "'")); return
        default: break
        }
        if body.hasPrefix("#") {
            let digits = body.dropFirst()
            let value: UInt32?
            if digits.hasPrefix("x") {
                let hexDigits = digits.dropFirst()
                value = !hexDigits.isEmpty && hexDigits.allSatisfy(\.isHexDigit) ? UInt32(hexDigits, radix: 16) : nil
            } else {
                value = !digits.isEmpty && digits.allSatisfy({ $0.isASCII && $0.isNumber }) ? UInt32(digits, radix: 10) : nil
            }
            guard let value, Reader.isXMLChar(value), let scalar = Unicode.Scalar(value) else {
                throw error(at: start, "&\(body); is not a valid character reference")
            }
            out.append(contentsOf: String(Character(scalar)).utf8)
            return
        }
        throw error(at: start, "unknown entity &\(body); (only &amp; &lt; &gt; &quot; &apos; and character references are defined)")
    }

    /// A start tag at `<`. Returns the node (without children or text) and
    /// whether it closed itself.
    mutating func startTag() throws(SyntaxError) -> (Node, selfClosing: Bool) {
        let start = i
        i += 1
        let tagName = try name(what: "an element name after '<'")
        var attributes: [(name: String, value: String)] = []
        var offsets: [Int] = []
        func node(closedAt end: Int?) -> Node {
            var n = Node(name: tagName, attributes: attributes, offset: start)
            n.attributeOffsets = offsets
            if let end {
                // Self-closing: the content is empty at the '/'.
                n.contentRange = (end - 2)..<(end - 2)
                n.end = end
                n.selfClosing = true
            } else {
                n.contentRange = i..<i
            }
            return n
        }
        while true {
            let hadSpace = peek().map(Reader.isSpace) ?? false
            skipSpace()
            guard let b = peek() else { throw error(at: start, "unterminated start tag <\(tagName) (no '>')") }
            if b == UInt8(ascii: ">") {
                i += 1
                return (node(closedAt: nil), false)
            }
            if b == UInt8(ascii: "/") {
                guard peek(1) == UInt8(ascii: ">") else { throw error(at: i, "expected '/>' or '>' to end the start tag <\(tagName)>") }
                i += 2
                return (node(closedAt: i), true)
            }
            guard hadSpace else { throw error(at: i, "expected a space before the next attribute in <\(tagName)>") }
            let attributeStart = i
            let attributeName = try name(what: "an attribute name or '>' in <\(tagName)>")
            skipSpace()
            guard peek() == UInt8(ascii: "=") else {
                throw error(at: attributeStart, "attribute \(attributeName) of <\(tagName)> has no value (expected \(attributeName)=\"...\")")
            }
            i += 1
            skipSpace()
            guard let quote = peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw error(at: i, "the value of attribute \(attributeName) of <\(tagName)> is not in quotes")
            }
            i += 1
            var value: [UInt8] = []
            while true {
                guard let c = peek() else { throw error(at: attributeStart, "unterminated value of attribute \(attributeName) (no closing quote)") }
                if c == quote { i += 1; break }
                switch c {
                case UInt8(ascii: "<"):
                    throw error(at: i, "'<' is not allowed in the value of attribute \(attributeName) (write '&lt;')")
                case UInt8(ascii: "&"):
                    try reference(into: &value)
                case 0x0D:
                    value.append(0x20)
                    i += 1
                    if peek() == 0x0A { i += 1 }
                case 0x09, 0x0A:
                    value.append(0x20)
                    i += 1
                default:
                    value.append(c)
                    i += 1
                }
            }
            if attributes.contains(where: { $0.name == attributeName }) {
                throw error(at: attributeStart, "attribute \(attributeName) appears twice in <\(tagName)>")
            }
            guard attributes.count < XMLReader.maximumAttributes else {
                throw error(at: attributeStart, "<\(tagName)> has more than \(XMLReader.maximumAttributes) attributes (the limit)")
            }
            attributes.append((attributeName, String(decoding: value, as: UTF8.self)))
            if keepSource { offsets.append(attributeStart) }
        }
    }

    /// The root element and everything in it, without recursion.
    mutating func element() throws(SyntaxError) -> Node {
        // Open elements, innermost last; `textStart` is where the current
        // run of character data began (for `keepSource`).
        var stack: [(node: Node, text: [UInt8])] = []
        var textStart: Int?

        func flushText(_ stack: inout [(node: Node, text: [UInt8])], _ textStart: inout Int?, upTo end: Int) {
            if let start = textStart, keepSource {
                stack[stack.count - 1].node.items.append(.text(start..<end))
            }
            textStart = nil
        }

        let (first, firstClosed) = try startTag()
        if firstClosed { return first }
        stack.append((first, []))

        while true {
            guard let b = peek() else {
                let open = stack[stack.count - 1].node
                throw error(at: open.offset, "<\(open.name)> is never closed (the input ends at \(describe(bytes.count)))")
            }
            if b == UInt8(ascii: "<") {
                flushText(&stack, &textStart, upTo: i)
                let itemStart = i
                if startsWith("</") {
                    let endStart = i
                    i += 2
                    let endName = try name(what: "an element name after '</'")
                    skipSpace()
                    guard peek() == UInt8(ascii: ">") else { throw error(at: i, "expected '>' to end the end tag </\(endName)") }
                    i += 1
                    var (open, text) = stack.removeLast()
                    guard open.name == endName else {
                        throw error(at: endStart, "end tag </\(endName)> does not match <\(open.name)> opened at \(describe(open.offset))")
                    }
                    open.text = String(decoding: text, as: UTF8.self)
                    open.contentRange = open.contentRange.lowerBound..<endStart
                    open.end = i
                    if stack.isEmpty { return open }
                    append(open, to: &stack[stack.count - 1].node)
                } else if startsWith("<!--") {
                    try comment()
                    if keepSource { stack[stack.count - 1].node.items.append(.comment(itemStart..<i)) }
                } else if startsWith("<![CDATA[") {
                    try cdata(into: &stack[stack.count - 1].text)
                    if keepSource { stack[stack.count - 1].node.items.append(.cdata(itemStart..<i)) }
                } else if startsWith("<?") {
                    try instruction()
                    if isDeclaration(at: itemStart) { throw error(at: itemStart, "the <?xml ...?> declaration must come first in the input") }
                    if keepSource { stack[stack.count - 1].node.items.append(.instruction(itemStart..<i)) }
                } else if startsWith("<!") {
                    throw error(at: i, "unexpected markup '<!' (only comments and CDATA are allowed in content)")
                } else {
                    guard stack.count < maximumDepth else {
                        throw error(at: i, "elements nested more than \(maximumDepth) levels (the limit)")
                    }
                    let (node, selfClosing) = try startTag()
                    if selfClosing {
                        append(node, to: &stack[stack.count - 1].node)
                    } else {
                        stack.append((node, []))
                    }
                }
            } else {
                if textStart == nil { textStart = i }
                if b == UInt8(ascii: "&") {
                    if keepText {
                        try reference(into: &stack[stack.count - 1].text)
                    } else {
                        var ignored: [UInt8] = []
                        try reference(into: &ignored)
                    }
                } else if b == UInt8(ascii: ">"), i >= 2, bytes[i - 1] == UInt8(ascii: "]"), bytes[i - 2] == UInt8(ascii: "]") {
                    throw error(at: i - 2, "']]>' is not allowed in text")
                } else {
                    appendText(b, into: &stack[stack.count - 1].text)
                }
            }
        }
    }

    func append(_ child: Node, to parent: inout Node) {
        if keepSource { parent.items.append(.element(parent.children.count)) }
        parent.children.append(child)
    }
}
