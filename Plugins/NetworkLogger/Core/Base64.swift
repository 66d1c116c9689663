// Base64 (RFC 4648, standard alphabet) without Foundation, for HAR bodies
// and the cURL export of binary request bodies.

public enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 0...63 for alphabet bytes, 0xFE for '=', 0xFD for ASCII whitespace, 0xFF otherwise.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        table[Int(UInt8(ascii: "="))] = 0xFE
        for c in [UInt8(ascii: " "), 0x09, 0x0A, 0x0B, 0x0C, 0x0D] { table[Int(c)] = 0xFD }
        return table
    }()

    /// Encodes `bytes` with padding and without line breaks.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next()
            let b2 = b1 == nil ? nil : iterator.next()
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)])
            if let b1 {
                out.append(alphabet[Int((b1 & 0x0F) << 2 | (b2 ?? 0) >> 6)])
            } else {
                out.append(UInt8(ascii: "="))
            }
            if let b2 {
                out.append(alphabet[Int(b2 & 0x3F)])
            } else {
                out.append(UInt8(ascii: "="))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64 text. ASCII whitespace (space, tab, CR, LF, VT, FF)
    /// anywhere is ignored, so line-wrapped base64 (MIME, PEM) decodes; the
    /// trailing '=' padding may be missing. Returns nil for any other byte, for
    /// '=' followed by data, for a dangling single character and for too much padding.
    public static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count / 4 * 3)
        var quad: UInt32 = 0
        var count = 0      // sextets in `quad`
        var padding = 0    // '=' seen
        for byte in text.utf8 {
            let value = decodeTable[Int(byte)]
            switch value {
            case 0xFD:
                continue
            case 0xFE:
                padding += 1
                continue
            case 0xFF:
                return nil
            default:
                if padding > 0 { return nil }
                quad = quad << 6 | UInt32(value)
                count += 1
                if count == 4 {
                    out.append(UInt8(truncatingIfNeeded: quad >> 16))
                    out.append(UInt8(truncatingIfNeeded: quad >> 8))
                    out.append(UInt8(truncatingIfNeeded: quad))
                    quad = 0
                    count = 0
                }
            }
        }
        switch count {
        case 0:
            guard padding == 0 else { return nil }
        case 2:
            guard padding == 0 || padding == 2 else { return nil }
            out.append(UInt8(truncatingIfNeeded: quad >> 4))
        case 3:
            guard padding <= 1 else { return nil }
            out.append(UInt8(truncatingIfNeeded: quad >> 10))
            out.append(UInt8(truncatingIfNeeded: quad >> 2))
        default:
            return nil
        }
        return out
    }
}
