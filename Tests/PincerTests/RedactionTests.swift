import Foundation
import XCTest
@testable import NetworkLog

final class RedactionTests: XCTestCase {
    let r = Redactor()
    let m = Redactor.marker

    // A real HS256 JWT (jwt.io's example) and its parts.
    let jwtHead = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    let jwtBody = "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    let jwtSig = "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    var jwt: String { "\(jwtHead).\(jwtBody).\(jwtSig)" }
    var jwtRedacted: String { "\(jwtHead).\(jwtBody).[REDACTED]" }

    func h(_ name: String, _ value: String) -> Header { Header(name, value) }

    func headerValue(_ name: String, _ value: String, _ redactor: Redactor? = nil) -> String {
        (redactor ?? r).headers([h(name, value)])[0].value
    }

    func stored(_ body: String, _ type: String?, file: StaticString = #filePath, line: UInt = #line) -> String? {
        switch r.body(Array(body.utf8), contentType: type) {
        case .stored(let bytes): return String(decoding: bytes, as: UTF8.self)
        default:
            XCTFail("expected stored bytes", file: file, line: line)
            return nil
        }
    }

    func withheldReason(_ body: [UInt8], _ type: String?, file: StaticString = #filePath, line: UInt = #line) -> String? {
        if case .withheld(let reason) = r.body(body, contentType: type) { return reason }
        XCTFail("expected the body to be withheld", file: file, line: line)
        return nil
    }

    // MARK: - Names

    func testNormalize() {
        XCTAssertEqual(Redactor.normalize("X-API-Key"), "xapikey")
        XCTAssertEqual(Redactor.normalize("api_key"), "apikey")
        XCTAssertEqual(Redactor.normalize("API%5FKEY"), "apikey")
        XCTAssertEqual(Redactor.normalize("API%255FKEY"), "apikey")
        XCTAssertEqual(Redactor.normalize("ＡＰＩ＿ＫＥＹ"), "apikey")
        XCTAssertEqual(Redactor.normalize("X-Api-Key"), "xapikey")
        XCTAssertEqual(Redactor.normalize("api.key"), "apikey")
        // Percent-encoded fullwidth capitals: decoded after lowercasing, NFKC gives ASCII capitals.
        XCTAssertEqual(Redactor.normalize("%EF%BC%A1PI_KEY"), "apikey")
        XCTAssertEqual(Redactor.normalize("%41PI_KEY"), "apikey")
        // Four rounds of decoding, not five.
        XCTAssertEqual(Redactor.normalize("API%2525255FKEY"), "apikey")
        XCTAssertEqual(Redactor.normalize("API%252525255FKEY"), "api5fkey")
        // Invalid escapes and invalid UTF-8 survive.
        XCTAssertEqual(Redactor.normalize("a%zzb%FFc%"), "azzbc")
        XCTAssertEqual(Redactor.normalize(""), "")
    }

    func testSensitiveNames() {
        let yes = [
            "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-API-Key", "password", "passwd",
            "user_password", "secret", "client_secret", "api_key", "apikey", "token", "access_token",
            "refresh_token", "id_token", "auth", "x-auth", "oauth", "basic_auth", "auth_token", "authKey",
            "credentials", "session", "sessionid", "PHPSESSID", "JSESSIONID", "user_session", "csrftoken",
            "X-CSRF-Token", "_xsrf", "XSRF-TOKEN", "private_key", "X-Auth-Token", "connect.sid", "sid", "pwd",
            "mysql_pwd", "X-Amz-Signature", "X-Amz-Security-Token", "oauth_verifier", "authorization_code",
            "API%5FKEY", "API%255FKEY", "ＡＰＩ＿ＫＥＹ", "X-Api-Key", "api.key", "Ocp-Apim-Subscription-Key",
        ]
        for name in yes { XCTAssertTrue(r.isSensitive(name), name) }
        let no = [
            "author", "authors", "authority", "Authenticated", "WWW-Authenticate", "unauthorized", "authType",
            "oauth_callback_url", "oauthCallbackUrl", "authorization_endpoint", "session_count", "cookie_consent",
            "max_tokens", "prompt_tokens", "token_type", "Content-Type", "Accept", "id", "name", "key", "code",
            "username", "email", "description", "", "--",
        ]
        for name in no { XCTAssertFalse(r.isSensitive(name), name) }
    }

