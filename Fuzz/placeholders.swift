// The placeholder scanner and check (PseudoL10n), in every escape style and
// grammar; the input's first line is the source, the rest the translation.
import PseudoL10n

private let styles: [EscapeStyle] = [.none, .backslash, .xml, .android]
private let grammars: [PlaceholderCheck.Grammar] = [.any, .c, .python, .pythonBrace, .literal]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    let source = String(parts[0]), translation = parts.count > 1 ? String(parts[1]) : source
    for style in styles {
        _ = PlaceholderScanner(style: style).pieces(text)
        for grammar in grammars {
            _ = PlaceholderCheck.compare(source: source, translation: translation, style: style, grammar: grammar, relaxed: size % 2 == 0)
        }
    }
    return 0
}
