import Foundation
import RecordStore
import ZoneCore

/// Reads a daemon's push stream (server-sent events over a chunked response) on its own thread
/// and yields the notifications it carries.
enum EventStreamReader {
    private static let log = Logger(component: "push-reader")

    /// Connects, sends the request, waits for the stream to be ready, then reads in the background.
    static func open(endpoint: Endpoint, request: [UInt8]) async throws -> AsyncStream<PushNotification> {
        let conn: HTTPClientConnection
        do { conn = try HTTPClientConnection(endpoint: endpoint) } catch {
            throw StoreError(.serviceUnavailable, "cannot reach the store at \(endpoint): \(error)")
        }
        let (stream, continuation) = AsyncStream<PushNotification>.makeStream(bufferingPolicy: .bufferingNewest(256))
        continuation.onTermination = { _ in conn.shutdownBoth() }
        let ready: Void = try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, Error>) in
            let thread = Thread {
                var events = ServerSentEvents()
                var signalled = false
                func fail(_ error: Error) {
                    if !signalled { signalled = true; started.resume(throwing: error) }
                    continuation.finish()
                }
                do {
                    try conn.sendAll(request)
                    guard case .streamHead(let head) = try conn.nextStep(timeoutMilliseconds: 10_000) else {
                        throw StoreError(.internalError, "the push endpoint did not answer with an event stream")
                    }
                    guard head.status == 200 else {
                        throw StoreError(.notAuthenticated, "the push endpoint answered \(head.status)")
                    }
                    while true {
                        // The server sends a keep-alive comment every 15 s; a minute of silence is a dead stream.
                        let step = try conn.nextStep(timeoutMilliseconds: 60_000)
                        guard case .chunk(let bytes) = step else { break }
                        for event in events.feed(bytes) {
                            if event.isReady, !signalled { signalled = true; started.resume() }
                            guard let note = event.notification else { continue }
                            if log.isEnabled(.debug) {
                                log.debug("push read", ["id": "\(note.notificationID)",
                                                        "mono": "\(Stopwatch.monotonicNanoseconds() / 1000)"])
                            }
                            continuation.yield(note)
                        }
                    }
                    continuation.finish()
                } catch {
                    fail(error)
                }
                conn.close()
            }
            thread.name = "zonertc-push-reader"
            thread.start()
        }
        _ = ready
        return stream
    }
}

/// Splits a server-sent event stream into events (WHATWG HTML §9.2 event stream format, the
/// subset we send: comment lines, `event:` and `data:`).
struct ServerSentEvents {
    struct Event {
        var name = ""
        var data = ""
        var comment = ""

        var isReady: Bool { comment == " ready" || comment == "ready" }
        var notification: PushNotification? {
            guard name == "notification", let o = try? WireFormat.parseObject(Array(data.utf8)) else { return nil }
            return WireFormat.decodeNotification(o)
        }
    }

    private var pending: [UInt8] = []

    mutating func feed(_ bytes: [UInt8]) -> [Event] {
        pending.append(contentsOf: bytes)
        var events: [Event] = []
        while let end = findBlankLine() {
            let block = String(decoding: pending[0..<end], as: UTF8.self)
            pending.removeFirst(end + 2)
            var event = Event()
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") { event.comment = String(line.dropFirst()) }
                else if line.hasPrefix("event:") { event.name = String(line.dropFirst(6)).trimmingSpaces }
                else if line.hasPrefix("data:") {
                    if !event.data.isEmpty { event.data += "\n" }
                    event.data += String(line.dropFirst(5)).trimmingSpaces
                }
            }
            events.append(event)
        }
        return events
    }

    private func findBlankLine() -> Int? {
        guard pending.count >= 2 else { return nil }
        for i in 0..<(pending.count - 1) where pending[i] == 10 && pending[i + 1] == 10 { return i }
        return nil
    }
}
