// Redaction: everything the network log stores passes through `Redactor`
// first (headers, URLs, bodies, and every free text: errors, status texts,
// notes, reasons, server addresses). No Foundation: the work is done on UTF-8
// bytes and Unicode scalars, never on `Character`s, because a combining mark
// after `=` or a quote would merge with it into one Character and hide the
// boundary. Every byte outside a redacted value is kept exactly as it was.
//
// # Names
//
// A name (header, query/form parameter, cookie, JSON key) is compared after
// `Redactor.normalize`:
//   1. lowercase (Unicode);
//   2. percent-decode, up to four times, stopping early when a pass changes
//      nothing (`API%255FKEY` -> `api%5fkey` -> `api_key`); invalid UTF-8 that
//      decoding produces becomes U+FFFD;
//   3. NFKC (GNU libunistring), so fullwidth `ＡＰＩ＿ＫＥＹ` becomes `API_KEY`;
//   4. keep ASCII letters and digits only, lowercasing ASCII letters (steps 2
//      and 3 can produce uppercase ASCII: `%41`, fullwidth capitals).
// So `X-API-Key`, `x_api_key`, `api.key`, `API%5FKEY` and `ＡＰＩ＿ＫＥＹ` all
// contain `apikey`.
//
// A normalised name is sensitive when (first rule that applies wins):
//   a. it equals a normalised `extraNames` entry (extra names are exact
//      names, not fragments, and beat rule b);
//   b. it is on the short allowlist of names that contain a fragment but
//      never hold a secret: OAuth's `token_type`/`token_type_hint` and the
//      token counts of LLM APIs (`max_tokens`, `prompt_tokens`...);
//   c. it equals an exact name: `pwd`, `pass`, `otp`, `sid`, `connect.sid`,
//      `symfony`, `mysql_pwd` (too short or too common to match inside
//      other words);
//   d. it contains a substring fragment anywhere: password, passwd,
//      passphrase, passcode, secret, token, apikey, privatekey, credential,
//      csrf, xsrf, sessid, signature, accesskey, subscriptionkey, jwt.
//      Deliberately broad (`passwordPolicy`, `secretary` are false
//      positives): a leak costs more than a hidden value;
//   e. it contains a stem followed by one of the stem's known suffixes AT THE
//      END of the name (anything may come before the stem):
//        auth           + "" | token | key | code | header | data | info |
//                         string | str | secret | cred | creds | credential |
//                         credentials | cookie | session | hash | pass |
//                         password | value | verifier | param | params |
//                         ticket | blob
//        authorization  + "" | header | value | code | token | key | data |
//                         string | str
//        authentication + "" | header | value | code | token | key | data |
//                         string | str | secret | info
//        session        + "" | id | ids | key | token | cookie | secret |
//                         data | value | hash | string | str | ticket
//        cookie         + "" | s | 2 | header | value | values | data |
//                         string | str
//      So `auth`, `x-auth`, `oauth`, `basic_auth`, `auth_key`,
//      `Proxy-Authorization`, `oauth_verifier`, `PHPSESSID`, `JSESSIONID`,
//      `user_session`, `Set-Cookie` match, while `author`, `authority`,
//      `authors`, `authenticated`, `WWW-Authenticate`, `unauthorized`,
//      `authType`, `oauth_callback_url`, `authorization_endpoint`,
//      `session_count`, `cookie_consent` do not.
// Not on the list on purpose (add them with `extraNames` if needed): `code`
// (far too common as an ordinary JSON key; note OAuth's `?code=`), and
// Sentry's `x_forwarded_for` (personal data, not a secret).
//
// # Field names
//
// Headers and query/fragment/form parameters use `isSensitiveField`: the
// rules above, plus `key` itself and any name whose last word is `key`
// (after `-`, `_`, `.`, a space, or camelCase: `X-Tenant-Key`,
// `x-functions-key`, `license_key`, `mapsKey`; not `monkey`). JSON keys and
// names in text use the rules above alone: `"key"` is an ordinary JSON key
// and `key: "..."` everyday code.
// Extra names (`net.redact-name`, `add_redact_name`) apply everywhere.
//
// # Where
//
// A sensitive value is replaced even when it is empty (`token=` ->
// `token=[REDACTED]`): one rule, and it does not tell whether a secret was sent.
// - Headers: a sensitive header's value becomes `[REDACTED]`, except:
//   names ending in `authorization` (Authorization, Proxy-Authorization,
//   X-Authorization...) keep a known scheme (`Bearer [REDACTED]`,
//   `Basic [REDACTED]`; an unknown first word could be part of the secret,
//   so then the whole value goes); Cookie keeps every cookie's name and
//   redacts every value (`theme=[REDACTED]; sessionid=[REDACTED]`);
//   Set-Cookie redacts the cookie's value, keeps known attributes (Path,
//   Expires, Max-Age, Domain, Secure, HttpOnly, SameSite, Partitioned,
//   Priority, Version, Comment...) verbatim and redacts the values of
//   unknown ones; several Set-Cookies folded into one value with commas
//   (as URLSession does) are split where a comma is followed by `name=`.
//   Other headers: Location, Content-Location, Referer get `url(_:)`; every
//   other value is scanned as text (below), so `password=...`, `Bearer ...`,
//   URLs and JWT signatures inside an ordinary value are redacted too.
// - URLs: `user:password@` becomes `user:[REDACTED]@`; userinfo WITHOUT a
//   colon becomes `[REDACTED]@` (a token used as the user name, as in
//   `https://TOKEN@github.com`). Query and fragment (`#access_token=...`)
//   parameters are split on `&`; a sensitive name's value (everything up to
//   the next `&`) becomes `[REDACTED]`. Because some servers also split on
//   `;`, a sensitive name right after a `;` inside a parameter redacts from
//   there to the next `&` too (`a=1;token=x` -> `a=1;token=[REDACTED]`). A
//   parameter without `=` has no value to redact. The path loses JWT
//   signatures. A value that is not redacted by its name is percent-decoded
//   (up to four rounds, each decoded byte remembering the encoded bytes it
//   came from) and scanned as text, so a URL nested in it
//   (`redirect_uri=https%3A%2F%2Fh%2F%3Ftoken%3Dx`) is redacted as a URL;
//   when something is redacted, the unredacted spans are written back as
//   their original encoded bytes and the marker is inserted as it is
//   (`...%3Ftoken%3D[REDACTED]`). Nesting is followed `maxNestedDepth` (4)
//   levels deep; deeper values only lose JWT signatures.
// - Text (`text(_:)`: errors, status texts, notes, reasons, server
//   addresses; text bodies; JSON strings; ordinary header values), scanned
//   once from left to right:
//   - `scheme://...` up to white space, a quote, `<`, `>`, a backtick or a
//     brace (trailing `.,;:!?` and unbalanced `)`/`]` are prose) is a URL;
//   - `Bearer`, `Basic`, `Token`, `JWT`, `DPoP`, `Negotiate`, `NTLM`,
//     `ApiKey` followed by spaces and a credential-shaped token68 run (8 or
//     more bytes with a digit, an inner capital or a symbol) lose the token;
//   - a word (`[A-Za-z0-9._-]+`) that is a sensitive name (`isSensitive`
//     and the extra names; not the `key` rule of field names, since
//     `key: "..."` is everyday code), optionally closed by a quote, then
//     spaces and `=` or `:`: a quoted value is everything inside its
//     quotes, an unquoted one runs to white space or one of `&;,"'<>)]}`
//     and a backtick (a final `.` is prose). After `=` the value always
//     goes; after `:` it goes when the name was quoted too (`"password":
//     "x"`, data) or the value is credential-shaped (6 bytes or more), so
//     `Password: required` and JavaScript's `credentials: "omit"` stay;
//   - a sensitive name followed by spaces and a high-entropy token (16 or
//     more bytes, credential-shaped, at least 10 different bytes) loses it;
//   - any other word loses JWT signatures.
//   A value that already is the marker is left alone, so redacting twice
//   changes nothing more.
// - Bodies: application/json, text/json and any `+json` type are parsed
//   strictly and spliced in the same pass (`JSON.scan`): only the bytes of a sensitive
//   key's value (any type, objects and arrays included) are replaced with
//   the JSON string "[REDACTED]"; formatting, key order and number spelling
//   (`1.0`, `1e3`) survive. Strings that contain a JWT are re-quoted with
//   `JSON.quote` after losing the signature (unchanged strings keep their
//   escapes). Invalid JSON, nesting deeper than 64 arrays/objects or a
//   duplicate key in any object (keys compared as Swift Strings, so
//   canonically equivalent keys count as the same) withhold the body; the
//   reason never quotes the body's content except a duplicated key.
//   Strings that are not redacted by their key are scanned as text.
//   application/x-www-form-urlencoded is handled like a query. Any
//   multipart/* body is withheld, and so is XML (application/xml, text/xml,
//   `+xml`, and an untyped, text/plain or octet-stream body that starts
//   with `<?xml` or an element other than HTML): PincerXML gives element
//   offsets but not the byte ranges of texts and attribute values a splice
//   needs. With no Content-Type at all, a body that starts with `{` or `[`
//   is treated as JSON (withheld when invalid) and a body of printable
//   ASCII without spaces containing `=` as a form. Every other body of a
//   textual type (BodyText.isTextual), or that is valid UTF-8 without NUL
//   bytes whatever its type, is scanned as text; binary bodies are stored
//   as they are.
// - JWTs: a run of `[A-Za-z0-9_-]` segments joined by dots in which a
//   segment base64url-decodes to a JSON object with an "alg" member and is
//   followed by two non-empty segments: the third segment (the signature)
//   becomes `[REDACTED]`: `xxx.yyy.[REDACTED]`.

