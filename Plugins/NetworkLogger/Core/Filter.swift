// Filter expressions for the network log: mitmproxy's operators, plus Chrome
// DevTools' `key:value` filters as sugar.
//
// ## Filter expressions
//
// An expression selects entries. The empty expression (or only whitespace)
// selects every entry.
//
// Operators, tightest first:
//
// | Syntax      | Meaning                                                      |
// |-------------|--------------------------------------------------------------|
// | `( e )`     | grouping                                                     |
// | `!e`        | not                                                          |
// | `a & b`     | and; also implied between adjacent terms (`a b` is `a & b`)  |
// | `a \| b`    | or                                                           |
//
// Limits (filters come from JSON-RPC clients too): '(' and '!' nest at
// most 100 deep, and an expression has at most 1,000 terms.
//
// So `a | b & c` is `a | (b & c)`, `!a & b` is `(!a) & b`, and
// `~m POST & ~c 500 | !~d example.com` is `(~m POST & ~c 500) | !(~d example.com)`.
//
// mitmproxy terms (the name is lowercase, exactly as written):
//
// | Term         | Selects entries whose…                                          |
// |--------------|-----------------------------------------------------------------|
// | `~m REGEX`   | method matches                                                  |
// | `~u REGEX`   | URL matches                                                     |
// | `~d REGEX`   | host (domain, without port) matches                             |
// | `~c CODE`    | response status is exactly CODE (an integer)                    |
// | `~h REGEX`   | a request or response header, as `Name: value`, matches         |
// | `~hq REGEX`  | a request header matches                                        |
// | `~hs REGEX`  | a response header matches                                       |
// | `~b REGEX`   | request or response body text matches                           |
// | `~bq REGEX`  | request body text matches                                       |
// | `~bs REGEX`  | response body text matches                                      |
// | `~t REGEX`   | request or response content type matches                        |
// | `~q`         | request has no response yet (pending)                           |
// | `~e`         | request failed with a transport error (no response)             |
// | `~s`         | request has a response (any status)                             |
// | `~a`         | response is an asset: CSS, JavaScript, image or font            |
// | `~all`       | always                                                          |
// | `word`       | URL contains `word` (plain text, not a regex)                   |
//
// Regexes use Swift's `Regex` syntax and search anywhere in the text
// (anchor with `^`/`$`). Bodies are searched only when the log stored their
// bytes (decoded as UTF-8, invalid bytes replaced); withheld, skipped or
// dropped bodies never match. `~t` looks at the Content-Type headers (or the
// recorded media type when there is no header). `~a` uses the response's
// media type, or the URL's file extension when the media type is unknown.
//
// DevTools terms (`key:value`, no space after the colon); `-key:value`
// negates one:
//
// | Term                        | Selects entries whose…                                   |
// |-----------------------------|----------------------------------------------------------|
// | `method:POST`               | method is POST                                           |
// | `status-code:404`           | status is 404; `x` stands for any digit: `5xx`, `40x`    |
// | `domain:api.example.com`    | host is api.example.com; `*` matches any run of characters, so `*.example.com` matches every subdomain but not example.com itself (use `*example.com` for both) |
// | `larger-than:10k`           | response body is larger than 10 000 bytes                |
// | `mime-type:application/json`| response media type is application/json (`*` as in domain, e.g. `image/*`) |
// | `scheme:https`              | URL scheme is https                                      |
// | `has-response-header:Set-Cookie` | the response has a Set-Cookie header                |
// | `path:/v1/users/*`          | URL path (without the query) is /v1/users/…; `*` as in domain |
// | `graphql:GetUser`           | the request is a GraphQL operation named GetUser (as net.stats names it; `*` as in domain) |
// | `is:running`                | request has no response yet (pending)                    |
//
// Arguments and words: a regex, code or value may be quoted with `"..."` or
// `'...'`; inside quotes `\"`, `\'` and `\\` stand for the character itself
// and any other backslash is kept, so `~u "\d+"` is the regex `\d+`.
// Unquoted, it runs to the next whitespace or parenthesis (so a regex with a
// space or parenthesis must be quoted). Operators are only recognised at the
// start of a term: `a|b` is one word, write `a | b`. A quoted string on its
// own is a word (`"localhost:8080"`). A word that looks like `name:value`
// with an unknown name is an error, unless the colon is followed by a digit
// or `/` (`localhost:8080`, `https://example.com` are plain words).
//
// Case: regexes and plain words ignore case (like mitmproxy). DevTools keys
// ignore case, as do the values of `method`, `domain`, `scheme`,
// `mime-type`, `has-response-header` and `is`. Operator names (`~m`) are
// lowercase.
//
// Sizes (`larger-than`): DevTools' decimal units. A number (fractions
// allowed) of bytes, optionally followed by `k` (×1000) or `M` (×1000 000),
// either case, optionally followed by `b`/`B`: `500`, `10k`, `10kb`, `1.5M`,
// `2MB`. The response body's original size is compared, stored or not.
//
// Errors name the 1-based column (in characters) and what was expected and
// found, e.g. `column 8: expected a regex after ~d, found end of input`.

