// The gettext .po catalog reader (PseudoL10n): read, then rewrite every value,
// whole (Catalog) and streamed (CatalogRewrite), which must agree: the same
// error, or the same bytes.
import PseudoL10n

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let mark: (CatalogString) -> String = { "[" + $0.raw + "]" }
    let whole: Result<Catalog, CatalogError> = Result { () throws(CatalogError) in try Catalog(bytes: bytes, format: .po, table: "Fuzz") }
    let streamed: Result<CatalogRewrite, CatalogError> = Result { () throws(CatalogError) in
        try CatalogRewrite(bytes: bytes, format: .po, table: "Fuzz")
    }
    switch (whole, streamed) {
    case (.success(let catalog), .success(let rewrite)):
        let expected = catalog.rewritten(locale: "en-XA", transform: mark)
        var pieces: [UInt8] = []
        do { try rewrite.write(locale: "en-XA", transform: mark, to: { pieces += $0 }) } catch { preconditionFailure("\(error)") }
        precondition(pieces == expected && rewrite.stringCount == catalog.strings.count, "streamed rewrite differs")
    case (.failure(let a), .failure(let b)):
        precondition(a == b, "errors differ: \(a) / \(b)")
    default:
        preconditionFailure("one read, the other did not: \(whole) / \(streamed)")
    }
    return 0
}