internal import CUnistring
import PincerJSON
import Synchronization
// `free`, `memchr` and `memcmp` come from CUnistring (its shim.h includes
// <stdlib.h> and <string.h>); do not import
// Glibc in this file as well, or clang sees stdlib.h from two modules.

public struct Redactor: Sendable {
    public static let marker = "[REDACTED]"
    public static let maxJSONDepth = 64

    private let extraNames: Set<String>
    /// Verdicts already reached for names seen before (nil: every name is
    /// judged afresh; the tests compare both). The verdict depends only on the
    /// name's bytes and on `extraNames`, which never change for a Redactor.
    private let verdicts: RedactionMemo<NameVerdicts.Verdict>?
    /// Ordinary header values already redacted (nil alongside `verdicts`).
    private let headerValues: RedactionMemo<String>?

    /// `extraNames` are added to the defaults (normalised the same way).
    /// They are exact names (not fragments) and beat the allowlist.
    public init(extraNames: [String] = []) {
        self.init(extraNames: extraNames, cachingVerdicts: true)
    }

    init(extraNames: [String], cachingVerdicts: Bool) {
        self.extraNames = Set(extraNames.map(Redactor.normalize).filter { !$0.isEmpty })
        verdicts = cachingVerdicts ? NameVerdicts.memo() : nil
        headerValues = cachingVerdicts ? HeaderValues.memo() : nil
    }

    /// The normalised name and the verdict of `rule` for `name`'s bytes,
    /// from the cache when it has them.
    private func judged(_ rule: NameVerdicts.Rule, _ name: UnsafeBufferPointer<UInt8>) -> (normalized: String, sensitive: Bool) {
        func judge() -> (normalized: String, sensitive: Bool) {
            switch rule {
            case .jsonKey, .word:
                // A JSON key is valid UTF-8 (the parser checked it), so the
                // Unicode lowercasing of normalize(_:) and normalize(utf8:) agree.
                let n = Redactor.normalize(utf8: name)
                return (n, isSensitive(normalized: n))
            case .field:
                let n = Redactor.normalize(utf8: name)
                return (n, isSensitiveField(normalized: n, raw: name))
            }
        }
        guard let verdicts else { return judge() }
        if let known = verdicts.lookup(rule.rawValue, name, { ($0.normalized, $0.sensitive) }) { return known }
        let verdict = judge()
        verdicts.store(rule.rawValue, name, NameVerdicts.Verdict(normalized: verdict.normalized, sensitive: verdict.sensitive))
        return verdict
    }

    /// `isSensitive` of a JSON key (cached).
    func isSensitiveKey(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { sensitive(.jsonKey, $0) }
    }

    /// The verdict of `rule` for `name`'s bytes alone (cached).
    private func sensitive(_ rule: NameVerdicts.Rule, _ name: UnsafeBufferPointer<UInt8>) -> Bool {
        if let known = verdicts?.lookup(rule.rawValue, name, { $0.sensitive }) { return known }
        return judged(rule, name).sensitive
    }

    /// `isSensitive` of a JSON key given as its UTF-8 bytes (cached).
    func isSensitiveKey(utf8 key: UnsafeBufferPointer<UInt8>) -> Bool {
        sensitive(.jsonKey, key)
    }

    /// `isSensitive` of a word in text (cached).
    func isSensitiveWord(_ word: ArraySlice<UInt8>) -> Bool {
        word.withUnsafeBufferPointer { sensitive(.word, $0) }
    }

    /// The normalised header name and `isSensitiveField` of it (cached).
    func judgedHeader(_ name: String) -> (normalized: String, sensitive: Bool) {
        var name = name
        return name.withUTF8 { judged(.field, $0) }
    }

    // MARK: - Names

    /// Lowercase, percent-decode (up to four times), NFKC, then keep ASCII
    /// letters and digits (lowercased). See the comment at the top of the file.
    public static func normalize(_ name: String) -> String {
        normalize(utf8: Array(name.lowercased().utf8), lowercased: true)
    }