/// A filter expression that could not be parsed.
public struct FilterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based column, in characters, where the problem is.
    public let column: Int
    /// What was expected and what was found.
    public let message: String

    public init(column: Int, message: String) {
        self.column = column
        self.message = message
    }

    public var description: String { "column \(column): \(message)" }
}

/// A parsed filter expression (see the grammar at the top of Filter.swift).
public struct NetworkFilter: Sendable {
    /// The text the filter was parsed from.
    public let expression: String
    private let root: Node?

    /// Parses `expression`; an empty expression matches every entry.
    public init(_ expression: String) throws(FilterError) {
        self.expression = expression
        var parser = Parser(expression)
        root = try parser.parseExpression()
    }

    /// Whether `entry` is selected by the filter.
    public func matches(_ entry: NetworkEntry) -> Bool {
        root?.matches(entry) ?? true
    }

    /// True when a term looks at the response (status, response headers or
    /// body, content type, state, size): such a filter can only be decided
    /// once the response is there. Interception rules that act before the
    /// request is sent refuse it.
    public var needsResponse: Bool { root?.needsResponse ?? false }

    /// The one host every matching entry has, when the filter requires an
    /// exact `domain:` at its top level (`domain:a.example.com & ...`); nil
    /// otherwise. The rules engine indexes rules by it.
    public var requiredHost: String? { root?.requiredHost }

    /// The first path segment ("/v1") every matching entry's path starts
    /// with, when the filter requires a `path:` glob at its top level whose
    /// first segment has no wildcard; nil otherwise. The rules engine
    /// indexes rules without a host by it.
    public var requiredFirstSegment: String? { root?.requiredFirstSegment }

    /// "/v1" of "/v1/users/3" ("" for "/" or an empty path).
    public static func firstSegment(_ path: String) -> String {
        guard path.hasPrefix("/") else { return "" }
        let rest = path.utf8.dropFirst()
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.startIndex..<slash])
    }
}

extension NetworkFilter.Node {
    var needsResponse: Bool {
        switch self {
        case .not(let a): a.needsResponse
        case .and(let a, let b), .or(let a, let b): a.needsResponse || b.needsResponse
        case .test(let t): t.needsResponse
        }
    }

    var requiredHost: String? {
        switch self {
        case .and(let a, let b): a.requiredHost ?? b.requiredHost
        case .test(.domainGlob(let glob)) where !glob.contains("*"): glob
        default: nil
        }
    }

