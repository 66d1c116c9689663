import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URLProtocol a logged configuration lists first. It does not send
/// anything itself: it reads the app's request, runs every hop through the
/// configuration's pipeline (stages, then libcurl: `CurlTransport`), follows
/// redirects, and hands the app the final response once.
///
/// Facts of swift-corelibs-foundation (6.3.1) this is built around:
/// - `URLProtocol.registerClass` is only consulted after a configuration's
///   `protocolClasses`, which already handle http(s): this class must be the
///   first entry of the configuration (see `PincerNetworkCapture`).
/// - `client.wasRedirectedTo` is a fatalError: redirects are followed here,
///   each hop through the pipeline, and only the final response is delivered.
/// - `client.didLoad` replaces earlier data for completion handlers: the body
///   is delivered in one call.
/// - Protocol properties do not survive request copies: recursion is avoided
///   by sending through libcurl directly, never through a URLSession.
/// - Download tasks crash in `urlProtocolDidFinishLoading` and an upload
///   task's body never reaches the protocol (`httpBody` is nil): both fail
///   at once with a `PincerNetworkCapture.errorDomain` error. URLSession never
///   asks `canInit(with: URLSessionTask)` (only `canInit(with: URLRequest)`),
///   so they cannot be declined earlier.
/// - `startLoading` runs again on the same instance after suspend/resume: a
///   state guard makes a second call while loading (or after the end) a no-op,
///   and a resume after `stopLoading` starts the exchange over.
/// - Calling the client synchronously from URLSession's own queues traps in
///   libdispatch: the client is called from the pool task that awaited the
///   hop, or (from `startLoading` itself) on this instance's own queue.
class CaptureURLProtocolBase: URLProtocol {
    /// The runtime of the configuration this class belongs to.
    class var runtime: CaptureRuntime? { nil }

    override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        return runtime != nil
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override class func requestIsCacheEquivalent(_ a: URLRequest, to b: URLRequest) -> Bool { a == b }

    private enum State {
        case idle
        case loading(generation: Int, work: Task<Void, Never>?)
        case finished
    }

    private let lock = NSLock()
    private var state = State.idle
    private var generation = 0
    /// The request body, read once (a stream cannot be read again on restart).
    private var readBody: (data: Data?, isStream: Bool)?
    private let clientQueue = DispatchQueue(label: "pincer.capture.client")

    override func startLoading() {
        let generation: Int? = lock.withLock {
            guard case .idle = state else { return nil }
            self.generation += 1
            state = .loading(generation: self.generation, work: nil)
            return self.generation
        }
        guard let generation else { return }

        if let refusal = Self.refusal(for: task) {
            deliver(.failure(CaptureFailure(error: refusal)), generation: generation)
            return
        }
        guard let runtime = Self.runtime else {
            deliver(.failure(CaptureFailure(error: PincerNetworkCapture.error(.captureStopped,
                "network capture was stopped for this configuration"))), generation: generation)
            return
        }
        let request = self.request
        // URLProtocol is not Sendable; this instance's mutable state is
        // guarded by `lock`, and the client is only called on `clientQueue`.
        nonisolated(unsafe) let unsafeSelf = self
        let work = Task {
            await unsafeSelf.run(request, runtime: runtime, generation: generation)
        }
        lock.withLock {
            if case .loading(generation, nil) = state { state = .loading(generation: generation, work: work) }
        }
    }

    override func stopLoading() {
        let work: Task<Void, Never>? = lock.withLock {
            guard case .loading(_, let work) = state else { return nil }
            state = .idle
            return work
        }
        work?.cancel()
    }