    func testExtraNames() {
        let custom = Redactor(extraNames: ["X-Tenant-PIN", "max_tokens"])
        XCTAssertTrue(custom.isSensitive("x_tenant_pin"))
        XCTAssertTrue(custom.isSensitive("X%2DTenant%2DPin"))
        XCTAssertFalse(r.isSensitive("x_tenant_pin"))
        // Extra names are exact names, and beat the allowlist.
        XCTAssertFalse(custom.isSensitive("x_tenant_pin_hint"))
        XCTAssertTrue(custom.isSensitive("max_tokens"))
        XCTAssertTrue(custom.isSensitive("password"))
        XCTAssertEqual(custom.url("https://h/?x-tenant-pin=1234&a=b"), "https://h/?x-tenant-pin=\(m)&a=b")
    }

    // MARK: - Headers

    func testAuthorizationKeepsScheme() {
        XCTAssertEqual(headerValue("Authorization", "Bearer abc.def"), "Bearer \(m)")
        XCTAssertEqual(headerValue("authorization", "Basic dXNlcjpwYXNz"), "Basic \(m)")
        XCTAssertEqual(headerValue("Proxy-Authorization", "Basic  dXNlcjpwYXNz"), "Basic  \(m)")
        XCTAssertEqual(headerValue("Authorization", "Digest username=\"u\", response=\"x\""), "Digest \(m)")
        // No scheme, or an unknown first word that may be half of the secret.
        XCTAssertEqual(headerValue("Authorization", "sk_live_123"), m)
        XCTAssertEqual(headerValue("Authorization", "sk_live_123 456"), m)
        XCTAssertEqual(headerValue("Authorization", "Bearer"), m)
        XCTAssertEqual(headerValue("Authorization", ""), m)
    }

    func testSensitiveHeaders() {
        let input = [
            h("X-API-Key", "k-123"), h("X-Auth-Token", "t"), h("Accept", "application/json"),
            h("X-Csrf-Token", "c"), h("Content-Type", "text/plain; charset=utf-8"), h("X-Api-Key", "again"),
        ]
        let out = r.headers(input)
        XCTAssertEqual(out.map(\.name), input.map(\.name))
        XCTAssertEqual(out.map(\.value), [m, m, "application/json", m, "text/plain; charset=utf-8", m])
    }

    func testCookieHeader() {
        XCTAssertEqual(headerValue("Cookie", "theme=dark; sessionid=xyz"), "theme=\(m); sessionid=\(m)")
        XCTAssertEqual(headerValue("cookie", "a=1;b=;c"), "a=\(m);b=\(m);\(m)")
        XCTAssertEqual(headerValue("Cookie", "  a=\"quoted;\" "), "  a=\(m);\(m) ")
    }

    func testSetCookieKeepsAttributes() {
        XCTAssertEqual(
            headerValue("Set-Cookie", "sessionid=abc123; Path=/; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Max-Age=3600; Domain=example.com; Secure; HttpOnly; SameSite=Lax"),
            "sessionid=\(m); Path=/; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Max-Age=3600; Domain=example.com; Secure; HttpOnly; SameSite=Lax")
        // Folded Set-Cookies (URLSession joins them with commas).
        XCTAssertEqual(
            headerValue("Set-Cookie", "a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Path=/, b=2; HttpOnly"),
            "a=\(m); Expires=Wed, 21 Oct 2015 07:28:00 GMT; Path=/, b=\(m); HttpOnly")
        // Unknown attributes may be a cookie in disguise: their values go.
        XCTAssertEqual(headerValue("Set-Cookie", "a=1; Foo=bar; path=/a"), "a=\(m); Foo=\(m); path=/a")
    }

    func testHeaderJWTAndURLs() {
        XCTAssertEqual(headerValue("X-Debug", "id \(jwt) end"), "id \(jwtRedacted) end")
        XCTAssertEqual(headerValue("Location", "https://u:p@h/cb?code=1&access_token=x#y"),
                       "https://u:\(m)@h/cb?code=1&access_token=\(m)#y")
        XCTAssertEqual(headerValue("Referer", "https://h/?q=1"), "https://h/?q=1")
        // A sensitive header is redacted whole, JWT or not.
        XCTAssertEqual(headerValue("X-Id-Token", jwt), m)
    }

    // MARK: - URLs

