import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one hop through a separate URLSession whose configuration does not
/// hold the capture protocol, so captured requests never come back to it
/// (request properties cannot mark them: they do not survive request copies).
/// Redirects are not followed: the 3xx response is returned with its body.
final class SessionTransport: CaptureTransport, @unchecked Sendable {
    private let session: URLSession
    private let delegate: TransportDelegate

    /// `configuration` must not contain the capture protocol.
    init(configuration: URLSessionConfiguration) {
        delegate = TransportDelegate()
        let queue = OperationQueue()
        queue.name = "pincer.capture.transport"
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    func send(_ request: CaptureRequest) async -> CaptureOutcome {
        let load = HopLoad()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CaptureOutcome, Never>) in
                load.start(continuation: continuation, delegate: delegate) { session.dataTask(with: request.requestToSend) }
            }
        } onCancel: {
            load.cancel()
        }
    }

    func invalidate() { session.invalidateAndCancel() }
}

/// One inner data task: collects the response and body, times them, and
/// resumes the waiting hop when the task ends.
final class HopLoad: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var continuation: CheckedContinuation<CaptureOutcome, Never>?
    private var cancelled = false
    private var response: HTTPURLResponse?
    private var body = Data()
    private var sentAt = Date()
    private var headersAt: Date?

    /// Creates and resumes the inner task, unless the hop was cancelled
    /// already: a task cancelled right after `resume` can trap in
    /// URLSession's task registry, so none is made then.
    func start(continuation: CheckedContinuation<CaptureOutcome, Never>, delegate: TransportDelegate,
               makeTask: () -> URLSessionDataTask) {
        func resumeCancelled() {
            let error = NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled,
                                userInfo: [NSLocalizedDescriptionKey: "cancelled"])
            continuation.resume(returning: .failure(CaptureFailure(error: error)))
        }
        guard lock.withLock({ !cancelled }) else { return resumeCancelled() }
        // Made outside the lock: dataTask(with:) syncs onto the session's
        // queue, and a cancel or invalidation waiting there for this lock
        // would deadlock (seen in testSuspendBeforeStartThenResume).
        let task = makeTask()
        let proceed: Bool = lock.withLock {
            guard !cancelled else { return false }
            self.task = task
            self.continuation = continuation
            self.sentAt = Date()
            return true
        }
        guard proceed else { return resumeCancelled() }
        delegate.register(self, for: task)
        task.resume()
    }

    /// Cancels the inner task. Called from `stopLoading`, on the outer
    /// task's work queue: `URLSessionTask.cancel` syncs onto a queue of the
    /// same hierarchy, which traps there, so the cancel hops to another queue.
    func cancel() {
        let task: URLSessionDataTask? = lock.withLock {
            cancelled = true
            return self.task
        }
        guard let task else { return }
        DispatchQueue.global().async { task.cancel() }
    }

    func received(_ response: URLResponse) {
        lock.withLock {
            self.response = response as? HTTPURLResponse
            if headersAt == nil { headersAt = Date() }
            body = Data()
        }
    }

    func received(_ data: Data) {
        lock.withLock { body.append(data) }
    }

    /// `response` is the inner task's own: URLSession does not hand a 3xx
    /// response without a Location to the delegate, only to the task.
    func completed(error: Error?, response taskResponse: URLResponse?) {
        let end = Date()
        let (continuation, outcome): (CheckedContinuation<CaptureOutcome, Never>?, CaptureOutcome) = lock.withLock {
            let headers = headersAt ?? end
            let timings = CaptureTimings(wait: headers.timeIntervalSince(sentAt) * 1000,
                                         receive: end.timeIntervalSince(headers) * 1000)
            let outcome: CaptureOutcome
            if let error {
                outcome = .failure(CaptureFailure(error: error as NSError,
                                                  timings: CaptureTimings(wait: headersAt == nil ? -1 : timings.wait,
                                                                          receive: headersAt == nil ? -1 : timings.receive)))
            } else if let response = response ?? (taskResponse as? HTTPURLResponse) {
                outcome = .response(CaptureResponse(response: response, body: body, timings: timings))
            } else {
                outcome = .failure(CaptureFailure(error: NSError(domain: NSURLErrorDomain, code: NSURLErrorBadServerResponse,
                                                                 userInfo: [NSLocalizedDescriptionKey: "no HTTP response"])))
            }
            let c = self.continuation
            self.continuation = nil
            self.task = nil
            return (c, outcome)
        }
        continuation?.resume(returning: outcome)
    }
}

/// The inner session's delegate: routes callbacks to the load of each task,
/// declines every redirect (the 3xx then arrives as the response).
final class TransportDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var loads: [Int: HopLoad] = [:]

    func register(_ load: HopLoad, for task: URLSessionTask) {
        lock.withLock { loads[task.taskIdentifier] = load }
    }

    private func load(for task: URLSessionTask, remove: Bool = false) -> HopLoad? {
        lock.withLock { remove ? loads.removeValue(forKey: task.taskIdentifier) : loads[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        load(for: dataTask)?.received(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        load(for: dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        load(for: task, remove: true)?.completed(error: error, response: task.response)
    }
}