    /// Why a task cannot be captured, or nil when it can.
    private static func refusal(for task: URLSessionTask?) -> NSError? {
        switch task {
        case is URLSessionUploadTask:
            return PincerNetworkCapture.error(.uploadTaskUnsupported,
                "upload tasks cannot be captured on Linux (URLSession never hands their body to a URLProtocol); "
                + "use a data task with the body in httpBody or httpBodyStream")
        case is URLSessionDownloadTask:
            return PincerNetworkCapture.error(.downloadTaskUnsupported,
                "download tasks cannot be captured on Linux (URLSession crashes finishing them through a URLProtocol); "
                + "use a data task and write the data yourself")
        case nil, is URLSessionDataTask:
            return nil
        default:
            return PincerNetworkCapture.error(.unsupportedTask, "only data tasks can be captured")
        }
    }

    private func run(_ appRequest: URLRequest, runtime: CaptureRuntime, generation: Int) async {
        let body: (data: Data?, isStream: Bool)
        do {
            body = try requestBody(appRequest)
        } catch {
            deliver(.failure(CaptureFailure(error: error as NSError)), generation: generation)
            return
        }
        var hop = CaptureRequest(urlRequest: appRequest, body: body.data, bodyIsStream: body.isStream,
                                 configurationHeaders: runtime.configurationHeaders)
        while true {
            let outcome = await runtime.pipeline.run(hop)
            if Task.isCancelled { return }
            guard case .response(let response) = outcome, let next = Redirects.follow(hop, after: response) else {
                // On a task of the concurrency pool here, not on a URLSession
                // queue, so the client can be called directly.
                deliverNow(outcome, generation: generation)
                return
            }
            guard next.redirectCount <= Redirects.maximum else {
                let error = NSError(domain: NSURLErrorDomain, code: NSURLErrorHTTPTooManyRedirects,
                                    userInfo: [NSLocalizedDescriptionKey: "too many HTTP redirects",
                                               NSURLErrorFailingURLErrorKey: next.url as Any])
                deliver(.failure(CaptureFailure(error: error)), generation: generation)
                return
            }
            hop = next
        }
    }

    /// The whole body of the app's request: `httpBody`, or `httpBodyStream`
    /// read to its end (once; kept for a restart after suspend/resume).
    private func requestBody(_ request: URLRequest) throws -> (data: Data?, isStream: Bool) {
        if let cached = lock.withLock({ readBody }) { return cached }
        let result: (data: Data?, isStream: Bool)
        if let stream = request.httpBodyStream {
            result = (try Self.readAll(stream), true)
        } else {
            result = (request.httpBody, false)
        }
        lock.withLock { readBody = result }
        return result
    }

    private static func readAll(_ stream: InputStream) throws -> Data {
        if stream.streamStatus == .notOpen { stream.open() }
        defer { stream.close() }
        var data = Data()
        let size = 64 * 1024
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        defer { buffer.deallocate() }
        while true {
            let count = stream.read(buffer, maxLength: size)
            if count > 0 {
                data.append(buffer, count: count)
            } else if count == 0 {
                return data
            } else {
                let reason = stream.streamError.map { "\($0.localizedDescription)" } ?? "read failed"
                throw PincerNetworkCapture.error(.unreadableBodyStream, "the request's httpBodyStream could not be read: \(reason)")
            }
        }
    }

    /// Hands the outcome to the client on this instance's queue, unless the
    /// load was stopped (or restarted) meanwhile.
    private func deliver(_ outcome: CaptureOutcome, generation: Int) {
        nonisolated(unsafe) let unsafeSelf = self
        clientQueue.async {
            unsafeSelf.deliverNow(outcome, generation: generation)
        }
    }

    private func deliverNow(_ outcome: CaptureOutcome, generation: Int) {
        let current: Bool = lock.withLock {
            guard case .loading(generation, _) = state else { return false }
            state = .finished
            return true
        }
        guard current, let client else { return }
        switch outcome {
        case .response(let response):
            client.urlProtocol(self, didReceive: response.response, cacheStoragePolicy: .notAllowed)
            if !response.body.isEmpty {
                client.urlProtocol(self, didLoad: response.body)
            }
            client.urlProtocolDidFinishLoading(self)
        case .failure(let failure):
            client.urlProtocol(self, didFailWithError: failure.error)
        }
    }
}