    static func normalize(utf8 input: some Collection<UInt8>, lowercased: Bool = false) -> String {
        var bytes: [UInt8]
        if lowercased {
            bytes = Array(input)
        } else if input.allSatisfy({ $0 < 0x80 }) {
            bytes = Array(input)  // ASCII: step 4 lowercases these anyway
        } else {
            bytes = Array(String(decoding: input, as: UTF8.self).lowercased().utf8)
        }
        for _ in 0..<4 {
            guard let decoded = rdPercentDecoded(bytes) else { break }
            bytes = decoded
        }
        if bytes.contains(where: { $0 >= 0x80 }) {
            // Repair invalid UTF-8 (from percent-decoding) before NFKC.
            let repaired = Array(String(decoding: bytes, as: UTF8.self).utf8)
            bytes = rdNfkc(repaired) ?? repaired
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for b in bytes {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): out.append(b)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): out.append(b + 0x20)
            default: break
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    public func isSensitive(_ name: String) -> Bool {
        isSensitiveKey(name)
    }

    func isSensitive(normalized n: String) -> Bool {
        if n.isEmpty { return false }
        if extraNames.contains(n) { return true }
        if Redactor.allowlist.contains(n) { return false }
        if Redactor.exactNames.contains(n) { return true }
        let bytes = Array(n.utf8)
        for fragment in Redactor.fragments where rdContains(bytes, fragment) { return true }
        for (stem, suffixes) in Redactor.stems {
            var start = 0
            while let at = rdFind(bytes, stem, from: start) {
                let rest = String(decoding: bytes[(at + stem.count)...], as: UTF8.self)
                if suffixes.contains(rest) { return true }
                start = at + 1
            }
        }
        return false
    }

    private static let allowlist: Set<String> = [
        "tokentype", "tokentypehint",
        "maxtokens", "maxoutputtokens", "maxcompletiontokens", "prompttokens", "completiontokens",
        "totaltokens", "inputtokens", "outputtokens", "cachedtokens", "reasoningtokens",
    ]
    private static let exactNames: Set<String> = [
        "pwd", "pass", "otp", "sid", "connectsid", "symfony", "mysqlpwd",
    ]
    private static let fragments: [[UInt8]] = [
        "password", "passwd", "passphrase", "passcode", "secret", "token", "apikey", "privatekey",
        "credential", "csrf", "xsrf", "sessid", "signature", "accesskey", "subscriptionkey", "jwt",
    ].map { Array($0.utf8) }
    private static let stems: [([UInt8], Set<String>)] = [
        ("auth", ["", "token", "key", "code", "header", "data", "info", "string", "str", "secret", "cred", "creds",
                  "credential", "credentials", "cookie", "session", "hash", "pass", "password", "value",
                  "verifier", "param", "params", "ticket", "blob"]),
        ("authorization", ["", "header", "value", "code", "token", "key", "data", "string", "str"]),
        ("authentication", ["", "header", "value", "code", "token", "key", "data", "string", "str", "secret", "info"]),
        ("session", ["", "id", "ids", "key", "token", "cookie", "secret", "data", "value", "hash", "string", "str",
                     "ticket"]),
        ("cookie", ["", "s", "2", "header", "value", "values", "data", "string", "str"]),
    ].map { (Array($0.0.utf8), $0.1) }


    /// The rule for field names (headers, query and form parameters, names
    /// in text): `isSensitive`, plus `key` itself and any name whose last
    /// word is `key` (`X-Tenant-Key`, `license_key`, `mapsKey`): see "Field
    /// names" at the top of the file. JSON keys use `isSensitive` alone.
    public func isSensitiveField(_ name: String) -> Bool {
        isSensitiveField(Array(name.utf8)[...])
    }

    func isSensitiveField(_ raw: ArraySlice<UInt8>) -> Bool {
        raw.withUnsafeBufferPointer { sensitive(.field, $0) }
    }

    private func isSensitiveField(normalized n: String, raw: UnsafeBufferPointer<UInt8>) -> Bool {
        if isSensitive(normalized: n) { return true }
        if n.isEmpty || Redactor.allowlist.contains(n) { return false }
        if n == "key" { return true }
        guard n.hasSuffix("key") else { return false }
        // The last word, with separators and camelCase kept: percent-decode
        // as `normalize` does (ASCII is enough to find a word boundary).
        var bytes = Array(raw)
        for _ in 0..<4 {
            guard let decoded = rdPercentDecoded(bytes) else { break }
            bytes = decoded
        }
        var end = bytes.count
        while end > 0, !(rdIsAlpha(bytes[end - 1]) || rdIsDigit(bytes[end - 1])) { end -= 1 }
        guard end >= 3 else { return false }
        let last = bytes[(end - 3)..<end].map { $0 | 0x20 }
        guard last == Array("key".utf8) else { return false }
        if end == 3 { return true }
        let before = bytes[end - 4]
        // `-key`, `_key`, `.key`, ` key`, or camelCase `Key` after a lowercase letter or digit.
        if !(rdIsAlpha(before) || rdIsDigit(before)) { return true }
        let k = bytes[end - 3]
        return k >= UInt8(ascii: "A") && k <= UInt8(ascii: "Z") && !(before >= UInt8(ascii: "A") && before <= UInt8(ascii: "Z"))
    }

    /// The extra names, normalised, sorted.
    public var extraNormalizedNames: [String] { extraNames.sorted() }

    // MARK: - Free text

    /// Any text the log keeps that is not a URL, header, or body: error
    /// messages, status texts, notes, reasons, server addresses. See "Text"
    /// at the top of the file.
    public func text(_ text: String) -> String {
        var text = text
        // Most texts cannot change: tell so from the String's own bytes.
        guard text.withUTF8({ Redactor.textMayChange($0) }) else { return text }
        let b = Array(text.utf8)
        var out = RedactionOutput(capacity: b.count)
        redactText(b[...], into: &out, depth: 0)
        return out.changed ? String(decoding: out.bytes, as: UTF8.self) : text
    }

    /// Text scanning (see "Text" at the top of the file): embedded URLs,
    /// `Bearer <token>`, `name=value` / `name: value` after sensitive names,
    /// long high-entropy tokens after them, JWT signatures.
    func redactText(_ b: ArraySlice<UInt8>, into out: inout RedactionOutput, depth: Int) {
        guard Redactor.textMayChange(b) else { out.copy(b); return }
        scanText(b, into: &out, depth: depth)
    }

    /// `redactText` without the `textMayChange` shortcut (the tests check
    /// the shortcut against it).
    func scanText(_ b: ArraySlice<UInt8>, into out: inout RedactionOutput, depth: Int) {
        b.withUnsafeBufferPointer { u in
            Redactor.scanClasses.withUnsafeBufferPointer { classes in
                scanText(b, u, classes, into: &out, depth: depth)
            }
        }
    }

    /// `scanText` over `b`'s bytes `u`, classed by `classes` (see
    /// `ScanClass`): runs are measured through the buffer, a table lookup a
    /// byte, rather than through the slice with a chain of comparisons.
    private func scanText(_ b: ArraySlice<UInt8>, _ u: UnsafeBufferPointer<UInt8>, _ classes: UnsafeBufferPointer<UInt8>,
                          into out: inout RedactionOutput, depth: Int) {
        let o = b.startIndex, end = b.endIndex
        @inline(__always) func at(_ j: Int) -> UInt8 { u[j - o] }
        @inline(__always) func has(_ j: Int, _ c: UInt8) -> Bool { classes[Int(u[j - o])] & c != 0 }
        var i = o
        var copied = o
        func flush(to k: Int, _ out: inout RedactionOutput) {
            if copied < k { out.copy(b[copied..<k]) }
            copied = k
        }
        while i < end {
            // An embedded URL: scheme "://" ... up to a space, quote or bracket.
            if has(i, ScanClass.alpha), i == o || !has(i - 1, ScanClass.scheme) {
                var k = i + 1
                while k < end, has(k, ScanClass.scheme) { k += 1 }
                if k + 2 < end, at(k) == UInt8(ascii: ":"), at(k + 1) == UInt8(ascii: "/"), at(k + 2) == UInt8(ascii: "/") {
                    var e = k + 3
                    while e < end, !rdEndsURLInText(at(e)) { e += 1 }
                    // Prose punctuation after a URL is not part of it.
                    e = rdTrimmingProse(b[i..<e], minimum: k + 3)
                    flush(to: i, &out)
                    redactURL(b[i..<e], into: &out, depth: depth)
                    copied = e
                    i = e
                    continue
                }
            }
            guard has(i, ScanClass.jwt), i == o || !has(i - 1, ScanClass.jwt) else { i += 1; continue }
            var (k, dots) = Redactor.jwtRun(u, from: i - o)
            k += o
            let word = b[i..<k]
            // `Bearer <credentials>` and the other schemes that carry a token.
            if word.count >= 3, word.count <= 9, Redactor.isTextScheme(word) {
                var s = k
                while s < end, at(s) == 0x20 || at(s) == 0x09 { s += 1 }
                var t = s
                while t < end, rdIsToken68Byte(at(t)) { t += 1 }
                while t > s, at(t - 1) == UInt8(ascii: ".") { t -= 1 }  // a full stop after the token
                if s > k, rdIsCredentialShaped(b[s..<t], minimum: 8) {
                    flush(to: s, &out)
                    out.insert(Redactor.markerBytes)
                    copied = t
                    i = t
                    continue
                }
            }
            // Cheap pre-check of `sensitiveValue`: a word followed by a byte
            // that cannot start a separator (`=`, `:`, a quote, a space or a
            // tab) has no value after it.
            if k == end || has(k, ScanClass.mayFollowName), let value = sensitiveValue(after: word, in: b) {
                flush(to: value.lowerBound, &out)
                out.insert(Redactor.markerBytes)
                copied = value.upperBound
                i = value.upperBound
                continue
            }
            // Not a name with a value: keep it, losing any JWT signature
            // (a JWT has two dots; other words are copied with what follows).
            if dots >= 2 {
                flush(to: i, &out)
                rdAppendStrippingJWTs(word, to: &out)
                copied = k
            }
            i = k
        }
        flush(to: end, &out)
    }

    /// The end of the run of word bytes (ALPHA / DIGIT / "-" / "_" / ".")
    /// that starts at `start` in `u`, and the dots in it. (Swift's generic
    /// SIMD types, tried here, were ten times slower than this loop.)
    static func jwtRun(_ u: UnsafeBufferPointer<UInt8>, from start: Int) -> (end: Int, dots: Int) {
        scanClasses.withUnsafeBufferPointer { classes in
            var k = start, dots = 0
            while k < u.count {
                let c = classes[Int(u[k])]
                guard c & ScanClass.jwt != 0 else { break }
                dots &+= Int(c >> 4)
                k += 1
            }
            return (k, dots)
        }
    }

    /// What each byte is to `scanText` (bits of `scanClasses`).
    private enum ScanClass {
        static let alpha: UInt8 = 1
        /// A byte of a URL scheme after its first: ALPHA / DIGIT / "+" / "-" / ".".
        static let scheme: UInt8 = 2
        /// A byte of a word (and of a JWT): ALPHA / DIGIT / "-" / "_" / ".".
        static let jwt: UInt8 = 4
        /// May follow a name that has a value: `=`, `:`, a quote, a space, a tab.
        static let mayFollowName: UInt8 = 8
        /// ".": counted (this bit is the top one, so `class >> 4` is 1 for it).
        static let dot: UInt8 = 16
    }

    private static let scanClasses: [UInt8] = (0...255).map { (v: Int) -> UInt8 in
        let c = UInt8(v)
        var bits: UInt8 = 0
        if rdIsAlpha(c) { bits |= ScanClass.alpha }
        if rdIsSchemeByte(c) { bits |= ScanClass.scheme }
        if rdIsJWTByte(c) { bits |= ScanClass.jwt }
        if c == UInt8(ascii: ".") { bits |= ScanClass.dot }
        switch c {
        case UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "\""), UInt8(ascii: "'"), 0x20, 0x09: bits |= ScanClass.mayFollowName
        default: break
        }
        return bits
    }

    /// False when `redactText` certainly copies `b` unchanged, so most JSON
    /// string values and header values are not scanned word by word. Every
    /// change it makes needs a URL's `:`, a name's `=` or `:`, a quote
    /// closing a name, or a credential-shaped run of token68 bytes of 8 or
    /// more (the token after a scheme, 8+; a high-entropy token after a
    /// name, 16+; a JWT, whose dots make it credential-shaped and whose
    /// header alone is 12+). Prose (`lorem ipsum dolor`) has none of these.
    static func textMayChange(_ b: ArraySlice<UInt8>) -> Bool {
        b.withUnsafeBufferPointer { textMayChange($0) }
    }

    static func textMayChange(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        textClasses.withUnsafeBufferPointer { classes in
            var runStart = 0
            var shaped = false  // the run so far has a digit, a capital after its first byte, or a symbol
            for i in 0..<b.count {
                switch classes[Int(b[i])] {
                case TextClass.stop: return true
                case TextClass.other:
                    if shaped && i - runStart >= 8 { return true }
                    runStart = i + 1
                    shaped = false
                case TextClass.shaping: shaped = true
                case TextClass.capital: if i > runStart { shaped = true }
                default: break
                }
            }
            return shaped && b.count - runStart >= 8
        }
    }

    /// What each byte is to `textMayChange`.
    private enum TextClass {
        /// Ends a run of token68 bytes.
        static let other: UInt8 = 0
        static let lowercase: UInt8 = 1
        /// Shapes a run like a credential unless it comes first.
        static let capital: UInt8 = 2
        /// Digits and token68 symbols: shape a run like a credential.
        static let shaping: UInt8 = 3
        /// `:`, `=` and quotes: the text may change.
        static let stop: UInt8 = 4
    }

    private static let textClasses: [UInt8] = (0...255).map { (v: Int) -> UInt8 in
        let c = UInt8(v)
        switch c {
        case UInt8(ascii: ":"), UInt8(ascii: "="), UInt8(ascii: "\""), UInt8(ascii: "'"): return TextClass.stop
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return TextClass.lowercase
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return TextClass.capital
        default: return rdIsToken68Byte(c) ? TextClass.shaping : TextClass.other
        }
    }