    func testQueryParameters() {
        XCTAssertEqual(r.url("https://api.example.com/v1/items?limit=10&api_key=abc123&sort=asc#top"),
                       "https://api.example.com/v1/items?limit=10&api_key=\(m)&sort=asc#top")
        XCTAssertEqual(r.url("https://h/p?API%5FKEY=1&API%255FKEY=2&%EF%BC%A1%EF%BC%B0%EF%BC%A9%EF%BC%BF%EF%BC%AB%EF%BC%A5%EF%BC%B9=3&X-Api-Key=4&api.key=5&x=6"),
                       "https://h/p?API%5FKEY=\(m)&API%255FKEY=\(m)&%EF%BC%A1%EF%BC%B0%EF%BC%A9%EF%BC%BF%EF%BC%AB%EF%BC%A5%EF%BC%B9=\(m)&X-Api-Key=\(m)&api.key=\(m)&x=6")
        XCTAssertEqual(r.url("https://h/p?ＡＰＩ＿ＫＥＹ=secret&q=ｗ"), "https://h/p?ＡＰＩ＿ＫＥＹ=\(m)&q=ｗ")
        // Odd shapes stay byte for byte.
        for untouched in ["https://h/p?&&a&=b&c==d&", "https://h", "https://h/", "/relative?q=1", "not a url",
                          "https://h/p?token", "https://[::1]:8080/p?q=%zz", "https://h/a.b.c?x=a.b.c"] {
            XCTAssertEqual(r.url(untouched), untouched)
        }
        XCTAssertEqual(r.url("/relative?password=x"), "/relative?password=\(m)")
        XCTAssertEqual(r.url("https://h/?token=&a=1"), "https://h/?token=\(m)&a=1")
        XCTAssertEqual(r.url("https://h/?token==x=y&a=1"), "https://h/?token=\(m)&a=1")
    }

    func testSemicolonSeparatedParameters() {
        XCTAssertEqual(r.url("https://h/?a=1;token=x;b=2&c=3"), "https://h/?a=1;token=\(m)&c=3")
        XCTAssertEqual(r.url("https://h/?token=ab;cd&c=3"), "https://h/?token=\(m)&c=3")
    }

    func testFragmentParameters() {
        XCTAssertEqual(r.url("https://app/cb#access_token=xyz&token_type=bearer&state=s"),
                       "https://app/cb#access_token=\(m)&token_type=bearer&state=s")
        XCTAssertEqual(r.url("https://app/#/route?x=1&token=abc"), "https://app/#/route?x=1&token=\(m)")
    }

    func testCombiningMarkAfterEquals() {
        // U+0301 after '=' would merge with it into one Character.
        XCTAssertEqual(r.url("https://h/?token=\u{301}abc&q=\u{301}x"), "https://h/?token=\(m)&q=\u{301}x")
        XCTAssertEqual(r.url("https://h/?q=e\u{301}&a=b"), "https://h/?q=e\u{301}&a=b")
    }

    func testUserinfo() {
        XCTAssertEqual(r.url("https://user:pa:ss@example.com:8443/p?q=1"), "https://user:\(m)@example.com:8443/p?q=1")
        XCTAssertEqual(r.url("https://ghp_TOKEN@github.com/o/r.git"), "https://\(m)@github.com/o/r.git")
        XCTAssertEqual(r.url("ftp://a:b@c@host/"), "ftp://a:\(m)@host/")
        XCTAssertEqual(r.url("https://user:@h/"), "https://user:\(m)@h/")
        // '@' outside the authority is not userinfo.
        XCTAssertEqual(r.url("https://h/p@q?e=a@b"), "https://h/p@q?e=a@b")
    }

    func testJWTInURL() {
        XCTAssertEqual(r.url("https://h/verify/\(jwt)?id=\(jwt)&x=1"), "https://h/verify/\(jwtRedacted)?id=\(jwtRedacted)&x=1")
        XCTAssertEqual(r.url("https://h/?jwt=\(jwt)"), "https://h/?jwt=\(m)")
    }

    // MARK: - JWTs

