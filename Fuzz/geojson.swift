// GeoJSON and waypoint lists (GeoRoutes): routes read must write and read back.
import GeoRoutes

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? RouteFormats.parseWaypointList(String(decoding: bytes, as: UTF8.self))
    guard let routes = try? RouteFormats.readGeoJSON(bytes), !routes.isEmpty else { return 0 }
    do { _ = try RouteFormats.readGeoJSON(RouteFormats.writeGeoJSON(routes)) } catch { fatalError("written GeoJSON does not read: \(error)") }
    return 0
}