    /// The range of the value to redact after `word` when `word` is a
    /// sensitive name followed by `=`, `:` (either optionally after a closing
    /// quote and spaces) or spaces and a long high-entropy token.
    private func sensitiveValue(after word: ArraySlice<UInt8>, in b: ArraySlice<UInt8>) -> Range<Int>? {
        // Cheap pre-check: most words are not followed by a separator.
        var p = word.endIndex
        if p < b.endIndex, b[p] == UInt8(ascii: "\"") || b[p] == UInt8(ascii: "'") { p += 1 }
        while p < b.endIndex, b[p] == 0x20 || b[p] == 0x09 { p += 1 }
        guard p < b.endIndex else { return nil }
        let separator = b[p]
        if separator != UInt8(ascii: "=") && separator != UInt8(ascii: ":") {
            // `token AbC...`: only a long high-entropy token (checked first:
            // most words are followed by a space and an ordinary word).
            guard p > word.endIndex else { return nil }
            var t = p
            while t < b.endIndex, rdIsToken68Byte(b[t]) { t += 1 }
            return rdIsHighEntropy(b[p..<t]) && isSensitiveWord(word) ? p..<t : nil
        }
        // Names in text use the narrower rule: `key: "..."` is everyday code.
        guard isSensitiveWord(word) else { return nil }
        // `"password": "x"` is data; `credentials: "omit"` (an unquoted name) is code.
        let quotedName = word.startIndex > b.startIndex && word.endIndex < b.endIndex
            && (b[word.startIndex - 1] == UInt8(ascii: "\"") || b[word.startIndex - 1] == UInt8(ascii: "'"))
            && b[word.endIndex] == b[word.startIndex - 1]
        p += 1
        while p < b.endIndex, b[p] == 0x20 || b[p] == 0x09 { p += 1 }
        guard p < b.endIndex, !b[p...].starts(with: Redactor.markerBytes) else { return nil }
        if b[p] == UInt8(ascii: "\"") || b[p] == UInt8(ascii: "'") {
            // A quoted value, backslash escapes honoured: everything inside goes.
            let quote = b[p]
            var q = p + 1
            while q < b.endIndex, b[q] != quote {
                q += b[q] == UInt8(ascii: "\\") ? 2 : 1
            }
            let end = min(q, b.endIndex)
            guard end > p + 1 else { return nil }
            if separator == UInt8(ascii: ":"), !quotedName, !rdIsCredentialShaped(b[(p + 1)..<end], minimum: 6) { return nil }
            return (p + 1)..<end
        }
        var v = p
        while v < b.endIndex, !rdEndsValueInText(b[v]) { v += 1 }
        var end = v
        while end > p, b[end - 1] == UInt8(ascii: ".") { end -= 1 }  // a full stop after the value
        guard end > p else { return nil }
        let value = b[p..<end]
        if value.elementsEqual(Redactor.markerBytes) { return nil }
        // After `=` any value goes (as in a form); after `:` only what
        // looks like a credential, so "Password: required" stays.
        if separator == UInt8(ascii: "=") || rdIsCredentialShaped(value, minimum: 6) { return p..<end }
        return nil
    }

    /// Scheme words that are followed by a credential in text (`Bearer x`).
    private static let textSchemes: [[UInt8]] = ["bearer", "basic", "token", "jwt", "dpop", "negotiate", "ntlm", "apikey"].map { Array($0.utf8) }

    /// `word` is one of `textSchemes`, ignoring ASCII case. Compared in place:
    /// lowercasing a copy of every word of a body to look it up in a Set was
    /// a hot spot of JSON body redaction.
    static func isTextScheme(_ word: ArraySlice<UInt8>) -> Bool {
        for scheme in textSchemes where scheme.count == word.count {
            // Only A-Z and a-z become a lowercase letter when 0x20 is set.
            if zip(scheme, word).allSatisfy({ $0 == $1 | 0x20 }) { return true }
        }
        return false
    }

    // MARK: - URLs

    public func url(_ url: String) -> String {
        let b = Array(url.utf8)
        var out = RedactionOutput(capacity: b.count + 16)
        redactURL(b[...], into: &out, depth: 0)
        return out.bytes.elementsEqual(b) ? url : String(decoding: out.bytes, as: UTF8.self)
    }

    /// How many URLs (or encoded values) inside values inside URLs are
    /// followed; deeper ones are redacted as plain parameters.
    public static let maxNestedDepth = 4

    func redactURL(_ b: ArraySlice<UInt8>, into out: inout RedactionOutput, depth: Int) {
        var i = b.startIndex
        // scheme ":" (ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ))
        if i < b.endIndex, rdIsAlpha(b[i]) {
            var k = i + 1
            while k < b.endIndex, rdIsSchemeByte(b[k]) { k += 1 }
            if k < b.endIndex, b[k] == UInt8(ascii: ":") {
                out.copy(b[i...k])
                i = k + 1
            }
        }
        // "//" authority
        if i + 1 < b.endIndex, b[i] == UInt8(ascii: "/"), b[i + 1] == UInt8(ascii: "/") {
            out.copy(b[i..<i + 2])
            i += 2
            var end = i
            while end < b.endIndex, b[end] != UInt8(ascii: "/"), b[end] != UInt8(ascii: "?"), b[end] != UInt8(ascii: "#") { end += 1 }
            if let at = b[i..<end].lastIndex(of: UInt8(ascii: "@")) {
                if let colon = b[i..<at].firstIndex(of: UInt8(ascii: ":")) {
                    out.copy(b[i...colon])  // "user:"
                }
                out.insert(Redactor.markerBytes)
                i = at
            }
            out.copy(b[i..<end])
            i = end
        }
        // path
        var end = i
        while end < b.endIndex, b[end] != UInt8(ascii: "?"), b[end] != UInt8(ascii: "#") { end += 1 }
        rdAppendStrippingJWTs(b[i..<end], to: &out)
        i = end
        // query
        if i < b.endIndex, b[i] == UInt8(ascii: "?") {
            out.copy(b[i...i])
            i += 1
            end = b[i...].firstIndex(of: UInt8(ascii: "#")) ?? b.endIndex
            redactParameters(b[i..<end], into: &out, depth: depth)
            i = end
        }
        // fragment (`#access_token=...` in OAuth's implicit flow)
        if i < b.endIndex {
            out.copy(b[i...i])
            redactParameters(b[(i + 1)...], into: &out, depth: depth)
        }
    }

    /// `name=value&name=value` (queries, fragments, form bodies).
    func redactParameters(_ b: ArraySlice<UInt8>, into out: inout RedactionOutput, depth: Int) {
        var start = b.startIndex
        while start <= b.endIndex {
            let end = b[start...].firstIndex(of: UInt8(ascii: "&")) ?? b.endIndex
            redactParameter(b[start..<end], into: &out, depth: depth)
            if end == b.endIndex { break }
            out.copy(b[end...end])
            start = end + 1
        }
    }

    private func redactParameter(_ p: ArraySlice<UInt8>, into out: inout RedactionOutput, depth: Int) {
        // Candidate names start at the beginning and after every ';'.
        var nameStart = p.startIndex
        while nameStart <= p.endIndex {
            var k = nameStart
            while k < p.endIndex, p[k] != UInt8(ascii: "="), p[k] != UInt8(ascii: ";") { k += 1 }
            if k < p.endIndex, p[k] == UInt8(ascii: "="), isSensitiveField(p[nameStart..<k]) {
                if nameStart > p.startIndex { redactValue(p[p.startIndex..<nameStart], into: &out, depth: depth) }
                out.copy(p[nameStart...k])
                out.insert(Redactor.markerBytes)
                return
            }
            guard let semicolon = p[nameStart...].firstIndex(of: UInt8(ascii: ";")) else { break }
            nameStart = semicolon + 1
        }
        // Not sensitive: the value may still hold a token or a URL (percent-encoded).
        if let eq = p.firstIndex(of: UInt8(ascii: "=")) {
            out.copy(p[p.startIndex...eq])
            redactValue(p[(eq + 1)...], into: &out, depth: depth)
        } else {
            redactValue(p, into: &out, depth: depth)
        }
    }

    /// A parameter value that is not sensitive by name: percent-decoded (up
    /// to four rounds), scanned as text (nested URLs, tokens by shape), and
    /// when something is redacted written back so that every byte outside
    /// the redacted spans keeps its original (encoded) form.
    private func redactValue(_ v: ArraySlice<UInt8>, into out: inout RedactionOutput, depth: Int) {
        guard !v.isEmpty else { return }
        guard depth < Redactor.maxNestedDepth else { rdAppendStrippingJWTs(v, to: &out); return }
        guard v.contains(UInt8(ascii: "%")) else { redactText(v, into: &out, depth: depth + 1); return }
        // decoded[n] came from v[map[n]] (a range of the original bytes).
        var decoded = Array(v)
        var map = v.indices.map { $0..<($0 + 1) }
        for _ in 0..<4 {
            guard let (next, nextMap) = rdPercentDecodedWithMap(decoded, map) else { break }
            decoded = next
            map = nextMap
        }
        var inner = RedactionOutput(capacity: decoded.count)
        redactText(decoded[...], into: &inner, depth: depth + 1)
        if inner.bytes == decoded { out.copy(v); return }
        for piece in inner.pieces {
            switch piece {
            case .copy(let r): out.copy(v[map[r.lowerBound].lowerBound..<map[r.upperBound - 1].upperBound])
            case .insert(let bytes): out.insert(bytes)
            }
        }
    }

    // MARK: - Headers

    public func headers(_ headers: [Header]) -> [Header] {
        headers.map { header in
            let (name, sensitive) = judgedHeader(header.name)
            var result = header
            switch name {
            case "cookie", "cookie2":
                result.value = redactCookie(header.value)
            case "setcookie", "setcookie2":
                result.value = redactSetCookie(header.value)
            default:
                if sensitive {
                    result.value = name.hasSuffix("authorization") ? redactCredentials(header.value) : Redactor.marker
                } else if Redactor.isURLHeader(name) {
                    result.value = memoized(.url, header.value, url)
                } else {
                    // `password=...`, tokens by shape and URLs inside ordinary values.
                    result.value = memoized(.text, header.value, text)
                }
            }
            return result
        }
    }


    /// Headers whose value is a URL (normalised names). Compared, not
    /// hashed: a Set's lookup hashed every header of every entry.
    private static func isURLHeader(_ name: String) -> Bool {
        switch name {
        case "location", "contentlocation", "referer", "referrer": true
        default: false
        }
    }

    /// `redact(value)`, from the memo of header values when it has it.
    private func memoized(_ kind: HeaderValues.Kind, _ value: String, _ redact: (String) -> String) -> String {
        guard let headerValues else { return redact(value) }
        var bytes = value
        return bytes.withUTF8 { key in
            if let known = headerValues.lookup(kind.rawValue, key, { copy $0 }) { return known }
            let redacted = redact(value)
            headerValues.store(kind.rawValue, key, redacted)
            return redacted
        }
    }