    var requiredFirstSegment: String? {
        switch self {
        case .and(let a, let b):
            return a.requiredFirstSegment ?? b.requiredFirstSegment
        case .test(.pathGlob(let glob)):
            // The segment must end before any wildcard: "/v1/*" and "/v1" qualify, "/v*" does not.
            let literal = glob.prefix { $0 != "*" && $0 != "?" && $0 != "[" }
            let segment = NetworkFilter.firstSegment(String(literal))
            guard segment.count > 1, literal.count > segment.count || literal.count == glob.count else { return nil }
            return segment
        default:
            return nil
        }
    }
}

extension NetworkFilter.Test {
    var needsResponse: Bool {
        switch self {
        case .status, .statusLike, .contentType, .pending, .failed, .hasResponse, .asset, .largerThan, .mimeType, .hasResponseHeader: true
        case .header(_, let request, let response), .body(_, let request, let response): response && !request
        default: false
        }
    }
}

// MARK: - Syntax tree

extension NetworkFilter {
    /// A compiled, case-insensitive regex. `Regex` is not declared Sendable,
    /// but a compiled regex is immutable (its lazily lowered program is
    /// published atomically by the standard library), so sharing it is safe.
    struct Pattern: @unchecked Sendable {
        let source: String
        let regex: Regex<AnyRegexOutput>

        func matches(_ text: String) -> Bool { text.contains(regex) }
    }

    indirect enum Node: Sendable {
        case not(Node)
        case and(Node, Node)
        case or(Node, Node)
        case test(Test)

        func matches(_ entry: NetworkEntry) -> Bool {
            switch self {
            case .not(let node): !node.matches(entry)
            case .and(let a, let b): a.matches(entry) && b.matches(entry)
            case .or(let a, let b): a.matches(entry) || b.matches(entry)
            case .test(let test): test.matches(entry)
            }
        }
    }

    enum Test: Sendable {
        case all
        case method(Pattern)
        case url(Pattern)
        case domain(Pattern)
        case status(Int)
        case header(Pattern, request: Bool, response: Bool)
        case body(Pattern, request: Bool, response: Bool)
        case contentType(Pattern)
        case pending
        case failed
        case hasResponse
        case asset
        /// Lowercased needle.
        case urlContains(String)
        /// Uppercased method.
        case methodIs(String)
        /// Three characters, digits or "x".
        case statusLike([Character])
        /// Lowercased glob.
        case domainGlob(String)
        case largerThan(Double)
        /// Lowercased glob.
        case mimeType(String)
        /// Lowercased scheme.
        case scheme(String)
        /// Lowercased header name.
        case hasResponseHeader(String)
        /// `path:` glob over the URL's path.
        case pathGlob(String)
        /// `graphql:` glob over the request's GraphQL operation name(s).
        case graphQL(String)

        func matches(_ e: NetworkEntry) -> Bool {
            switch self {
            case .all: return true
            case .method(let p): return p.matches(e.method)
            case .url(let p): return p.matches(e.url)
            case .domain(let p): return p.matches(NetworkFilter.host(e))
            case .status(let code): return e.status == code
            case .header(let p, let request, let response):
                return (request && e.requestHeaders.contains { p.matches($0.name + ": " + $0.value) })
                    || (response && e.responseHeaders.contains { p.matches($0.name + ": " + $0.value) })
            case .body(let p, let request, let response):
                return (request && NetworkFilter.bodyText(e.requestBody).map(p.matches) == true)
                    || (response && NetworkFilter.bodyText(e.responseBody).map(p.matches) == true)
            case .contentType(let p):
                return [NetworkFilter.contentType(e.requestHeaders, e.requestBody),
                        NetworkFilter.contentType(e.responseHeaders, e.responseBody)]
                    .contains { !$0.isEmpty && p.matches($0) }
            case .pending: return e.state == .pending
            case .failed: return e.state == .failed
            case .hasResponse: return e.state == .complete
            case .asset: return NetworkFilter.isAsset(e)
            case .urlContains(let needle): return e.url.lowercased().contains(needle)
            case .methodIs(let method): return e.method.uppercased() == method
            case .statusLike(let pattern):
                guard let status = e.status else { return false }
                let digits = Array(String(status))
                return digits.count == 3 && zip(digits, pattern).allSatisfy { $1 == "x" || $0 == $1 }
            case .domainGlob(let glob): return NetworkFilter.glob(glob, matches: NetworkFilter.host(e))
            case .largerThan(let bytes): return Double(e.responseBody.size) > bytes
            case .mimeType(let glob):
                var mime = e.responseBody.mimeType
                if mime.isEmpty { mime = mediaType(e.responseHeaders.first("Content-Type")) }
                return !mime.isEmpty && NetworkFilter.glob(glob, matches: mime.lowercased())
            case .scheme(let scheme): return URLParts(e.url)?.scheme == scheme
            case .hasResponseHeader(let name): return e.responseHeaders.contains { $0.name.lowercased() == name }
            case .pathGlob(let glob): return NetworkFilter.glob(glob, matches: URLParts(e.url)?.path ?? "")
            case .graphQL(let glob):
                guard let parts = URLParts(e.url), let names = TrafficStats.graphQLOperation(e, parts: parts) else { return false }
                return names.split(separator: ",").contains { NetworkFilter.glob(glob, matches: $0.filter { $0 != " " }.lowercased()) }
            }
        }
    }