/// One protocol class per logged configuration: the class is all URLSession
/// hands a protocol, so each configuration gets its own, found by `Slot`.
final class CaptureURLProtocol<Slot: CaptureSlot>: CaptureURLProtocolBase {
    override class var runtime: CaptureRuntime? { CaptureRegistry.shared.runtime(at: Slot.index) }
}

/// What one logged configuration runs: its pipeline and transport.
final class CaptureRuntime: Sendable {
    let pipeline: CapturePipeline
    let transport: CurlTransport
    let configurationHeaders: [HTTPHeader]

    init(stages: [any CaptureStage], base: URLSessionConfiguration) {
        transport = CurlTransport(configuration: base)
        pipeline = CapturePipeline(stages: stages, transport: transport)
        configurationHeaders = (base.httpAdditionalHeaders ?? [:]).compactMap { key, value in
            guard let name = key as? String else { return nil }
            return HTTPHeader(name: name, value: value as? String ?? "\(value)")
        }.sorted { $0.name.lowercased() < $1.name.lowercased() }
    }
}

/// The runtimes of all logged configurations, by slot index (1, 2, ...).
final class CaptureRegistry: @unchecked Sendable {
    static let shared = CaptureRegistry()
    private let lock = NSLock()
    private var runtimes: [Int: CaptureRuntime] = [:]
    private var lastIndex = 0

    /// Registers `runtime`; returns the protocol class that finds it.
    func register(_ runtime: CaptureRuntime) -> CaptureURLProtocolBase.Type {
        let index: Int = lock.withLock {
            lastIndex += 1
            runtimes[lastIndex] = runtime
            return lastIndex
        }
        return CaptureSlots.protocolClass(index: index)
    }

    func runtime(at index: Int) -> CaptureRuntime? { lock.withLock { runtimes[index] } }

    /// Forgets the runtime of `protocolClass`; returns it.
    func remove(_ protocolClass: CaptureURLProtocolBase.Type) -> CaptureRuntime? {
        guard let slotted = protocolClass as? any SlottedProtocol.Type else { return nil }
        let index = slotted.slotIndex
        return lock.withLock { runtimes.removeValue(forKey: index) }
    }
}

/// A type-level number: the generic argument that makes a distinct protocol
/// class for each logged configuration (Swift cannot declare classes at run
/// time, but it can instantiate a generic class with a new argument). The
/// number is written in binary, most significant bit outermost.
protocol CaptureSlot { static var index: Int { get } }
enum SlotOne: CaptureSlot { static var index: Int { 1 } }
enum SlotBit0<High: CaptureSlot>: CaptureSlot { static var index: Int { High.index << 1 } }
enum SlotBit1<High: CaptureSlot>: CaptureSlot { static var index: Int { High.index << 1 | 1 } }

protocol SlottedProtocol { static var slotIndex: Int { get } }
extension CaptureURLProtocol: SlottedProtocol { static var slotIndex: Int { Slot.index } }

enum CaptureSlots {
    /// The protocol class for `index` (>= 1).
    static func protocolClass(index: Int) -> CaptureURLProtocolBase.Type {
        precondition(index >= 1)
        var slot: any CaptureSlot.Type = SlotOne.self
        let bits = Int.bitWidth - index.leadingZeroBitCount
        for shift in stride(from: bits - 2, through: 0, by: -1) {
            slot = appending(slot, bit: (index >> shift) & 1 == 1)
        }
        return protocolClass(slot)
    }

    private static func appending<S: CaptureSlot>(_ slot: S.Type, bit: Bool) -> any CaptureSlot.Type {
        bit ? SlotBit1<S>.self : SlotBit0<S>.self
    }

    private static func protocolClass<S: CaptureSlot>(_ slot: S.Type) -> CaptureURLProtocolBase.Type {
        CaptureURLProtocol<S>.self
    }
}
