// Layout dumps in JSON (A11yAudit): what reads must write and read back.
import A11yAudit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let screen = try? LayoutJSON.read(bytes) else { return 0 }
    do { _ = try LayoutJSON.read(LayoutJSON.write(screen).serializedBytes()) } catch { fatalError("written layout JSON does not read: \(error)") }
    return 0
}
