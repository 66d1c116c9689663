import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Logs an app's URLSession traffic into the Pincer network logger.
///
///     let recorder = NetworkRecorder(service: host.service(id: NetworkRecorder.serviceID))!
///     let session = URLSession(configuration: .pincerLogged(base: .default, recorder: recorder))
///
/// The returned configuration is a copy of `base` whose `protocolClasses`
/// start with a capture protocol. Every http(s) data task of a session made
/// from it is sent with libcurl (the library URLSession itself uses on
/// Linux), set up as URLSession sets it up and with `base`'s additional
/// headers, cookies and timeout, so the server receives what it would without
/// capture and the app receives what the server returned (`CurlTransport`
/// lists the details, `CaptureFidelityTests` holds it to a plain URLSession).
/// Each hop of a redirect chain is its own log entry; the app gets the final
/// response. Authentication challenges stay with the app's session.
///
/// Limits (URLSession on Linux): only data tasks are captured. Upload and
/// download tasks fail at once with an error in `errorDomain`
/// (`uploadTaskUnsupported`, `downloadTaskUnsupported`); nothing is sent or
/// recorded for them. A suspended task that is resumed starts over. Bodies
/// are held in memory whole, both ways. Responses are not served from or
/// stored in the URL cache. A 307/308 resends the body (URLSession on Linux
/// sends an empty one).
///
/// Recording runs on the recorder's serial queue, off the request's path;
/// `NetworkRecorder.flush()` waits for it. Each logged configuration keeps a
/// libcurl thread and its connections until `stopCapturing(_:)`, which also
/// flushes; stop before
/// the host that published the recorder's service shuts down.
public enum PincerNetworkCapture {
    /// The domain of the errors the capture code itself reports.
    public static let errorDomain = "PincerNetworkCapture"

    public enum ErrorCode: Int, Sendable {
        /// An upload task: its body never reaches a URLProtocol on Linux.
        case uploadTaskUnsupported = 1
        /// A download task: URLSession on Linux crashes finishing one through a URLProtocol.
        case downloadTaskUnsupported = 2
        /// Neither a data, upload nor download task.
        case unsupportedTask = 3
        /// The request's `httpBodyStream` failed while being read.
        case unreadableBodyStream = 4
        /// `stopCapturing` was called for the configuration while a task was starting.
        case captureStopped = 5
    }

    /// A copy of `base` that records every request into the network logger.
    public static func configuration(base: URLSessionConfiguration = .default,
                                     recorder: NetworkRecorder) -> URLSessionConfiguration {
        configuration(base: base, stages: [RecordingStage(recorder: recorder), InterceptionStage(recorder: recorder)])
    }

    /// A copy of `base` whose http(s) data tasks run through `stages` (in
    /// order) and then libcurl, set up from `base`. Redirects
    /// are followed outside the stages: each hop runs through all of them.
    public static func configuration(base: URLSessionConfiguration = .default,
                                     stages: [any CaptureStage]) -> URLSessionConfiguration {
        let others = (base.protocolClasses ?? []).filter { !($0 is CaptureURLProtocolBase.Type) }
        let protocolClass = CaptureRegistry.shared.register(CaptureRuntime(stages: stages, base: base))
        let outer = base.copy() as! URLSessionConfiguration
        outer.protocolClasses = [protocolClass] + others
        return outer
    }

    /// Stops capturing for sessions made from `configuration` (or from a
    /// session's copy of it): their requests then go to the network unseen
    /// and unrecorded, and transfers in flight are cancelled. Returns false
    /// when `configuration` is not a capturing one.
    @discardableResult
    public static func stopCapturing(_ configuration: URLSessionConfiguration) -> Bool {
        var stopped = false
        for case let protocolClass as CaptureURLProtocolBase.Type in configuration.protocolClasses ?? [] {
            if let runtime = CaptureRegistry.shared.remove(protocolClass) {
                runtime.transport.invalidate()
                // Recording runs on a queue: let it reach the log while the
                // service is surely still there.
                for case let stage as RecordingStage in runtime.pipeline.stages { stage.recorder.flush() }
                stopped = true
            }
        }
        return stopped
    }

    static func error(_ code: ErrorCode, _ message: String) -> NSError {
        NSError(domain: errorDomain, code: code.rawValue, userInfo: [NSLocalizedDescriptionKey: message])
    }
}

extension URLSessionConfiguration {
    /// A copy of `base` that records every request into the network logger:
    /// `URLSession(configuration: .pincerLogged(base: .default, recorder: recorder))`.
    /// See `PincerNetworkCapture`.
    public static func pincerLogged(base: URLSessionConfiguration = .default,
                                    recorder: NetworkRecorder) -> URLSessionConfiguration {
        PincerNetworkCapture.configuration(base: base, recorder: recorder)
    }
}
