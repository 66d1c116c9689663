// GPX (GeoRoutes): routes read must write and read back.
import GeoRoutes

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = ISOTime.parse(String(decoding: bytes.prefix(64), as: UTF8.self))
    guard let (routes, _) = try? RouteFormats.readGPX(bytes), !routes.isEmpty else { return 0 }
    do { _ = try RouteFormats.readGPX(RouteFormats.writeGPX(routes, creator: "fuzz")) } catch { fatalError("written GPX does not read: \(error)") }
    return 0
}
