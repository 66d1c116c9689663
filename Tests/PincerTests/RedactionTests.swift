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
        // Not JSON by type: scanned as text, which finds the same pairs.
        XCTAssertEqual(stored(#"{"token":"t"}"#, "text/plain"), #"{"token":"[REDACTED]"}"#)
        XCTAssertEqual(stored("<p>password=1</p>", "text/html"), "<p>password=[REDACTED]</p>")
        XCTAssertEqual(r.body([0x89, 0x50, 0x4E, 0x47], contentType: "image/png"), .stored([0x89, 0x50, 0x4E, 0x47]))
        XCTAssertEqual(r.body([0, 1, 2], contentType: "application/octet-stream"), .stored([0, 1, 2]))
        XCTAssertEqual(r.body([], contentType: "application/json"), BodyPayload.none)
    }

    func testJSONStringJWT() {
        // A bearer token inside a string goes whole, JWT or not.
        XCTAssertEqual(stored("{\"id\":\"\(jwt)\",\"m\":\"Bearer \(jwt)\"}", "application/json"),
                       "{\"id\":\"\(jwtRedacted)\",\"m\":\"Bearer \(m)\"}")
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
        // Not a form (spaces), so text: the pair is still found.
        XCTAssertEqual(stored("hello password=2 world", nil), "hello password=\(m) world")
        XCTAssertNotNil(withheldReason(Array("[not json".utf8), nil))
    }

    // MARK: - Free text (issue 16)

    func testFreeTextRedactsURLsTokensAndPairs() {
        XCTAssertEqual(r.text("connect to https://ann:pw1@api.example.com/x?token=abc&q=1 failed"),
                       "connect to https://ann:\(m)@api.example.com/x?token=\(m)&q=1 failed")
        XCTAssertEqual(r.text("401 with Authorization: Bearer sk_live_4eC39HqLyjWDarjtT1zdp7dc."),
                       "401 with Authorization: Bearer \(m).")
        XCTAssertEqual(r.text("retry with token=abc123; next"), "retry with token=\(m); next")
        XCTAssertEqual(r.text(#"{"password": "hunter2", "user": "ann"}"#), #"{"password": "\#(m)", "user": "ann"}"#)
        XCTAssertEqual(r.text("password: hunter42 then"), "password: \(m) then")
        XCTAssertEqual(r.text("session token Zx81kq0PaQ7wLm3Vb9Ty was revoked"), "session token \(m) was revoked")
        XCTAssertEqual(r.text("id \(jwt) end"), "id \(jwtRedacted) end")
        XCTAssertEqual(r.text("(see https://h/cb#access_token=xyz)."), "(see https://h/cb#access_token=\(m)).")
        XCTAssertEqual(r.text("X-Api-Key: 9f8e7d6c"), "X-Api-Key: \(m)")
        XCTAssertEqual(r.text("{password: \"hunter42\"}"), "{password: \"\(m)\"}")
    }

    /// Ordinary text, including words that are sensitive names, keeps every byte.
    func testFreeTextFalsePositivesStayLow() {
        let ordinary = [
            "connection refused", "The operation timed out.", "Password: required", "token expired",
            "Bearer tokens are described in RFC 6750.", "Basic authentication failed", "the secret of success",
            "Enter your password to continue", "session ended after 30 minutes", "Not Found",
            "see https://example.com/docs/auth?lang=en#section-2", "a.b.c and www.example.com",
            "key: value", "token: expired.", "version 1.2.3 released on 2024-05-01",
            "SSL error: certificate has expired (code 10)", "Authorization required",
            "résumé naïve 東京 — “quoted”", "max_tokens=100 token_type=bearer",
            #"fetch(u, {credentials: "omit"})"#, #"[{key:"resolveOptions",value:1}]"#,
            "X-Tenant-Key: 9f8e7d6c (the key rule is for field names, not text)",
        ]
        for text in ordinary { XCTAssertEqual(r.text(text), text) }
        let prose = String(repeating: "The quick brown fox jumps over the lazy dog; then it rests. ", count: 200)
        XCTAssertEqual(stored(prose, "text/plain"), prose)
        let html = "<html><body><h1>Sign in</h1><p>Forgot your password? <a href=\"/reset?step=1\">Reset it</a>.</p></body></html>"
        XCTAssertEqual(stored(html, "text/html"), html)
    }

    func testTextBodiesLoseTokensByShape() {
        XCTAssertEqual(stored("your token is \(jwt)\n", "text/plain"), "your token is \(jwtRedacted)\n")
        XCTAssertEqual(stored("Authorization: Bearer abcDEF1234567890xyz\r\nX-Other: 1\r\n", "text/plain; charset=utf-8"),
                       "Authorization: Bearer \(m)\r\nX-Other: 1\r\n")
        XCTAssertEqual(stored("var apiKey = \"AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY\";", "application/javascript"),
                       "var apiKey = \"\(m)\";")
        XCTAssertEqual(stored("user,password\nann,hunter2\n", "text/csv"), "user,password\nann,hunter2\n", "a CSV header names no value")
        // No Content-Type and not a form: text.
        XCTAssertEqual(stored("ok access_token=xyz", nil), "ok access_token=\(m)")
    }


    /// The word scan reads sixteen bytes at a time: it agrees with the byte
    /// by byte definition at every offset, next to every byte that borders
    /// the word bytes' ranges.
    func testWordRunsAgreeWithTheByteDefinition() {
        let alphabet = Array("azAZ09-_.@[`{/:+= \u{7f}".utf8) + [0x00, 0x2f, 0x3a, 0x40, 0x5b, 0x60, 0x7b, 0xc1, 0xda, 0xe1, 0xfa]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let length = Int.random(in: 0..<80, using: &random)
            let wordy = Int.random(in: 0..<length + 1, using: &random)
            var bytes = (0..<length).map { n in n < wordy ? Array("aZ09-_.".utf8).randomElement(using: &random)! : alphabet.randomElement(using: &random)! }
            bytes.shuffle(using: &random)
            bytes.withUnsafeBufferPointer { u in
                for start in 0...u.count {
                    var end = start, dots = 0
                    while end < u.count, rdIsJWTByte(u[end]) { dots += u[end] == UInt8(ascii: ".") ? 1 : 0; end += 1 }
                    let run = Redactor.jwtRun(u, from: start)
                    XCTAssertTrue(run.end == end && run.dots == dots, "\(bytes) from \(start): \(run) against \((end, dots))")
                }
            }
        }
        for offset in 0..<40 {
            let pad = String(repeating: "x", count: offset)
            XCTAssertEqual(stored("\(pad) \(jwt) tail", "text/plain"), "\(pad) \(jwtRedacted) tail")
        }
    }

    /// A text body that needs no change is stored as the same array (the
    /// output defers copying); one that changes anywhere, first byte or
    /// last, comes out whole around the marker.
    func testTextBodyCopiedOnlyWhenItChanges() {
        let line = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-\n".utf8)
        var plain: [UInt8] = []
        while plain.count < 1 << 20 { plain += line }
        guard case .stored(let same) = r.body(plain, contentType: "text/plain") else { return XCTFail("stored") }
        XCTAssertEqual(same, plain)
        XCTAssertEqual(same.withUnsafeBufferPointer { $0.baseAddress }, plain.withUnsafeBufferPointer { $0.baseAddress }, "not copied")

        let text = String(decoding: plain, as: UTF8.self)
        XCTAssertEqual(stored(text + "password=hunter42", "text/plain"), text + "password=\(m)")
        XCTAssertEqual(stored("password=hunter42 " + text, "text/plain"), "password=\(m) " + text)
        XCTAssertEqual(stored(text + "see https://ann:pw@h.example/x " + text, "text/plain"), text + "see https://ann:\(m)@h.example/x " + text)
        guard case .stored(let form) = r.body(Array("a=1&b=2".utf8), contentType: "application/x-www-form-urlencoded") else { return XCTFail("stored") }
        XCTAssertEqual(String(decoding: form, as: UTF8.self), "a=1&b=2")
        guard case .stored(let secretForm) = r.body(Array("a=1&password=2&c=3".utf8), contentType: "application/x-www-form-urlencoded") else {
            return XCTFail("stored")
        }
        XCTAssertEqual(String(decoding: secretForm, as: UTF8.self), "a=1&password=\(m)&c=3")
    }
    func testXMLBodiesAreWithheld() {
        let soap = "<?xml version=\"1.0\"?><Envelope><Password>hunter2</Password></Envelope>"
        for type in ["application/xml", "text/xml; charset=utf-8", "application/soap+xml", nil, "text/plain"] {
            guard let reason = withheldReason(Array(soap.utf8), type) else { continue }
            XCTAssertTrue(reason.contains("XML"), reason)
            XCTAssertFalse(reason.contains("hunter2"))
        }
        XCTAssertNotNil(withheldReason(Array("<a><b secret=\"x\"/></a>".utf8), nil))
    }

    // MARK: - Nested URLs and header names (issue 16)

    func testNestedEncodedURLsAreRedactedAfterDecoding() {
        XCTAssertEqual(r.url("https://id.example/authorize?client_id=app&redirect_uri=https%3A%2F%2Fapp.example%2Fcb%3Ftoken%3Dabc123%26x%3D1&state=s"),
                       "https://id.example/authorize?client_id=app&redirect_uri=https%3A%2F%2Fapp.example%2Fcb%3Ftoken%3D\(m)%26x%3D1&state=s")
        // Doubly encoded, and a password in the nested URL.
        XCTAssertEqual(r.url("https://h/?next=https%253A%252F%252Fu%253Apw%2540h2%252F%253Fapi_key%253DK9&b=2"),
                       "https://h/?next=https%253A%252F%252Fu%253A\(m)%2540h2%252F%253Fapi_key%253D\(m)&b=2")
        // Unencoded nested URL in a fragment.
        XCTAssertEqual(r.url("https://h/#next=https://x/?access_token=t1"), "https://h/#next=https://x/?access_token=\(m)")
        // Nothing to redact: every byte kept, encodings included.
        let plain = "https://h/?redirect_uri=https%3A%2F%2Fapp.example%2Fcb%3Fx%3D1&q=%E2%9C%93+a"
        XCTAssertEqual(r.url(plain), plain)
        // In a form body too.
        XCTAssertEqual(stored("return=https%3A%2F%2Fh%2F%3Fsession_id%3Ds1&a=1", "application/x-www-form-urlencoded"),
                       "return=https%3A%2F%2Fh%2F%3Fsession_id%3D\(m)&a=1")
    }

    func testKeyHeadersAndPairsInOrdinaryHeaders() {
        for name in ["Key", "X-Tenant-Key", "x-functions-key", "X_Master_Key", "X-Client-Token", "X-Signing-Secret", "X-Goog-Api-Key"] {
            XCTAssertEqual(headerValue(name, "v4lue"), m, name)
        }
        for name in ["X-Monkey", "Keyboard-Layout", "Accept", "X-Request-Id"] {
            XCTAssertEqual(headerValue(name, "v4lue"), "v4lue", name)
        }
        XCTAssertEqual(headerValue("X-Debug", "user=ann; password=hunter2; mode=1"), "user=ann; password=\(m); mode=1")
        XCTAssertEqual(headerValue("Link", "<https://h/next?page=2&access_token=t>; rel=\"next\""),
                       "<https://h/next?page=2&access_token=\(m)>; rel=\"next\"")
        XCTAssertTrue(r.isSensitiveField("key"))
        XCTAssertTrue(r.isSensitiveField("licenseKey"))
        XCTAssertFalse(r.isSensitive("key"), "JSON keys keep the narrower rule")
        XCTAssertEqual(r.url("https://maps.example/api?key=AIzaSyAb1&q=x"), "https://maps.example/api?key=\(m)&q=x")
    }

    /// Adversarial shapes stay linear (the scan never goes back over long runs).
    func testTextScanIsLinearOnAdversarialInput() {
        let inputs = [
            "https://h/" + String(repeating: ")", count: 200_000),
            String(repeating: "password:", count: 50_000),
            String(repeating: "token ", count: 100_000) + "Zx81kq0PaQ7wLm3Vb9Ty",
            "password: \"" + String(repeating: "a", count: 300_000),
            String(repeating: "a%25", count: 100_000),
        ]
        let start = Date()
        for text in inputs {
            _ = r.text(text)
            _ = r.url("https://h/?q=" + text)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 20, "a quadratic scan would take minutes")
        XCTAssertEqual(r.text("(see https://h/x?token=t))."), "(see https://h/x?token=\(m))).")
        XCTAssertEqual(r.text("(https://h/w_(x)?token=t)"), "(https://h/w_(x)?token=\(m))")
    }

    /// Redacting twice changes nothing more (restored log files pass again).
    func testRedactionIsIdempotent() {
        let samples = [
            "connect to https://ann:pw1@api.example.com/x?token=abc&q=1 failed", "Bearer sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "password: hunter42", #"{"password": "x"}"#, "session token Zx81kq0PaQ7wLm3Vb9Ty", "id \(jwt)",
            "https://h/?next=https%253A%252F%252Fu%253Apw%2540h2%252F%253Fapi_key%253DK9",
        ]
        for s in samples {
            XCTAssertEqual(r.text(r.text(s)), r.text(s), s)
            XCTAssertEqual(r.url(r.url(s)), r.url(s), s)
        }
    }
}
