// XML (PincerXML): the strict reader, with and without text.
import PincerXML

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let document = try? XMLReader.parse(bytes) {
        _ = document.position(of: size)
    }
    _ = try? XMLReader.parse(bytes, keepText: false)
    return 0
}
