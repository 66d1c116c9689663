// Layout dumps in XML (A11yAudit): uiautomator and Appium iOS, as detected and forced.
import A11yAudit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? LayoutImport.read(bytes)
    _ = try? LayoutImport.uiautomator(bytes, scale: 2)
    _ = try? LayoutImport.appiumIOS(bytes, scale: 3)
    return 0
}
