// Base64 (RFC 4648) without Foundation: the standard alphabet with padding
// (HAR bodies, cURL exports, PNGs inside SVG, blobs in JSON) and the
// URL-safe alphabet without padding (opaque cursors on a command line).

public enum Base64 {
    public enum Alphabet: Sendable {
        case standard, urlSafe
    }

    private static let standardTable = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSafeTable = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// 0...63 for alphabet bytes, 0xFE for '=', 0xFD for ASCII whitespace, 0xFF otherwise.
    private static func decodeTable(_ alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        table[Int(UInt8(ascii: "="))] = 0xFE
        for c in [UInt8(ascii: " "), 0x09, 0x0A, 0x0B, 0x0C, 0x0D] { table[Int(c)] = 0xFD }
        return table
    }
    private static let standardDecode = decodeTable(standardTable)
    private static let urlSafeDecode = decodeTable(urlSafeTable)

    /// Encodes `bytes` without line breaks; padded with the standard
    /// alphabet, unpadded with the URL-safe one.
    public static func encode(_ bytes: some Collection<UInt8>, alphabet: Alphabet = .standard) -> String {
        let padded = alphabet == .standard
        let table = padded ? standardTable : urlSafeTable
        let input = Array(bytes)
        let rest = input.count % 3
        let count = input.count / 3 * 4 + (rest == 0 ? 0 : padded ? 4 : rest + 1)
        return String(unsafeUninitializedCapacity: count) { out in
            input.withUnsafeBufferPointer { input in
                table.withUnsafeBufferPointer { t in
                    var i = 0, o = 0
                    let whole = input.count - rest
                    while i < whole {
                        let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                        out[o] = t[Int(v >> 18)]
                        out[o + 1] = t[Int(v >> 12 & 63)]
                        out[o + 2] = t[Int(v >> 6 & 63)]
                        out[o + 3] = t[Int(v & 63)]
                        i += 3
                        o += 4
                    }
                    if rest > 0 {
                        let v = UInt32(input[i]) << 16 | (rest == 2 ? UInt32(input[i + 1]) << 8 : 0)
                        out[o] = t[Int(v >> 18)]
                        out[o + 1] = t[Int(v >> 12 & 63)]
                        if rest == 2 { out[o + 2] = t[Int(v >> 6 & 63)] }
                        if padded {
                            if rest == 1 { out[o + 2] = UInt8(ascii: "=") }
                            out[o + 3] = UInt8(ascii: "=")
                        }
                    }
                }
            }
            return count
        }
    }

    /// Decodes base64 text. ASCII whitespace (space, tab, CR, LF, VT, FF)
    /// anywhere is ignored, so line-wrapped base64 (MIME, PEM) decodes; the
    /// trailing '=' padding may be missing. Returns nil for any other byte, for
    /// '=' followed by data, for a dangling single character and for too much padding.
    public static func decode(_ text: String, alphabet: Alphabet = .standard) -> [UInt8]? {
        let decodeTable = alphabet == .standard ? standardDecode : urlSafeDecode
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