    static func host(_ e: NetworkEntry) -> String { URLParts(e.url)?.host ?? "" }

    static func bodyText(_ body: Body) -> String? {
        body.bytes.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The Content-Type header's value, else the recorded media type.
    static func contentType(_ headers: [Header], _ body: Body) -> String {
        headers.first("Content-Type") ?? body.mimeType
    }

    static let assetExtensions: Set<String> = [
        "css", "js", "mjs", "png", "jpg", "jpeg", "gif", "webp", "avif", "svg", "ico", "bmp",
        "woff", "woff2", "ttf", "otf", "eot",
    ]

    /// CSS, JavaScript, images and fonts, by response media type, else by URL extension.
    static func isAsset(_ e: NetworkEntry) -> Bool {
        var mime = e.responseBody.mimeType
        if mime.isEmpty { mime = mediaType(e.responseHeaders.first("Content-Type")) }
        mime = mime.lowercased()
        if !mime.isEmpty {
            return mime == "text/css" || mime.hasSuffix("javascript") || mime.hasSuffix("ecmascript")
                || mime.hasPrefix("image/") || mime.hasPrefix("font/") || mime.contains("font")
        }
        let path = URLParts(e.url)?.path ?? ""
        guard let lastSegment = path.split(separator: "/").last, let dot = lastSegment.lastIndex(of: ".") else { return false }
        return assetExtensions.contains(lastSegment[lastSegment.index(after: dot)...].lowercased())
    }

    /// `*` matches any run of characters (possibly empty); everything else is literal.
    static func glob(_ pattern: String, matches text: String) -> Bool {
        let p = Array(pattern), t = Array(text)
        var pi = 0, ti = 0
        var star: Int?, starText = 0
        while ti < t.count {
            if pi < p.count, p[pi] != "*", p[pi] == t[ti] {
                pi += 1; ti += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi; starText = ti; pi += 1
            } else if let s = star {
                pi = s + 1; starText += 1; ti = starText
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}

// MARK: - Parser

extension NetworkFilter {
    /// Recursive descent over characters:
    ///
    ///     expression := or
    ///     or         := and ('|' and)*
    ///     and        := unary (['&'] unary)*
    ///     unary      := '!' unary | primary
    ///     primary    := '(' or ')' | '~' name [argument] | ['-'] key ':' value | word
    struct Parser {
        let chars: [Character]
        var pos = 0
        /// Open parentheses around `pos`.
        var depth = 0
        /// Parentheses and '!' around `pos`, and terms read so far: the
        /// parser, matching and freeing the tree all recurse, so a hostile
        /// filter (a JSON-RPC client's, say) is refused past these limits
        /// instead of running the stack out.
        var nesting = 0
        var terms = 0
        static let maximumNesting = 100
        static let maximumTerms = 1000

        static let keys = ["method", "status-code", "domain", "larger-than", "mime-type", "scheme",
                           "has-response-header", "is", "path", "graphql"]

        init(_ text: String) { chars = Array(text) }

        // MARK: Helpers

        func error(_ at: Int, _ message: String) -> FilterError {
            FilterError(column: at + 1, message: message)
        }

        var atEnd: Bool { pos >= chars.count }
        var peek: Character? { pos < chars.count ? chars[pos] : nil }

        /// What is at `at`, for messages: "end of input" or 'c'.
        func found(_ at: Int) -> String {
            guard at < chars.count else { return "end of input" }
            let c = chars[at]
            if c.isWhitespace { return "whitespace" }
            return "'\(c)'"
        }

        mutating func skipSpace() {
            while let c = peek, c.isWhitespace { pos += 1 }
        }

        static func endsWord(_ c: Character) -> Bool { c.isWhitespace || c == "(" || c == ")" }

        // MARK: Grammar

        mutating func parseExpression() throws(FilterError) -> Node? {
            skipSpace()
            if atEnd { return nil }
            let node = try parseOr(after: nil)
            skipSpace()
            if !atEnd {
                // parseOr only stops early at a ')'.
                throw error(pos, "unbalanced ')': no '(' to close")
            }
            return node
        }

        mutating func parseOr(after context: String?) throws(FilterError) -> Node {
            var left = try parseAnd(after: context)
            while true {
                skipSpace()
                guard peek == "|" else { return left }
                pos += 1
                left = .or(left, try parseAnd(after: "'|'"))
            }
        }

        mutating func parseAnd(after context: String?) throws(FilterError) -> Node {
            var left = try parseUnary(after: context)
            while true {
                skipSpace()
                guard let c = peek, c != "|", c != ")" else { return left }
                if c == "&" {
                    pos += 1
                    left = .and(left, try parseUnary(after: "'&'"))
                } else {
                    left = .and(left, try parseUnary(after: nil))
                }
            }
        }

        mutating func parseUnary(after context: String?) throws(FilterError) -> Node {
            skipSpace()
            if peek == "!" {
                try enter()
                pos += 1
                defer { nesting -= 1 }
                return .not(try parseUnary(after: "'!'"))
            }
            return try parsePrimary(after: context)
        }

        mutating func enter() throws(FilterError) {
            nesting += 1
            guard nesting <= Parser.maximumNesting else {
                throw error(pos, "'(' and '!' nested more than \(Parser.maximumNesting) deep (the limit)")
            }
        }

        mutating func parsePrimary(after context: String?) throws(FilterError) -> Node {
            skipSpace()
            terms += 1
            guard terms <= Parser.maximumTerms else { throw error(pos, "more than \(Parser.maximumTerms) terms (the limit)") }
            if peek == ")", depth == 0 { throw error(pos, "unbalanced ')': no '(' to close") }
            guard let c = peek, c != ")", c != "&", c != "|" else {
                throw error(pos, "expected a filter\(context.map { " after " + $0 } ?? ""), found \(found(pos))")
            }
            switch c {
            case "(":
                let open = pos
                try enter()
                pos += 1
                depth += 1
                let inner = try parseOr(after: "'('")
                depth -= 1
                nesting -= 1
                skipSpace()
                guard peek == ")" else {
                    throw error(pos, "expected ')' to close '(' at column \(open + 1), found \(found(pos))")
                }
                pos += 1
                return inner
            case "~":
                return try parseOperator()
            case "\"", "'":
                let word = try readQuoted()
                return .test(.urlContains(word.lowercased()))
            default:
                if let node = try parseKey() { return node }
                var word = ""
                while let c = peek, !Parser.endsWord(c) { word.append(c); pos += 1 }
                return .test(.urlContains(word.lowercased()))
            }
        }

        // MARK: mitmproxy operators

        mutating func parseOperator() throws(FilterError) -> Node {
            let start = pos
            pos += 1
            var name = ""
            while let c = peek, c.isASCII, c.isLetter { name.append(c); pos += 1 }
            let op = "~" + name
            if name.isEmpty {
                throw error(pos, "expected an operator name after '~', found \(found(pos))")
            }
            func flag(_ test: Test) throws(FilterError) -> Node {
                if let c = peek, !c.isWhitespace, !"()&|!".contains(c) {
                    throw error(start, "unknown operator '\(op)\(c)'")
                }
                return .test(test)
            }
            switch name {
            case "all": return try flag(.all)
            case "q": return try flag(.pending)
            case "e": return try flag(.failed)
            case "s": return try flag(.hasResponse)
            case "a": return try flag(.asset)
            case "c":
                let (text, at) = try readArgument(after: op, expecting: "a status code")
                guard let code = Int(text) else {
                    throw error(at, "expected a status code after ~c, found '\(text)'")
                }
                return .test(.status(code))
            case "m": return .test(.method(try regexArgument(after: op)))
            case "u": return .test(.url(try regexArgument(after: op)))
            case "d": return .test(.domain(try regexArgument(after: op)))
            case "h": return .test(.header(try regexArgument(after: op), request: true, response: true))
            case "hq": return .test(.header(try regexArgument(after: op), request: true, response: false))
            case "hs": return .test(.header(try regexArgument(after: op), request: false, response: true))
            case "b": return .test(.body(try regexArgument(after: op), request: true, response: true))
            case "bq": return .test(.body(try regexArgument(after: op), request: true, response: false))
            case "bs": return .test(.body(try regexArgument(after: op), request: false, response: true))
            case "t": return .test(.contentType(try regexArgument(after: op)))
            default:
                throw error(start, "unknown operator '\(op)' (expected one of ~m ~u ~d ~c ~h ~hq ~hs ~b ~bq ~bs ~t ~q ~e ~s ~a ~all)")
            }
        }

        mutating func regexArgument(after op: String) throws(FilterError) -> Pattern {
            let (text, at) = try readArgument(after: op, expecting: "a regex")
            do {
                return Pattern(source: text, regex: try Regex(text).ignoresCase())
            } catch {
                throw self.error(at, "invalid regex '\(text)' after \(op): \(error)")
            }
        }

        /// The argument of an operator, after optional whitespace, and its position.
        mutating func readArgument(after op: String, expecting what: String) throws(FilterError) -> (String, Int) {
            skipSpace()
            let at = pos
            guard let c = peek, c != "(", c != ")", c != "&", c != "|" else {
                throw error(pos, "expected \(what) after \(op), found \(found(pos))")
            }
            if c == "\"" || c == "'" { return (try readQuoted(), at) }
            var text = ""
            while let c = peek, !Parser.endsWord(c) { text.append(c); pos += 1 }
            return (text, at)
        }

        /// A "..." or '...' string at `pos`; \", \' and \\ are unescaped, other backslashes kept.
        mutating func readQuoted() throws(FilterError) -> String {
            let open = pos
            let quote = chars[pos]
            pos += 1
            var text = ""
            while true {
                guard let c = peek else {
                    throw error(open, "unterminated string: no closing \(quote) before end of input")
                }
                pos += 1
                if c == quote { return text }
                if c == "\\", let next = peek {
                    pos += 1
                    if next == "\"" || next == "'" || next == "\\" {
                        text.append(next)
                    } else {
                        text.append(c)
                        text.append(next)
                    }
                } else {
                    text.append(c)
                }
            }
        }

        // MARK: DevTools keys

        /// `[-]key:value` at `pos`, or nil (position unchanged) when the word is not one.
        mutating func parseKey() throws(FilterError) -> Node? {
            let start = pos
            var i = pos
            let negated = chars[i] == "-"
            if negated { i += 1 }
            guard i < chars.count, chars[i].isASCII, chars[i].isLetter else { return nil }
            var key = ""
            while i < chars.count, chars[i].isASCII, chars[i].isLetter || chars[i].isNumber || chars[i] == "-" {
                key.append(chars[i]); i += 1
            }
            guard i < chars.count, chars[i] == ":" else { return nil }
            let valueAt = i + 1
            let lowerKey = key.lowercased()
            guard Parser.keys.contains(lowerKey) else {
                if !negated, valueAt < chars.count, chars[valueAt].isNumber || chars[valueAt] == "/" { return nil }
                throw error(start + (negated ? 1 : 0),
                            "unknown key '\(key):' (expected one of \(Parser.keys.map { $0 + ":" }.joined(separator: " ")))")
            }
            pos = valueAt
            let value: String
            if let c = peek, c == "\"" || c == "'" {
                value = try readQuoted()
            } else {
                var text = ""
                while let c = peek, !Parser.endsWord(c) { text.append(c); pos += 1 }
                value = text
            }
            guard !value.isEmpty else {
                throw error(valueAt, "expected a value after \(key):, found \(found(valueAt))")
            }
            let test: Test
            switch lowerKey {
            case "method":
                test = .methodIs(value.uppercased())
            case "status-code":
                let pattern = Array(value.lowercased())
                guard pattern.count == 3, pattern.allSatisfy({ $0 == "x" || ("0"..."9").contains($0) }) else {
                    throw error(valueAt, "bad status code '\(value)' after \(key): (expected three digits, x for any digit, e.g. 404 or 5xx)")
                }
                test = .statusLike(pattern)
            case "domain":
                test = .domainGlob(value.lowercased())
            case "larger-than":
                guard let bytes = Parser.size(value) else {
                    throw error(valueAt, "bad size '\(value)' after \(key): (expected bytes with an optional k or M, e.g. 500, 10k, 1.5M)")
                }
                test = .largerThan(bytes)
            case "mime-type":
                test = .mimeType(value.lowercased())
            case "scheme":
                test = .scheme(value.lowercased())
            case "has-response-header":
                test = .hasResponseHeader(value.lowercased())
            case "path":
                test = .pathGlob(value)
            case "graphql":
                test = .graphQL(value.lowercased())
            default: // "is"
                guard value.lowercased() == "running" else {
                    throw error(valueAt, "unknown value '\(value)' after \(key): (expected running)")
                }
                test = .pending
            }
            return negated ? .not(.test(test)) : .test(test)
        }

        /// Bytes for "500", "10k", "10kb", "1.5M", "2MB" (k = 1000, M = 1000 000).
        static func size(_ text: String) -> Double? {
            var digits = Substring(text)
            var multiplier = 1.0
            if let last = digits.last, last == "b" || last == "B" { digits = digits.dropLast() }
            if let last = digits.last {
                switch last {
                case "k", "K": multiplier = 1000; digits = digits.dropLast()
                case "m", "M": multiplier = 1_000_000; digits = digits.dropLast()
                default: break
                }
            }
            // digits [ "." digits ]
            let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count),
                  parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }),
                  let number = Double(digits) else { return nil }
            return number * multiplier
        }
    }
}

// MARK: - SQL for the persisted log

/// A value bound to a `?` of `NetworkFilter.SQLCondition`.
public enum SQLArgument: Sendable, Equatable {
    case text(String)
    case int(Int64)
    case double(Double)
}

extension NetworkFilter {
    /// A WHERE condition over the persisted log's indexed columns (LogDatabase's
    /// schema: method_key, host, status, state, response_size) that every
    /// entry the filter matches satisfies. `exact`: it selects exactly what
    /// the filter matches, so rows need no per-row check; otherwise the
    /// rows it selects are a superset, checked with `matches`.
    public struct SQLCondition: Sendable, Equatable {
        public var sql: String
        public var arguments: [SQLArgument]
        public var exact: Bool
    }

