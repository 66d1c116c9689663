// HAR import (NetworkLog): a file is refused as not JSON exactly when
// PincerJSON's whole-text check refuses it (the import checks it piece by
// piece), and every entry read must also export and read back.
import NetworkLog

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let valid = (try? bytes.withUnsafeBufferPointer { b throws(JSONSyntaxError) in try JSON.validate(bytes: b) }) != nil
    let result: HARImportResult
    do throws(HARImportError) {
        result = try HARImport.read(bytes)
    } catch {
        if case .notJSON(let syntax) = error, valid { fatalError("valid JSON refused as not JSON: \(syntax)") }
        if case .notJSON = error {} else if !valid { fatalError("invalid JSON refused for another reason: \(error)") }
        return 0
    }
    if !valid { fatalError("invalid JSON imported") }
    let document = HARExport.document(result.entries, creator: (name: "fuzz", version: "1"))
    do { _ = try HARImport.read(document) } catch { fatalError("an exported HAR does not import: \(error)") }
    return 0
}