    /// Authorization-style values: keep a known scheme and the spaces after
    /// it, redact the credentials.
    private func redactCredentials(_ value: String) -> String {
        let b = Array(value.utf8)
        var i = 0
        while i < b.count, b[i] == 0x20 || b[i] == 0x09 { i += 1 }
        var j = i
        while j < b.count, rdIsTChar(b[j]) { j += 1 }
        var k = j
        while k < b.count, b[k] == 0x20 || b[k] == 0x09 { k += 1 }
        let scheme = String(decoding: b[i..<j], as: UTF8.self).lowercased()
        guard j > i, k > j, k < b.count, Redactor.authSchemes.contains(scheme) else { return Redactor.marker }
        return String(decoding: b[0..<k] + Redactor.markerBytes, as: UTF8.self)
    }

    private static let authSchemes: Set<String> = [
        "basic", "bearer", "digest", "negotiate", "ntlm", "kerberos", "dpop", "gnap", "hoba", "mutual", "oauth",
        "privatetoken", "concealed", "scram-sha-1", "scram-sha-256", "vapid", "token", "aws", "aws4-hmac-sha256",
        "hawk", "apikey", "api-key", "key", "jwt", "mac", "ssws", "splunk", "googlelogin", "sharedkey",
        "sharedkeylite",
    ]

    /// `a=1; b=2`: keep names and separators, redact every value. A piece
    /// without `=` is all value.
    private func redactCookie(_ value: String) -> String {
        let b = Array(value.utf8)
        var out: [UInt8] = []
        var start = 0
        while start <= b.count {
            let end = b[start...].firstIndex(of: UInt8(ascii: ";")) ?? b.count
            redactCookiePair(b[start..<end], into: &out)
            if end == b.count { break }
            out.append(UInt8(ascii: ";"))
            start = end + 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private func redactCookiePair(_ p: ArraySlice<UInt8>, into out: inout [UInt8]) {
        if let eq = p.firstIndex(of: UInt8(ascii: "=")) {
            out.append(contentsOf: p[...eq])
            out.append(contentsOf: Redactor.markerBytes)
            return
        }
        // No '=': the whole (trimmed) piece is a value; keep the whitespace.
        var s = p.startIndex, e = p.endIndex
        while s < e, p[s] == 0x20 || p[s] == 0x09 { s += 1 }
        while e > s, p[e - 1] == 0x20 || p[e - 1] == 0x09 { e -= 1 }
        out.append(contentsOf: p[p.startIndex..<s])
        if s < e { out.append(contentsOf: Redactor.markerBytes) }
        out.append(contentsOf: p[e..<p.endIndex])
    }

    /// `name=value; Path=/; Expires=Wed, 21 Oct 2015 07:28:00 GMT; HttpOnly`,
    /// possibly several folded together with commas.
    private func redactSetCookie(_ value: String) -> String {
        let b = Array(value.utf8)
        var out: [UInt8] = []
        var start = 0
        var startsCookie = true
        var k = 0
        while true {
            // Find the end of this piece: ';', a comma that starts a new cookie, or the end.
            var separator: UInt8? = nil
            var nextStartsCookie = false
            while k < b.count {
                if b[k] == UInt8(ascii: ";") { separator = b[k]; break }
                if b[k] == UInt8(ascii: ","), commaStartsCookie(b, at: k) {
                    separator = b[k]; nextStartsCookie = true; break
                }
                k += 1
            }
            let piece = b[start..<k]
            if startsCookie {
                redactCookiePair(piece, into: &out)
            } else {
                let nameEnd = piece.firstIndex(of: UInt8(ascii: "=")) ?? piece.endIndex
                let attribute = Redactor.normalize(utf8: piece[piece.startIndex..<nameEnd])
                if Redactor.cookieAttributes.contains(attribute) {
                    out.append(contentsOf: piece)
                } else {
                    redactCookiePair(piece, into: &out)
                }
            }
            guard let separator else { break }
            out.append(separator)
            k += 1
            start = k
            startsCookie = nextStartsCookie
        }
        return String(decoding: out, as: UTF8.self)
    }

    private func commaStartsCookie(_ b: [UInt8], at comma: Int) -> Bool {
        var j = comma + 1
        while j < b.count, b[j] == 0x20 || b[j] == 0x09 { j += 1 }
        var k = j
        while k < b.count, rdIsTChar(b[k]) { k += 1 }
        return k > j && k < b.count && b[k] == UInt8(ascii: "=")
    }

    private static let cookieAttributes: Set<String> = [
        "expires", "maxage", "domain", "path", "secure", "httponly", "samesite", "partitioned", "priority",
        "version", "comment", "commenturl", "discard", "port",
    ]

    // MARK: - Bodies

    /// A whole (not truncated) body: `.stored(redacted bytes)` or
    /// `.withheld(reason:)` (reason for people, e.g. "duplicate key \"id\" in
    /// a JSON object at depth 2"); `.none` for empty.
    public func body(_ bytes: [UInt8], contentType: String?) -> BodyPayload {
        if bytes.isEmpty { return .none }
        let type = mediaType(contentType)
        if type.hasPrefix("multipart/") {
            return .withheld(reason: "\(type) bodies are not checked for secrets")
        }
        if Redactor.isXML(type) {
            return .withheld(reason: "XML bodies (\(type)) are not checked for secrets")
        }
        if type == "application/json" || type == "text/json" || type.hasSuffix("+json") {
            return redactJSON(bytes)
        }
        if type == "application/x-www-form-urlencoded" {
            return .stored(redactForm(bytes))
        }
        let first = bytes.first { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }
        if type.isEmpty {
            // No Content-Type: sniff JSON, XML and forms.
            if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") || bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
                let result = redactJSON(bytes)
                if case .withheld(let reason) = result {
                    return .withheld(reason: "no Content-Type and the body looks like JSON: " + reason)
                }
                return result
            }
            if bytes.contains(UInt8(ascii: "=")), bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
                return .stored(redactForm(bytes))
            }
        }
        if first == UInt8(ascii: "<"), Redactor.looksLikeXML(bytes), type.isEmpty || type == "text/plain" || type == "application/octet-stream" {
            return .withheld(reason: "the body looks like XML, which is not checked for secrets")
        }
        // Any other text (text/plain, HTML, JavaScript, CSV...) is scanned for
        // tokens by shape; binary bytes are kept as they are.
        if BodyText.isTextual(type) || Redactor.isPlainText(bytes) {
            var out = RedactionOutput(deferring: bytes[...])
            redactText(bytes[...], into: &out, depth: 0)
            return .stored(out.finished(bytes))
        }
        return .stored(bytes)
    }

    /// XML media types: application/xml, text/xml and any `+xml` type.
    static func isXML(_ type: String) -> Bool {
        type == "application/xml" || type == "text/xml" || type.hasSuffix("+xml")
    }

    /// `<?xml`, or an element start followed later by a closing tag.
    static func looksLikeXML(_ bytes: [UInt8]) -> Bool {
        var i = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
        if bytes[i...].starts(with: Array("<?xml".utf8)) { return true }
        guard i + 1 < bytes.count, rdIsAlpha(bytes[i + 1]) else { return false }
        // HTML is text, not XML.
        let head = bytes[(i + 1)...].prefix(4).map { $0 | 0x20 }
        if head == Array("html".utf8) || bytes[(i + 1)...].prefix(8).map({ $0 | 0x20 }) == Array("!doctype".utf8) { return false }
        return bytes.contains(UInt8(ascii: "/"))
    }

    /// Valid UTF-8 without NUL bytes: text whatever its type says.
    static func isPlainText(_ bytes: [UInt8]) -> Bool {
        !bytes.contains(0) && String(validating: bytes, as: UTF8.self) != nil
    }

    private func redactForm(_ bytes: [UInt8]) -> [UInt8] {
        var out = RedactionOutput(deferring: bytes[...])
        redactParameters(bytes[...], into: &out, depth: 0)
        return out.finished(bytes)
    }


    private func redactJSON(_ bytes: [UInt8]) -> BodyPayload {
        let spliced: Result<[UInt8], RedactionJSONFailure>
        do {
            // One pass of the one JSON reader checks the body and tells the
            // splice where keys and strings are (no tree is built).
            spliced = try RedactionJSONSplice.splice(bytes, redactor: self)
        } catch {
            // Never quote the parser's message: it shows the offending input,
            // which may be a secret.
            if error.message.hasPrefix("nesting is deeper") {
                return .withheld(reason: "JSON nested deeper than \(Redactor.maxJSONDepth) levels")
            }
            return .withheld(reason: "invalid JSON (line \(error.line), column \(error.column))")
        }
        switch spliced {
        case .success(let out):
            return .stored(out)
        case .failure(.tooDeep):
            return .withheld(reason: "JSON nested deeper than \(Redactor.maxJSONDepth) levels")
        case .failure(.duplicateKey(let key, let depth)):
            var shown = String(String.UnicodeScalarView(key.unicodeScalars.prefix(64)))
            if shown.unicodeScalars.count < key.unicodeScalars.count { shown += "…" }
            return .withheld(reason: "duplicate key \(JSON.quote(shown)) in a JSON object at depth \(depth)")
        }
    }

    static let markerBytes = Array(marker.utf8)
    static let quotedMarkerBytes = Array(JSON.quote(marker).utf8)
}

// MARK: - JSON splicing

private enum RedactionJSONFailure: Error {
    case tooDeep
    case duplicateKey(String, depth: Int)
}

