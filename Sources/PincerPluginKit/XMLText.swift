/// Text for XML and SVG documents that plugins write (pictures, charts,
/// GPX). Characters XML 1.0 cannot contain (controls other than tab, line
/// feed and carriage return; U+FFFE, U+FFFF) become U+FFFD.
public enum XMLText {
    /// Text escaped for element content and attributes alike: every
    /// markup character, quotes included, becomes a reference; white space
    /// is kept as it is.
    public static func escape(_ text: String) -> String {
        escape(text) { scalar in
            switch scalar {
            case "\"": "&quot;"
            case "'": "&apos;"
            default: nil
            }
        }
    }

    /// Text escaped for round trips through an XML reader: in content a
    /// carriage return is written as a reference (line-end handling would
    /// turn it into a line feed); in a double-quoted attribute so are line
    /// feeds and tabs (attribute normalisation would turn them into spaces).
    public static func escape(_ text: String, attribute: Bool) -> String {
        escape(text) { scalar in
            switch scalar {
            case "\r": "&#13;"
            case "\"" where attribute: "&quot;"
            case "\n" where attribute: "&#10;"
            case "\t" where attribute: "&#9;"
            default: nil
            }
        }
    }

    /// `&`, `<` and `>` always; `extra` decides the rest.
    private static func escape(_ text: String, extra: (Unicode.Scalar) -> String?) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default:
                if let reference = extra(scalar) {
                    out += reference
                } else if (scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r")
                            || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