    func testJWTDetection() {
        // No "alg" in the header, or not JSON, or not three segments: untouched.
        let noAlg = Data("{\"typ\":\"JWT\"}".utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
        for untouched in ["\(noAlg).\(jwtBody).\(jwtSig)", "\(jwtHead).\(jwtBody)", "\(jwtHead)..\(jwtSig)",
                          "www.example.com", "1.2.3", "abc.def.ghi", "\(jwtHead).\(jwtBody)."] {
            XCTAssertEqual(headerValue("X-Value", untouched), untouched)
        }
        // Header with whitespace and "alg" not first still counts.
        let spaced = Data("{ \"typ\": \"JWT\", \"alg\": \"none\" }".utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
        XCTAssertEqual(headerValue("X-Value", "\(spaced).\(jwtBody).sig,x"), "\(spaced).\(jwtBody).\(m),x")
        // Two JWTs in one value.
        XCTAssertEqual(headerValue("X-Value", "\(jwt) \(jwt)"), "\(jwtRedacted) \(jwtRedacted)")
    }

    // MARK: - Form bodies

    func testFormBody() {
        let type = "application/x-www-form-urlencoded; charset=UTF-8"
        XCTAssertEqual(stored("username=alice&password=hunter2&remember=on", type),
                       "username=alice&password=\(m)&remember=on")
        XCTAssertEqual(stored("client_id=app&client_secret=s3cr3t&grant_type=refresh_token&refresh_token=rt", type),
                       "client_id=app&client_secret=\(m)&grant_type=refresh_token&refresh_token=\(m)")
        XCTAssertEqual(stored("API%5FKEY=1&api+key=2&q=a+b%20c", type), "API%5FKEY=\(m)&api+key=\(m)&q=a+b%20c")
        XCTAssertEqual(stored("token=\u{301}abc&note=\u{301}x&id=\(jwt)", type),
                       "token=\(m)&note=\u{301}x&id=\(jwtRedacted)")
    }

    func testFormBodyInvalidUTF8KeptOutsideValues() {
        let bytes: [UInt8] = Array("a=".utf8) + [0xFF, 0xFE] + Array("&pass=".utf8) + [0xC3] + Array("&b=1".utf8)
        let out = r.body(bytes, contentType: "application/x-www-form-urlencoded")
        XCTAssertEqual(out, .stored(Array("a=".utf8) + [0xFF, 0xFE] + Array("&pass=[REDACTED]&b=1".utf8)))
    }

    // MARK: - JSON bodies

    func testJSONKeysAtAnyDepth() {
        let input = """
        {"user":{"name":"a","password":"p","profile":{"apiKey":12.50,"tags":["x"]}},\
        "items":[{"id":1,"token":{"nested":[1,2]}},{"id":2,"token":null},{"id":3,"Token":[true]}],\
        "secret":false,"n":1.0,"e":1E+3,"s":"plain"}
        """
        XCTAssertEqual(stored(input, "application/json"), """
        {"user":{"name":"a","password":"[REDACTED]","profile":{"apiKey":"[REDACTED]","tags":["x"]}},\
        "items":[{"id":1,"token":"[REDACTED]"},{"id":2,"token":"[REDACTED]"},{"id":3,"Token":"[REDACTED]"}],\
        "secret":"[REDACTED]","n":1.0,"e":1E+3,"s":"plain"}
        """)
    }

    func testJSONFormattingKeptByteForByte() {
        let input = "\u{FEFF} \t{\r\n  \"b\" :\t1.0 ,\"a\":[ 1 , -0.0e0 ,\"\\u00e9\\/\" ],\n\"pass\\u0077ord\"  :  { \"x\" : 1 } ,\"z\":\"e\u{301}\"\n}\r\n"
        let expected = "\u{FEFF} \t{\r\n  \"b\" :\t1.0 ,\"a\":[ 1 , -0.0e0 ,\"\\u00e9\\/\" ],\n\"pass\\u0077ord\"  :  \"[REDACTED]\" ,\"z\":\"e\u{301}\"\n}\r\n"
        XCTAssertEqual(stored(input, "application/json; charset=utf-8"), expected)
        // Nothing sensitive: the very same bytes.
        let plain = "[ {\"a\" :  1e5, \"b\":\"\\\"q\\\"\"}\t,\n 12345678901234567890 ]"
        XCTAssertEqual(stored(plain, "application/json"), plain)
    }

    func testJSONKeyFormsAndFalsePositives() {
        let input = #"{"API%5FKEY":1,"ＡＰＩ＿ＫＥＹ":2,"X-Api-Key":3,"api.key":4,"author":"x","authority":"y","oauth_callback_url":"z","max_tokens":5,"\u0041PI_KEY":6}"#
        XCTAssertEqual(stored(input, "application/json"),
                       #"{"API%5FKEY":"[REDACTED]","ＡＰＩ＿ＫＥＹ":"[REDACTED]","X-Api-Key":"[REDACTED]","api.key":"[REDACTED]","author":"x","authority":"y","oauth_callback_url":"z","max_tokens":5,"\u0041PI_KEY":"[REDACTED]"}"#)
    }

    func testJSONTypes() {
        XCTAssertEqual(stored(#"{"token":"t"}"#, "application/vnd.api+json"), #"{"token":"[REDACTED]"}"#)
        XCTAssertEqual(stored(#"{"token":"t"}"#, "TEXT/JSON"), #"{"token":"[REDACTED]"}"#)
        XCTAssertEqual(stored(#"{"token":"t"}"#, "application/problem+json; charset=utf-8"), #"{"token":"[REDACTED]"}"#)
        // Not JSON by type: stored as is.
        XCTAssertEqual(stored(#"{"token":"t"}"#, "text/plain"), #"{"token":"t"}"#)
        XCTAssertEqual(stored("<p>password=1</p>", "text/html"), "<p>password=1</p>")
        XCTAssertEqual(r.body([0x89, 0x50, 0x4E, 0x47], contentType: "image/png"), .stored([0x89, 0x50, 0x4E, 0x47]))
        XCTAssertEqual(r.body([0, 1, 2], contentType: "application/octet-stream"), .stored([0, 1, 2]))
        XCTAssertEqual(r.body([], contentType: "application/json"), BodyPayload.none)
    }

    func testJSONStringJWT() {
        XCTAssertEqual(stored("{\"id\":\"\(jwt)\",\"m\":\"Bearer \(jwt)\"}", "application/json"),
                       "{\"id\":\"\(jwtRedacted)\",\"m\":\"Bearer \(jwtRedacted)\"}")
        // With an escape in the string, the string is re-quoted.
        XCTAssertEqual(stored("{\"m\":\"\\t\(jwt)\\/\"}", "application/json"),
                       "{\"m\":\"\\t\(jwtRedacted)/\"}")
        XCTAssertEqual(stored("[\"\(jwt)\"]", "application/json"), "[\"\(jwtRedacted)\"]")
    }

    func nested(_ depth: Int, leaf: String = "1") -> String {
        String(repeating: "{\"a\":", count: depth - 1) + "{\"password\":\(leaf)}" + String(repeating: "}", count: depth - 1)
    }

    func testDepthLimit() {
        XCTAssertEqual(Redactor.maxJSONDepth, 64)
        XCTAssertEqual(stored(nested(64), "application/json"), nested(64, leaf: "\"[REDACTED]\""))
        XCTAssertEqual(withheldReason(Array(nested(65).utf8), "application/json"), "JSON nested deeper than 64 levels")
        let arrays64 = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        XCTAssertEqual(stored(arrays64, "application/json"), arrays64)
        let arrays65 = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        XCTAssertNotNil(withheldReason(Array(arrays65.utf8), "application/json"))
        // Deeper than the parser's own limit: still withheld, not crashed.
        let arrays600 = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        XCTAssertEqual(withheldReason(Array(arrays600.utf8), "application/json"), "JSON nested deeper than 64 levels")
        // Depth inside a redacted value still counts.
        XCTAssertNotNil(withheldReason(Array(("{\"token\":" + arrays65 + "}").utf8), "application/json"))
    }

    func testDuplicateKeysWithheld() {
        XCTAssertEqual(withheldReason(Array(#"{"a":{"id":1,"id":2}}"#.utf8), "application/json"),
                       "duplicate key \"id\" in a JSON object at depth 2")
        XCTAssertEqual(withheldReason(Array(#"[{"x":1},{"password":1,"pass\u0077ord":2}]"#.utf8), "application/json"),
                       "duplicate key \"password\" in a JSON object at depth 2")
        XCTAssertEqual(withheldReason(Array(#"{"token":{"k":1,"k":2}}"#.utf8), "application/json"),
                       "duplicate key \"k\" in a JSON object at depth 2")
        // Same key in different objects is fine.
        XCTAssertEqual(stored(#"[{"id":1},{"id":2}]"#, "application/json"), #"[{"id":1},{"id":2}]"#)
    }

    func testInvalidJSONWithheldWithoutLeaking() {
        for bad in [#"{"password": hunter2}"#, #"{"a":1,}"#, "{", #"{"a":1} x"#, "NaN", #"{'a':1}"#] {
            guard let reason = withheldReason(Array(bad.utf8), "application/json") else { continue }
            XCTAssertTrue(reason.hasPrefix("invalid JSON"), reason)
            XCTAssertFalse(reason.contains("hunter2"), reason)
        }
        XCTAssertNotNil(withheldReason([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], "application/json"))
    }

    func testMultipartWithheld() {
        let body = "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--\r\n"
        XCTAssertEqual(withheldReason(Array(body.utf8), "multipart/form-data; boundary=b"),
                       "multipart/form-data bodies are not checked for secrets")
        XCTAssertNotNil(withheldReason(Array(body.utf8), "multipart/mixed; boundary=b"))
    }

    func testNoContentTypeSniffing() {
        XCTAssertEqual(stored(#"{"token":"t"}"#, nil), #"{"token":"[REDACTED]"}"#)
        XCTAssertEqual(stored("a=1&password=2", nil), "a=1&password=\(m)")
        XCTAssertEqual(stored("hello password=2 world", nil), "hello password=2 world")
        XCTAssertNotNil(withheldReason(Array("[not json".utf8), nil))
    }
}