/// Splices the marker over the values of sensitive keys while `JSON.scan`
/// checks the body: one pass, no tree. It checks what the reader does not:
/// depth (64, not 512) and duplicate keys. Plain ASCII keys are judged and
/// compared from their bytes (no String per key, each distinct key judged
/// once per body); the first failure in document order is kept.
private final class RedactionJSONSplice: JSONScanVisitor {
    /// The body (for the slices text redaction reads) and the same bytes
    /// through a pointer, valid during `splice`.
    let b: [UInt8]
    let p: UnsafeBufferPointer<UInt8>
    let redactor: Redactor
    // Only this object's own calls touch its state, one at a time: the
    // dynamic exclusivity checks of class properties were a fifth of the
    // splice, so they are off here.
    @exclusivity(unchecked) var out: [UInt8] = []
    @exclusivity(unchecked) var copied = 0
    /// Reused for every string value.
    @exclusivity(unchecked) var text = RedactionOutput(capacity: 0)
    /// The plain ASCII keys of the objects open, innermost last; each open
    /// object's own begin at its frame's `start`.
    @exclusivity(unchecked) var openKeys: [Range<Int>] = []
    /// Every key as a String, once one of the object's keys is not plain
    /// ASCII (canonical equivalence: U+212A KELVIN SIGN equals "K") or there
    /// are many.
    @exclusivity(unchecked) var frames: [(start: Int, depth: Int, strings: Set<String>?, seen: UInt64)] = []
    /// Verdicts for this body's plain ASCII keys, by `keyHash` (direct
    /// mapped: a clash judges the key again through the redactor's memo).
    @exclusivity(unchecked) var verdicts = [(key: Range<Int>, sensitive: Bool)?](repeating: nil, count: 64)
    /// The member whose value is being replaced (its object's frame count
    /// and where the value starts): nothing inside it is looked at.
    @exclusivity(unchecked) var replacing: (level: Int, start: Int)?
    @exclusivity(unchecked) var failure: RedactionJSONFailure?

    static func splice(_ bytes: [UInt8], redactor: Redactor) throws(JSONSyntaxError) -> Result<[UInt8], RedactionJSONFailure> {
        try bytes.withUnsafeBufferPointer { p throws(JSONSyntaxError) in
            let splice = RedactionJSONSplice(b: bytes, p: p, redactor: redactor)
            try JSON.scan(bytes: p, visitor: splice)
            if let failure = splice.failure { return .failure(failure) }
            guard splice.copied > 0 else { return .success(bytes) }  // nothing replaced: the input as it is
            splice.out.append(contentsOf: p[splice.copied...])
            return .success(splice.out)
        }
    }

    private init(b: [UInt8], p: UnsafeBufferPointer<UInt8>, redactor: Redactor) {
        self.b = b
        self.p = p
        self.redactor = redactor
    }

    func replace(_ range: Range<Int>, with bytes: [UInt8]) {
        if out.isEmpty { out.reserveCapacity(p.count) }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied..<range.lowerBound]))
        out.append(contentsOf: bytes)
        copied = range.upperBound
    }

    func objectStart(depth: Int) {
        if depth > Redactor.maxJSONDepth, failure == nil { failure = .tooDeep }
        frames.append((openKeys.count, depth, nil, 0))
    }

    func arrayStart(depth: Int) {
        if depth > Redactor.maxJSONDepth, failure == nil { failure = .tooDeep }
    }

    func arrayEnd() {}

    func objectEnd() {
        let frame = frames.removeLast()
        openKeys.removeSubrange(frame.start...)
    }

    func key(_ content: Range<Int>, escaped: Bool, valueStart: Int) {
        guard failure == nil else { return }
        let top = frames.count - 1
        let start = frames[top].start
        let sensitive: Bool
        if !escaped, isPlainASCII(content) {
            let hash = keyHash(content)
            if frames[top].strings == nil, openKeys.count - start < KeysSeen.listLimit {
                // Equal keys hash alike: compare only when this hash was seen in the object.
                let bit: UInt64 = 1 << (hash & 63)
                if frames[top].seen & bit != 0 {
                    for seen in openKeys[start...] where sameBytes(seen, content) {
                        failure = .duplicateKey(decodeRange(content), depth: frames[top].depth)
                        return
                    }
                }
                frames[top].seen |= bit
                openKeys.append(content)
            } else if !insert(decodeRange(content), frame: top) {
                return
            }
            sensitive = replacing == nil && isSensitiveKey(content, hash: hash)
        } else {
            let key = decodeString(content)
            guard insert(key, frame: top) else { return }
            sensitive = replacing == nil && redactor.isSensitiveKey(key)
        }
        if sensitive { replacing = (frames.count, valueStart) }
    }

    /// Adds `key` to the frame's Set (made from its byte keys first); false
    /// (and the failure kept) when it was there.
    private func insert(_ key: String, frame top: Int) -> Bool {
        if frames[top].strings == nil { frames[top].strings = Set(openKeys[frames[top].start...].map(decodeRange)) }
        guard frames[top].strings!.insert(key).inserted else {
            failure = .duplicateKey(key, depth: frames[top].depth)
            return false
        }
        return true
    }

    func memberEnd(_ end: Int) {
        guard let r = replacing, r.level == frames.count else { return }
        replacing = nil
        if failure == nil { replace(r.start..<end, with: Redactor.quotedMarkerBytes) }
    }

    func string(_ content: Range<Int>, escaped: Bool) {
        guard failure == nil, replacing == nil else { return }
        redactString(content, escaped: escaped)
    }

    func isPlainASCII(_ r: Range<Int>) -> Bool {
        for k in r where p[k] >= 0x80 { return false }
        return true
    }

    func sameBytes(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        a.count == b.count && memcmp(p.baseAddress! + a.lowerBound, p.baseAddress! + b.lowerBound, a.count) == 0
    }

    /// A cheap hash of a key's bytes (length, first, middle and last byte).
    func keyHash(_ key: Range<Int>) -> Int {
        guard !key.isEmpty else { return 0 }
        let first = Int(p[key.lowerBound]), middle = Int(p[key.lowerBound + key.count / 2]), last = Int(p[key.upperBound - 1])
        return (key.count &* 7) ^ (first &* 13) ^ (middle &* 29) ^ (last &* 3) ^ (last >> 3)
    }

    /// `isSensitive` of a plain ASCII key, judged once per body (mostly).
    func isSensitiveKey(_ key: Range<Int>, hash: Int) -> Bool {
        let slot = hash & 63
        if let v = verdicts[slot], sameBytes(v.key, key) { return v.sensitive }
        let sensitive = redactor.isSensitiveKey(utf8: UnsafeBufferPointer(rebasing: p[key]))
        verdicts[slot] = (key, sensitive)
        return sensitive
    }

    /// The bytes at `range` (no escapes) as a String.
    func decodeRange(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: p[range]), as: UTF8.self)
    }

    /// The text of a string's content (between its quotes), escapes decoded.
    func decodeString(_ content: Range<Int>) -> String {
        if memchr(p.baseAddress! + content.lowerBound, 0x5C, content.count) == nil { return decodeRange(content) }
        let quoted = (content.lowerBound - 1)..<(content.upperBound + 1)
        if let s = try? JSON.parse(bytes: UnsafeBufferPointer(rebasing: p[quoted])).stringValue { return s }
        return decodeRange(content)
    }

    /// A string value that is not redacted by its key: scanned as text
    /// (tokens by shape, URLs, JWT signatures). Unchanged strings keep their
    /// escapes; changed ones with escapes are re-quoted.
    func redactString(_ content: Range<Int>, escaped: Bool) {
        if !escaped {
            guard Redactor.textMayChange(UnsafeBufferPointer(rebasing: p[content])) else { return }
            text.reset()
            redactor.redactText(b[content], into: &text, depth: 0)
            if text.changed { replace(content, with: text.bytes) }
        } else {
            let decoded = Array(decodeString(content).utf8)
            guard Redactor.textMayChange(decoded[...]) else { return }
            text.reset()
            redactor.redactText(decoded[...], into: &text, depth: 0)
            if text.changed {
                let quoted = (content.lowerBound - 1)..<(content.upperBound + 1)
                replace(quoted, with: Array(JSON.quote(String(decoding: text.bytes, as: UTF8.self)).utf8))
            }
        }
    }
}

/// How many keys of one object are compared byte by byte before they go
/// into a Set.
private enum KeysSeen {
    static let listLimit = 12
}

// MARK: - Output

/// Redacted bytes plus where each piece came from, so that a redaction done
/// on decoded bytes can be written back into the encoded ones (a URL inside
/// a percent-encoded parameter).
struct RedactionOutput {
    enum Piece {
        /// Input bytes at this range, copied.
        case copy(Range<Int>)
        /// Bytes that are not in the input (the marker).
        case insert([UInt8])
    }
    /// The output (when deferring, only once `materialize` has run).
    var bytes: [UInt8] = []
    var pieces: [Piece] = []
    /// Something was inserted: the bytes differ from the input (a copy
    /// alone reproduces it).
    private(set) var changed = false
    /// Deferring: the input, while the output is still its prefix up to
    /// `sourceEnd`. Nothing is copied until the output differs, so a large
    /// body that needs no redaction is neither copied nor allocated again.
    private var source: ArraySlice<UInt8>?
    private var sourceEnd = 0

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// An output for `input` that copies nothing until it differs from it.
    init(deferring input: ArraySlice<UInt8>) {
        source = input
        sourceEnd = input.startIndex
    }

