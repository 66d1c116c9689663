/// Splits a REPL line into words the way a POSIX shell would for simple
/// input: whitespace separates, '…' is literal, "…" allows \" and \\, and
/// a backslash outside quotes escapes the next character.
enum Words {
    struct UnterminatedQuote: Error {}

    static func split(_ line: String) throws(UnterminatedQuote) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for ch in line {
            if escaped {
                current.append(ch)
                escaped = false
                continue
            }
            if let q = quote {
                if ch == q {
                    quote = nil
                } else if ch == "\\" && q == "\"" {
                    escaped = true
                } else {
                    current.append(ch)
                }
                continue
            }
            switch ch {
            case " ", "\t", "\n", "\r":
                if inWord { words.append(current); current = ""; inWord = false }
            case "'", "\"":
                quote = ch
                inWord = true
            case "\\":
                escaped = true
                inWord = true
            default:
                current.append(ch)
                inWord = true
            }
        }
        if quote != nil || escaped { throw UnterminatedQuote() }
        if inWord { words.append(current) }
        return words
    }

    /// Quotes a word so `split` gives it back unchanged.
    static func quote(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { s in
            s.properties.isAlphabetic || ("0"..."9").contains(s) || "-_.,:/=+@%*".unicodeScalars.contains(s)
        }
        if plain { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.range(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }

    func padded(to width: Int) -> String {
        let n = count
        return n >= width ? self : self + String(repeating: " ", count: width - n)
    }
}

extension Substring {
    func range(of target: String) -> Range<Substring.Index>? {
        guard !target.isEmpty, count >= target.count else { return nil }
        var i = startIndex
        while i < endIndex {
            if self[i...].hasPrefix(target) { return i..<index(i, offsetBy: target.count) }
            i = index(after: i)
        }
        return nil
    }
}
