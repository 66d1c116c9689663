// HAR import (NetworkLog): every entry read must also export and read back.
import NetworkLog

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let result = try? HARImport.read(Array(UnsafeBufferPointer(start: data, count: size))) else { return 0 }
    let document = HARExport.document(result.entries, creator: (name: "fuzz", version: "1"))
    do { _ = try HARImport.read(document) } catch { fatalError("an exported HAR does not import: \(error)") }
    return 0
}