    /// Empty again, keeping the storage (one output serves many strings).
    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        pieces.removeAll(keepingCapacity: true)
        changed = false
        source = nil
    }

    /// Deferring, and the output so far is the whole input.
    var reproducesSource: Bool { source.map { sourceEnd == $0.endIndex } ?? false }

    /// The output for `input` (the array deferred on): `input` itself when
    /// the output reproduces it.
    mutating func finished(_ input: [UInt8]) -> [UInt8] {
        if reproducesSource { return input }
        materialize()
        return bytes
    }

    /// Writes out the deferred prefix: `bytes` is the output from here on.
    mutating func materialize() {
        guard let input = source else { return }
        bytes.reserveCapacity(input.count)
        bytes.append(contentsOf: input[input.startIndex..<sourceEnd])
        source = nil
    }

    /// `s` must be a slice of the input (its indices are the input's).
    mutating func copy(_ s: ArraySlice<UInt8>) {
        guard !s.isEmpty else { return }
        if source != nil, s.startIndex == sourceEnd {
            sourceEnd = s.endIndex
        } else {
            materialize()
            bytes.append(contentsOf: s)
        }
        if case .copy(let last)? = pieces.last, last.upperBound == s.startIndex {
            pieces[pieces.count - 1] = .copy(last.lowerBound..<s.endIndex)
        } else {
            pieces.append(.copy(s.startIndex..<s.endIndex))
        }
    }

    mutating func insert(_ b: [UInt8]) {
        materialize()
        bytes.append(contentsOf: b)
        pieces.append(.insert(b))
        changed = true
    }
}

// MARK: - JWTs

func rdIsJWTByte(_ b: UInt8) -> Bool {
    rdIsAlpha(b) || rdIsDigit(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: "_") || b == UInt8(ascii: ".")
}

/// Copies `b`, replacing the signature of every JWT in it with the marker.
func rdAppendStrippingJWTs(_ b: ArraySlice<UInt8>, to out: inout RedactionOutput) {
    var i = b.startIndex
    var copied = b.startIndex
    while i < b.endIndex {
        guard rdIsJWTByte(b[i]) else { i += 1; continue }
        var j = i
        var dots = 0
        while j < b.endIndex, rdIsJWTByte(b[j]) {
            if b[j] == UInt8(ascii: ".") { dots += 1 }
            j += 1
        }
        if dots >= 2, let signatures = rdSignatures(b[i..<j]) {
            for signature in signatures {
                out.copy(b[copied..<signature.lowerBound])
                out.insert(Redactor.markerBytes)
                copied = signature.upperBound
            }
        }
        i = j
    }
    out.copy(b[copied..<b.endIndex])
}

/// The signature segments of the JWTs in a run of base64url characters and
/// dots, or nil when there are none.
private func rdSignatures(_ run: ArraySlice<UInt8>) -> [Range<Int>]? {
    var parts: [Range<Int>] = []
    var start = run.startIndex
    for k in run.indices where run[k] == UInt8(ascii: ".") {
        parts.append(start..<k)
        start = k + 1
    }
    parts.append(start..<run.endIndex)
    var signatures: [Range<Int>] = []
    var k = 0
    while k + 2 < parts.count {
        if !parts[k].isEmpty, !parts[k + 1].isEmpty, !parts[k + 2].isEmpty, rdIsJWTHeader(run[parts[k]]) {
            signatures.append(parts[k + 2])
            k += 3
        } else {
            k += 1
        }
    }
    return signatures.isEmpty ? nil : signatures
}

/// Base64url that decodes to a JSON object with an "alg" member.
private func rdIsJWTHeader(_ segment: ArraySlice<UInt8>) -> Bool {
    guard segment.count >= 8, segment.count % 4 != 1 else { return false }  // {"alg":1} is 12 chars
    guard let decoded = rdBase64URLDecode(segment) else { return false }
    guard let first = decoded.first(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }),
          first == UInt8(ascii: "{") else { return false }
    guard let json = try? JSON.parse(bytes: decoded) else { return false }
    return json["alg"] != nil
}

private func rdBase64URLDecode(_ s: ArraySlice<UInt8>) -> [UInt8]? {
    var out: [UInt8] = []
    out.reserveCapacity(s.count * 3 / 4)
    var buffer: UInt32 = 0
    var bits = 0
    for c in s {
        let v: UInt32
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "-"): v = 62
        case UInt8(ascii: "_"): v = 63
        default: return nil
        }
        buffer = (buffer << 6) | v
        bits += 6
        if bits >= 8 {
            bits -= 8
            out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
        }
    }
    return out
}

// MARK: - Bytes

func rdIsAlpha(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
func rdIsDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

/// RFC 9110 tchar.
private func rdIsTChar(_ b: UInt8) -> Bool {
    if rdIsAlpha(b) || rdIsDigit(b) { return true }
    switch b {
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
         UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
         UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        return true
    default:
        return false
    }
}

private func rdHexValue(_ b: UInt8) -> UInt8? {
    switch b {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
    default: return nil
    }
}

/// One pass of percent-decoding; nil when nothing was decoded.
func rdPercentDecoded(_ b: [UInt8]) -> [UInt8]? {
    guard b.contains(UInt8(ascii: "%")) else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(b.count)
    var changed = false
    var i = 0
    while i < b.count {
        if b[i] == UInt8(ascii: "%"), i + 2 < b.count, let hi = rdHexValue(b[i + 1]), let lo = rdHexValue(b[i + 2]) {
            out.append(hi << 4 | lo)
            changed = true
            i += 3
        } else {
            out.append(b[i])
            i += 1
        }
    }
    return changed ? out : nil
}

/// NFKC through GNU libunistring; nil when it fails.
private func rdNfkc(_ bytes: [UInt8]) -> [UInt8]? {
    if bytes.isEmpty { return bytes }
    return bytes.withUnsafeBufferPointer { buffer -> [UInt8]? in
        var length = 0
        guard let result = cunistring_nfkc(buffer.baseAddress, buffer.count, &length) else { return nil }
        defer { free(result) }
        return Array(UnsafeBufferPointer(start: result, count: length))
    }
}

private func rdFind(_ haystack: [UInt8], _ needle: [UInt8], from start: Int) -> Int? {
    guard needle.count <= haystack.count else { return nil }
    var i = start
    while i + needle.count <= haystack.count {
        if haystack[i] == needle[0], haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        i += 1
    }
    return nil
}

private func rdContains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    rdFind(haystack, needle, from: 0) != nil
}

func rdIsSchemeByte(_ b: UInt8) -> Bool {
    rdIsAlpha(b) || rdIsDigit(b) || b == UInt8(ascii: "+") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
}

/// Where a URL written in text ends: white space, quotes, angle brackets,
/// backticks, backslashes, braces and control characters.
func rdEndsURLInText(_ b: UInt8) -> Bool {
    switch b {
    case 0...0x20, 0x7F, UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "`"),
         UInt8(ascii: "\\"), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "|"), UInt8(ascii: "^"):
        return true
    default:
        return false
    }
}

func rdIsTrailingPunctuation(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "."), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":"), UInt8(ascii: "!"), UInt8(ascii: "?"):
        return true
    default:
        return false
    }
}

/// The end of a URL found in text without the prose after it: trailing
/// `.,;:!?`, and `)` or `]` that open nowhere in the URL (`(see
/// https://h/x)`). Linear: the brackets are counted once.
func rdTrimmingProse(_ url: ArraySlice<UInt8>, minimum: Int) -> Int {
    var parens = 0, squares = 0
    for c in url {
        switch c {
        case UInt8(ascii: "("): parens += 1
        case UInt8(ascii: ")"): parens -= 1
        case UInt8(ascii: "["): squares += 1
        case UInt8(ascii: "]"): squares -= 1
        default: break
        }
    }
    var e = url.endIndex
    while e > minimum {
        let c = url[e - 1]
        if rdIsTrailingPunctuation(c) {
            e -= 1
        } else if c == UInt8(ascii: ")"), parens < 0 {
            parens += 1
            e -= 1
        } else if c == UInt8(ascii: "]"), squares < 0 {
            squares += 1
            e -= 1
        } else {
            break
        }
    }
    return e
}

/// Where an unquoted value after `name=` or `name:` ends in text.
func rdEndsValueInText(_ b: UInt8) -> Bool {
    switch b {
    case 0...0x20, 0x7F, UInt8(ascii: "&"), UInt8(ascii: ";"), UInt8(ascii: ","), UInt8(ascii: "\""), UInt8(ascii: "'"),
         UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: "`"):
        return true
    default:
        return false
    }
}

/// RFC 9110 token68, the alphabet of bearer tokens and base64.
func rdIsToken68Byte(_ b: UInt8) -> Bool {
    rdIsAlpha(b) || rdIsDigit(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: "_")
        || b == UInt8(ascii: "~") || b == UInt8(ascii: "+") || b == UInt8(ascii: "/") || b == UInt8(ascii: "=")
}

/// At least `minimum` bytes and not a plain word: a digit, a capital after
/// the first letter, or a symbol. So `hunter42`, `dXNlcjpwYXNz` and
/// `a-b_c+d/e` are credentials, `required` and `Authentication` are not.
func rdIsCredentialShaped(_ v: ArraySlice<UInt8>, minimum: Int) -> Bool {
    guard v.count >= minimum, !v.elementsEqual(Redactor.markerBytes) else { return false }
    var first = true
    for c in v {
        if rdIsDigit(c) { return true }
        if !first, c >= UInt8(ascii: "A"), c <= UInt8(ascii: "Z") { return true }
        if !rdIsAlpha(c), c < 0x80 { return true }
        first = false
    }
    return false
}

/// A long random-looking token: 16 bytes or more, credential-shaped, with at
/// least 10 different bytes.
func rdIsHighEntropy(_ v: ArraySlice<UInt8>) -> Bool {
    guard v.count >= 16, rdIsCredentialShaped(v, minimum: 16) else { return false }
    var seen = Set<UInt8>()
    for c in v { seen.insert(c); if seen.count >= 10 { return true } }
    return false
}

