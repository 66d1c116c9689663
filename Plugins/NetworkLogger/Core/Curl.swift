// cURL export: one bash command per request, safe to paste.
//
// Shape (continuation lines end in " \"):
//
//     # notes about what the command leaves out, if anything
//     curl -g -X PUT --url 'https://host/path?q=1' \
//       -H 'Accept: */*' \
//       --data-raw 'body'
//
// Quoting: a value is in plain single quotes unless it contains a control
// character, a quote (' or "), '!' or an invisible/bidirectional Unicode
// character; then it is an ANSI-C `$'…'` string in which ', !, \ and those
// characters are escapes (`\x27`, `\x21`, `\\`, `\n`, `\xHH`...). No literal
// `'` or `!` appears inside `$'…'`, so bash's history expansion (interactive
// shells) never sees an unquoted '!'.
//
// - `-g` turns off curl's URL globbing ({} and []); the URL is given with `--url`.
// - Method: nothing for GET without a body and POST with one; `--head` for
//   HEAD; `-X METHOD` otherwise.
// - Headers: one `-H 'Name: value'` each, in order. Left out: Content-Length
//   (curl computes it), Host when it names the URL's own host[:port] (curl
//   sends it; a different Host is kept), HTTP/2 pseudo-headers (":authority"...)
//   and names that are not HTTP tokens (so an `-H` argument never starts with
//   '@' or '<', which would make curl read a file). An empty value is sent as
//   `Name;` (curl's syntax; `Name:` would remove the header). CR, LF and NUL
//   cannot be sent in a header: they become spaces and a comment says so.
// - Bodies: text (valid UTF-8, no NUL, at most 64 KiB) is `--data-raw` (which
//   never reads files, even for values starting with '@'); anything else
//   (NUL bytes, invalid UTF-8, large bodies that would pass the kernel's
//   128 KiB argument limit) is piped:
//   `printf %s 'BASE64' | base64 -d | curl --data-binary @- …`.
//   Without a Content-Type header the command adds `-H 'Content-Type:'` (curl
//   would otherwise send application/x-www-form-urlencoded), and without an
//   Expect header `-H 'Expect:'` (no 100-continue round trip).
// - Bodies the log does not hold (withheld/skipped/dropped): a comment says
//   why and the command sends no body (the method is kept with -X).
import PincerPluginKit
public enum Curl {
    /// The largest body sent inline with `--data-raw`.
    static let inlineBodyLimit = 64 * 1024

    public static func command(for entry: NetworkEntry) -> String {
        var comments: [String] = []
        var lead: [String] = []
        var args: [String] = []
        var pipe: String?

        // Body.
        var bodyArgs: [String] = []
        var sendsBody = false
        switch entry.requestBody.payload {
        case .none:
            break
        case .stored(let bytes):
            sendsBody = true
            if bytes.count <= inlineBodyLimit, !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) {
                bodyArgs = ["--data-raw " + quote(text)]
            } else {
                pipe = "printf %s " + quote(Base64.encode(bytes)) + " | base64 -d | "
                bodyArgs = ["--data-binary @-"]
            }
        case .withheld, .skipped, .dropped:
            let reason = BodyText.missingReason(entry.requestBody.payload) ?? ""
            comments.append("request body not included (\(entry.requestBody.size) bytes, \(reason)): this command sends no body")
        }

        // Method.
        let method = entry.method
        if sendsBody {
            if method != "POST" { lead.append("-X " + word(method)) }
        } else if method == "HEAD" {
            lead.append("--head")
        } else if method != "GET" {
            lead.append("-X " + word(method))
        }
        lead.append("--url " + quote(entry.url))

        // Headers.
        let authority = URLParts(entry.url).map { parts -> String in
            parts.port.map { parts.host + ":\($0)" } ?? parts.host
        }
        var pseudo = 0
        var hasContentType = false, hasExpect = false
        for header in entry.requestHeaders {
            let name = header.name
            let lower = name.lowercased()
            if name.hasPrefix(":") { pseudo += 1; continue }
            guard isToken(name) else {
                comments.append("left out a header whose name is not an HTTP token: " + printable(name))
                continue
            }
            if lower == "content-length" { continue }
            if lower == "host", let authority, header.value.lowercased() == authority { continue }
            if lower == "content-type" { hasContentType = true }
            if lower == "expect" { hasExpect = true }
            var value = header.value
            if value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
                value = String(String.UnicodeScalarView(value.unicodeScalars.map { $0 == "\r" || $0 == "\n" || $0 == "\0" ? " " : $0 }))
                comments.append("header \(name): line breaks and NUL replaced by spaces (HTTP cannot send them)")
            }
            args.append("-H " + quote(value.isEmpty ? name + ";" : name + ": " + value))
        }
        if pseudo > 0 { comments.append("left out \(pseudo) HTTP/2 pseudo-header\(pseudo == 1 ? "" : "s"); curl sets them") }
        if sendsBody {
            if !hasContentType { args.append("-H 'Content-Type:'") }
            if !hasExpect { args.append("-H 'Expect:'") }
        }
        args += bodyArgs

        // Method and URL on the first line, then one option per line.
        var out = ""
        for c in comments { out += "# " + printable(c) + "\n" }
        out += (pipe ?? "") + "curl -g " + lead.joined(separator: " ")
        for arg in args { out += " \\\n  " + arg }
        return out
    }

    /// A bash word for `value`: plain single quotes when that is safe, else
    /// an ANSI-C `$'…'` string (see the file comment). NUL cannot be in a
    /// bash word: it is left out.
    public static func quote(_ value: String) -> String {
        let needsEscapes = value.unicodeScalars.contains { s in
            s.value < 0x20 || s.value == 0x7F || s == "'" || s == "\"" || s == "!" || isInvisible(s)
        }
        if !needsEscapes { return "'" + value + "'" }
        var out = "$'"
        for s in value.unicodeScalars {
            switch s {
            case "\0": continue
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\\": out += "\\\\"
            case "'": out += "\\x27"
            case "!": out += "\\x21"
            default:
                if s.value < 0x20 || s.value == 0x7F || isInvisible(s) {
                    for byte in UTF8.encode(s)! { out += "\\x" + hex2(byte) }
                } else {
                    out.unicodeScalars.append(s)
                }
            }
        }
        return out + "'"
    }

    /// A bare word when `value` is only letters, digits, '-', '_' and '.'
    /// (methods), else `quote(value)`.
    static func word(_ value: String) -> String {
        let bare = !value.isEmpty && value.unicodeScalars.allSatisfy { s in
            s.isASCII && (("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s) || s == "-" || s == "_" || s == ".")
        }
        return bare ? value : quote(value)
    }

    /// C1 controls, zero-width and bidirectional formatting characters, line
    /// and paragraph separators, BOM: they would hide what a pasted command does.
    static func isInvisible(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x80...0x9F, 0xAD, 0x061C, 0x180E, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x206F, 0xFEFF, 0xFFF9...0xFFFB:
            true
        default:
            false
        }
    }

    /// An HTTP token (RFC 9110 tchar+).
    static func isToken(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { b in
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "!#$%&'*+-.^_`|~".utf8.contains(b)
            }
        }
    }

    /// Text for a bash comment: control and invisible characters become '?',
    /// so a comment can never end early and run the rest as a command.
    static func printable(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F || isInvisible($0) ? "?" : $0 }))
    }

    private static func hex2(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String(digits[Int(b >> 4)]) + String(digits[Int(b & 0x0F)])
    }
}