    /// The condition for the terms that map to columns; nil when none does
    /// (every row is read and checked). Terms that do not map drop out of an
    /// `&` (the rest still narrows); an `|` or `!` maps only when its
    /// operands all map exactly enough (an `|` of a superset is a superset;
    /// a `!` needs its operand exact).
    public var sqlCondition: SQLCondition? {
        guard let root else { return SQLCondition(sql: "1", arguments: [], exact: true) }
        return root.sql
    }
}

extension NetworkFilter.Node {
    var sql: NetworkFilter.SQLCondition? {
        typealias C = NetworkFilter.SQLCondition
        switch self {
        case .test(let test):
            return test.sql
        case .and(let a, let b):
            switch (a.sql, b.sql) {
            case let (x?, y?): return C(sql: "(\(x.sql) AND \(y.sql))", arguments: x.arguments + y.arguments, exact: x.exact && y.exact)
            case let (x?, nil), let (nil, x?): return C(sql: x.sql, arguments: x.arguments, exact: false)
            case (nil, nil): return nil
            }
        case .or(let a, let b):
            guard let x = a.sql, let y = b.sql else { return nil }
            return C(sql: "(\(x.sql) OR \(y.sql))", arguments: x.arguments + y.arguments, exact: x.exact && y.exact)
        case .not(let a):
            // NULL (no status) counts as false inside, so NOT of it is true, as in `matches`.
            guard let x = a.sql, x.exact else { return nil }
            return C(sql: "NOT coalesce(\(x.sql), 0)", arguments: x.arguments, exact: true)
        }
    }
}

extension NetworkFilter.Test {
    var sql: NetworkFilter.SQLCondition? {
        typealias C = NetworkFilter.SQLCondition
        // Columns compare bytes; Swift compares canonically equivalent text
        // as equal. The two agree on ASCII, so only ASCII values map exactly.
        func ascii(_ s: String) -> Bool { s.utf8.allSatisfy { $0 < 0x80 } }
        switch self {
        case .all:
            return C(sql: "1", arguments: [], exact: true)
        case .methodIs(let method) where ascii(method):
            return C(sql: "method_key = ?", arguments: [.text(method)], exact: true)
        case .status(let code):
            return C(sql: "status = ?", arguments: [.int(Int64(code))], exact: true)
        case .statusLike(let pattern) where pattern.first != "x":
            // (A leading x also matches "-12": no range.) 3 digits (x: any): the range from x=0 to x=9 holds every match;
            // it is the set itself when the x's are all at the end (5xx, 40x).
            let low = Int64(String(pattern.map { $0 == "x" ? "0" : $0 })) ?? 0
            let high = Int64(String(pattern.map { $0 == "x" ? "9" : $0 })) ?? 999
            let trailing = !(pattern.drop { $0 != "x" }.contains { $0 != "x" })
            // `matches` also wants three digits: 100...999 (0xx has none).
            return C(sql: "status BETWEEN ? AND ?", arguments: [.int(max(low, 100)), .int(high)], exact: trailing)
        case .domainGlob(let glob) where ascii(glob):
            if !glob.contains("*") { return C(sql: "host = ?", arguments: [.text(glob)], exact: true) }
            // SQLite's GLOB: * as ours; ? and [ are escaped to match themselves.
            var escaped = ""
            for c in glob {
                switch c {
                case "?": escaped += "[?]"
                case "[": escaped += "[[]"
                default: escaped.append(c)
                }
            }
            return C(sql: "host GLOB ?", arguments: [.text(escaped)], exact: false)
        case .pending:
            return C(sql: "state = 'pending'", arguments: [], exact: true)
        case .failed:
            return C(sql: "state = 'failed'", arguments: [], exact: true)
        case .hasResponse:
            return C(sql: "state = 'complete'", arguments: [], exact: true)
        case .largerThan(let bytes):
            return C(sql: "response_size > ?", arguments: [.double(bytes)], exact: true)
        default:
            return nil
        }
    }
}