/// One pass of percent-decoding that also says where each decoded byte came
/// from (`map[n]` is the range of the original input for decoded byte n);
/// nil when nothing was decoded.
func rdPercentDecodedWithMap(_ b: [UInt8], _ map: [Range<Int>]) -> ([UInt8], [Range<Int>])? {
    guard b.contains(UInt8(ascii: "%")) else { return nil }
    var out: [UInt8] = [], outMap: [Range<Int>] = []
    out.reserveCapacity(b.count)
    outMap.reserveCapacity(b.count)
    var changed = false
    var i = 0
    while i < b.count {
        if b[i] == UInt8(ascii: "%"), i + 2 < b.count, let hi = rdHexValue(b[i + 1]), let lo = rdHexValue(b[i + 2]) {
            out.append(hi << 4 | lo)
            outMap.append(map[i].lowerBound..<map[i + 2].upperBound)
            changed = true
            i += 3
        } else {
            out.append(b[i])
            outMap.append(map[i])
            i += 1
        }
    }
    return changed ? (out, outMap) : nil
}

// MARK: - Memos

/// Verdicts for names already judged: the same few dozen header names, query
/// parameters and JSON keys come back in every entry, and normalising
/// (percent-decoding, NFKC) and matching them was 12-15 % of an import.
/// Keyed by the name's exact bytes and the rule, so two names that
/// normalise alike are still judged each on their own bytes. Bounded: names
/// longer than `maximumNameBytes` are not kept, and when `maximumEntries`
/// are held the table starts again empty (at most about 1 MB).
enum NameVerdicts {
    enum Rule: UInt8 { case jsonKey, word, field }
    struct Verdict: Sendable {
        var normalized: String
        var sensitive: Bool
    }

    static let maximumEntries = 4096
    static let maximumNameBytes = 128

    static func memo() -> RedactionMemo<Verdict> {
        RedactionMemo(maximumEntries: maximumEntries, maximumKeyBytes: maximumNameBytes, threadCached: true)
    }
}

/// What the redactor made of ordinary header values already seen (User-Agent,
/// Accept, Content-Type, Server... repeat in nearly every entry of a log,
/// and scanning them as text was a tenth of an import). Keyed by how the
/// value is redacted (as text or as a URL) and its exact bytes; bounded as
/// `NameVerdicts` is.
enum HeaderValues {
    enum Kind: UInt8 { case text, url }
    static let maximumEntries = 4096
    static let maximumValueBytes = 512

    static func memo() -> RedactionMemo<String> {
        // Dates, request ids and ETags never come back: a value is kept on
        // its second sight, so those do not fill the memo again and again.
        RedactionMemo(maximumEntries: maximumEntries, maximumKeyBytes: maximumValueBytes, admitOnSecondSight: true)
    }
}

/// Ids for `RedactionMemo`s (never reused, so a thread's cache of a memo
/// that is gone is never taken for another's).
enum RedactionMemoIDs {
    private static let counter = Atomic<UInt64>(0)
    static func next() -> UInt64 { counter.add(1, ordering: .relaxed).newValue }
}

/// A bounded memo from (a kind, some bytes) to a value, shared by every
/// thread of a redactor. The value must depend on nothing else (a redactor's
/// extra names never change). Keys longer than `maximumKeyBytes` are not
/// kept; when `maximumEntries` are held the table starts again empty.
final class RedactionMemo<Value: Sendable>: Sendable {
    let maximumEntries: Int
    let maximumKeyBytes: Int
    /// Keep a key only when `store` was asked for it before (its hash was
    /// seen): what comes once never evicts what repeats.
    let admitOnSecondSight: Bool
    /// A power of two, at least twice `maximumEntries` (open addressing).
    private let slotCount: Int

    /// Open addressing over parallel arrays: a probe compares a full hash
    /// and then the bytes in place, copying (and retaining) nothing.
    private struct Table {
        /// 0 marks an empty slot (a hash is never 0).
        var hashes: [UInt64]
        var keys: [[UInt8]]
        var values: [Value?]
        var count = 0
        /// The hashes `store` saw last, direct mapped (admitOnSecondSight).
        var seen: [UInt64]

        init(slots: Int, admitOnSecondSight: Bool) {
            hashes = [UInt64](repeating: 0, count: slots)
            keys = [[UInt8]](repeating: [], count: slots)
            values = [Value?](repeating: nil, count: slots)
            seen = admitOnSecondSight ? [UInt64](repeating: 0, count: slots) : []
        }

        /// The slot holding `key` under `hash`, or the empty slot where it would go.
        func probe(_ hash: UInt64, _ key: UnsafeBufferPointer<UInt8>) -> (slot: Int, found: Bool) {
            let mask = hashes.count - 1
            var i = Int(truncatingIfNeeded: hash) & mask
            while hashes[i] != 0 {
                if hashes[i] == hash, keys[i].withUnsafeBufferPointer({ $0.count == key.count && (key.isEmpty || memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0) }) { return (i, true) }
                i = (i + 1) & mask
            }
            return (i, false)
        }
    }

    private let table: Mutex<Table>

    init(maximumEntries: Int, maximumKeyBytes: Int, admitOnSecondSight: Bool = false, threadCached: Bool = false) {
        self.threadCached = threadCached
        self.maximumEntries = maximumEntries
        self.maximumKeyBytes = maximumKeyBytes
        self.admitOnSecondSight = admitOnSecondSight
        var slots = 1
        while slots < 2 * maximumEntries { slots <<= 1 }
        slotCount = slots
        table = Mutex(Table(slots: slots, admitOnSecondSight: admitOnSecondSight))
    }

    /// FNV-1a over the kind and the bytes, mixed; never 0.
    private static func hash(_ kind: UInt8, _ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(kind)
        for b in key { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return (h ^ (h >> 29)) | 1
    }

    /// `read` of the value kept for `key`, or nil when none is. The
    /// thread's own recent hits are asked first: threads redacting at once
    /// (the proxy's connections) all ask for the same few names, and queued
    /// on the table's lock for them (a tenth of the proxy's speed on JSON).
    func lookup<R>(_ kind: UInt8, _ key: UnsafeBufferPointer<UInt8>, _ read: (borrowing Value) -> R) -> R? {
        guard key.count <= maximumKeyBytes else { return nil }
        let h = RedactionMemo.hash(kind, key)
        // Long keys (header values) are many and seldom asked for by several threads at once.
        let hits = threadCached && key.count <= ThreadHits.keyBytes ? ThreadHits.of(self) : nil
        if let value = hits?.find(h, key) { return read(value) }
        let found: Value? = table.withLock { t in
            let (i, found) = t.probe(h, key)
            return found ? t.values[i] : nil
        }
        guard let found else { return nil }
        hits?.keep(h, key, found)
        return read(found)
    }

    /// Each thread keeps its recent hits (`ThreadHits`): for names, which
    /// every thread asks for; header values are many and seldom shared.
    private let threadCached: Bool

    /// Tells this memo from others in a thread's `ThreadHits`.
    private let id = RedactionMemoIDs.next()

    /// A thread's recent hits of one memo: direct mapped, no lock (only its
    /// thread touches it), keys of up to `keyBytes` held in place (keeping
    /// one allocates nothing). Every value is the table's, so a hit is as
    /// true as the table (a value depends on its key alone).
    private final class ThreadHits {
        static var slots: Int { 256 }
        static var keyBytes: Int { 32 }
        private var hashes = [UInt64](repeating: 0, count: slots)
        private var lengths = [Int](repeating: 0, count: slots)
        private var keys = [UInt8](repeating: 0, count: slots * keyBytes)
        private var values = [Value?](repeating: nil, count: slots)

        static func of(_ memo: RedactionMemo) -> ThreadHits {
            let box = RedactionThreadLocal.box()
            if let hits = box.caches[memo.id] { return unsafeDowncast(hits, to: ThreadHits.self) }
            let hits = ThreadHits()
            box.add(hits, for: memo.id)
            return hits
        }

        func find(_ hash: UInt64, _ key: UnsafeBufferPointer<UInt8>) -> Value? {
            let i = Int(truncatingIfNeeded: hash >> 32) & (Self.slots - 1)
            guard hashes[i] == hash, lengths[i] == key.count else { return nil }
            let same = key.isEmpty || keys.withUnsafeBufferPointer { memcmp($0.baseAddress! + i * Self.keyBytes, key.baseAddress!, key.count) == 0 }
            return same ? values[i] : nil
        }

        func keep(_ hash: UInt64, _ key: UnsafeBufferPointer<UInt8>, _ value: Value) {
            guard key.count <= Self.keyBytes else { return }
            let i = Int(truncatingIfNeeded: hash >> 32) & (Self.slots - 1)
            hashes[i] = hash
            lengths[i] = key.count
            if let source = key.baseAddress {
                keys.withUnsafeMutableBufferPointer { ($0.baseAddress! + i * Self.keyBytes).update(from: source, count: key.count) }
            }
            values[i] = value
        }
    }

    func store(_ kind: UInt8, _ key: UnsafeBufferPointer<UInt8>, _ value: Value) {
        guard key.count <= maximumKeyBytes else { return }
        let h = RedactionMemo.hash(kind, key)
        let slots = slotCount
        let limit = maximumEntries
        let admit = admitOnSecondSight
        table.withLock { t in
            if admit {
                let s = Int(truncatingIfNeeded: h >> 7) & (slots - 1)
                guard t.seen[s] == h else { t.seen[s] = h; return }
            }
            if t.count >= limit { t = Table(slots: slots, admitOnSecondSight: admit) }
            let (i, found) = t.probe(h, key)
            // Found: another thread got there first.
            guard !found else { return }
            t.hashes[i] = h
            t.keys[i] = Array(key)
            t.values[i] = value
            t.count += 1
        }
    }

    var count: Int { table.withLock { $0.count } }
}
