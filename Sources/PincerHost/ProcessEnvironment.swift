#if canImport(Glibc)
import Glibc
#endif

/// The process environment as a dictionary, without Foundation: what the
/// shell and an embedding app read their defaults from.
public enum ProcessEnvironment {
    public static func current() -> [String: String] {
        var env: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { env[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            p += 1
        }
        return env
    }
}
