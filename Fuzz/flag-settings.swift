// Feature flag documents (FeatureFlags, compiled into this target): the
// stored state, and an import's overrides read as every flag type.
import PincerPluginKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if case .success(let state) = FlagStore.decode(text) {
        _ = FlagStore.decode(FlagStore.encode(state))
        _ = FlagCommands.exportDocument(state).serialized()
    }
    guard let doc = try? JSON.parse(text) else { return 0 }
    for (key, value) in doc["overrides"]?.objectValue ?? [] {
        _ = FlagKey.check(key)
        for type in FlagType.allCases {
            _ = FlagValue.from(value, as: type)
            if let s = value.stringValue { _ = FlagValue.parse(s, as: type) }
        }
    }
    return 0
}
