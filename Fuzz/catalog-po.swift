// The gettext .po catalog reader (PseudoL10n): read, then rewrite every value.
import PseudoL10n

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let catalog = try? Catalog(bytes: Array(UnsafeBufferPointer(start: data, count: size)), format: .po, table: "Fuzz") else { return 0 }
    _ = catalog.rewritten(locale: "en-XA") { "[" + $0.raw + "]" }
    return 0
}
