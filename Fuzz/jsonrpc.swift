// JSON-RPC requests (PincerControlServer/Request.swift, compiled into this
// target): one line as the control server reads it, then every params accessor.
import PincerControl
import PincerJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    switch Request.parse(Array(UnsafeBufferPointer(start: data, count: size))) {
    case .success(let request):
        for (name, _) in request.params.members {
            _ = try? request.params.string(name)
            _ = try? request.params.stringArray(name)
            _ = try? request.params.int(name)
        }
        _ = ControlProtocol.response(id: request.id.json, result: .null).serialized()
    case .failure(let rejection):
        _ = ControlProtocol.error(id: rejection.id, rejection.error.code, rejection.error.message).serialized()
    }
    return 0
}
