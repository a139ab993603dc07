import Foundation

import ZoneCore

/// One server-side HTTP/1.1 connection as a sans-I/O machine (`SansIOMachine`): bytes, answers
/// and time in; requests to dispatch, bytes to send and closing out; `nextDeadline` for the read
/// and idle timeouts. One request at a time: the next is parsed only after the previous one's
/// response went out.
public struct HTTPServerConnection: Sendable {
    /// What happened to the connection.
    public enum Input: Sendable {
        /// Bytes arrived.
        case received(ArraySlice<UInt8>)
        /// The response to the dispatched request is ready.
        case respond(HTTPResponse)
        /// The client shut down its sending side (a half-close, `shutdown(SHUT_WR)`) but may
        /// still read. A request it completed is still answered, then the connection closes; a
        /// request cut short can never complete, so the connection closes at once. A push
        /// stream goes on.
        case peerFinishedSending
        /// The dispatched request becomes a stream: send the head now, then `streamChunk`s.
        case startStream(status: Int, headers: HTTPHeaders)
        /// One chunk of the streamed response.
        case streamChunk([UInt8])
        /// Ends the streamed response and the connection.
        case endStream
        /// `nextDeadline` was reached (calling earlier is harmless).
        case timer
        /// The peer closed its side.
        case peerClosed
    }

    /// Timeouts and limits.
    public struct Limits: Sendable {
        /// From the first byte of a request to its complete head and body.
        public var requestReadTimeout: Duration = .seconds(10)
        /// Between requests on a kept-alive connection.
        public var idleTimeout: Duration = .seconds(60)
        public var maxHeadBytes = 16 * 1024
        public var maxBodyBytes = 4 * 1024 * 1024

        public init() {}
    }

    /// What the driver must do.
    public enum Action: Sendable, Hashable {
        /// Handle this request; answer with `.respond` (or `.startStream`).
        case dispatch(HTTPRequest)
        /// Send these bytes.
        case send([UInt8])
        /// Close the connection once everything sent has left.
        case close
    }

    enum State: Sendable {
        /// Waiting for (more of) a request; `since` is when its first byte came, or the idle start.
        case reading(since: Instant, midRequest: Bool)
        case awaitingResponse(keepAlive: Bool)
        /// A long-lived streamed response (event stream): no more requests on this connection.
        case streaming
        case closed
    }

    public let limits: Limits
    private var parser: HTTPRequestParser
    private var state: State
    /// The client shut down its sending side: answer what it sent, then close.
    private var inputEnded = false
    private var outputs = OutputQueue<Action>()

    public init(limits: Limits = Limits(), now: Instant) {
        self.limits = limits
        parser = HTTPRequestParser(maxHeadBytes: limits.maxHeadBytes, maxBodyBytes: limits.maxBodyBytes)
        state = .reading(since: now, midRequest: false)
    }

    public var isClosed: Bool { if case .closed = state { return true } else { return false } }

    /// Since when the connection has waited for a request with nothing of one received (a kept-alive
    /// connection between requests, or a new one that has sent nothing); nil while it is busy.
    /// The daemon evicts the longest idle connection when it is full.
    public var idleSince: Instant? {
        if case .reading(let since, false) = state, !inputEnded { return since }
        return nil
    }

    public mutating func handle(_ input: Input, now: Instant) {
        let actions: [Action]
        switch input {
        case .received(let bytes): actions = received(bytes, now: now)
        case .respond(let response): actions = respond(response, now: now)
        case .peerFinishedSending: actions = peerFinishedSending()
        case .startStream(let status, let headers): actions = startStream(status: status, headers: headers)
        case .streamChunk(let bytes): actions = streamChunk(bytes)
        case .endStream: actions = endStream()
        case .timer: actions = timerFired(now: now)
        case .peerClosed:
            state = .closed
            actions = []
        }
        for action in actions { outputs.append(action) }
    }

    public mutating func pollOutput() -> Action? { outputs.pop() }

    /// The read timeout of a request under way, or the idle timeout between requests.
    public var nextDeadline: Instant? {
        guard case .reading(let since, let mid) = state else { return nil }
        return since + (mid ? limits.requestReadTimeout : limits.idleTimeout)
    }

    private mutating func received(_ bytes: ArraySlice<UInt8>, now: Instant) -> [Action] {
        switch state {
        case .closed, .streaming:
            return []
        case .awaitingResponse:
            parser.append(bytes)  // pipelined: parsed after the response
            return []
        case .reading(let since, let mid):
            parser.append(bytes)
            if !mid { state = .reading(since: now, midRequest: true) } else { state = .reading(since: since, midRequest: true) }
            return parseNext(now: now)
        }
    }

    private mutating func respond(_ response: HTTPResponse, now: Instant) -> [Action] {
        guard case .awaitingResponse(let keepAlive) = state else { return [] }
        var actions: [Action] = [.send(response.serialized(keepAlive: keepAlive))]
        if !keepAlive {
            state = .closed
            actions.append(.close)
            return actions
        }
        state = .reading(since: now, midRequest: parser.bufferedBytes > 0)
        actions += parseNext(now: now)
        if inputEnded, case .reading = state {
            // Every request the client sent before its half-close is answered: nothing more can come.
            state = .closed
            actions.append(.close)
        }
        return actions
    }

    private mutating func peerFinishedSending() -> [Action] {
        inputEnded = true
        switch state {
        case .reading:
            // `received` dispatched every complete request already: what is left is incomplete.
            state = .closed
            return [.close]
        case .awaitingResponse, .streaming, .closed:
            return []
        }
    }

    private mutating func startStream(status: Int, headers: HTTPHeaders) -> [Action] {
        guard case .awaitingResponse = state else { return [] }
        state = .streaming
        var head = "HTTP/1.1 \(status) \(HTTPResponse.reason(status))\r\n"
        for f in headers.fields { head += "\(f.name): \(f.value)\r\n" }
        head += "Transfer-Encoding: chunked\r\n\r\n"
        return [.send(Array(head.utf8))]
    }

    private func streamChunk(_ bytes: [UInt8]) -> [Action] {
        guard case .streaming = state, !bytes.isEmpty else { return [] }
        return [.send(httpChunk(bytes))]
    }

    private mutating func endStream() -> [Action] {
        guard case .streaming = state else { return [] }
        state = .closed
        return [.send(httpChunk([])), .close]
    }

    /// A deadline may have passed.
    private mutating func timerFired(now: Instant) -> [Action] {
        guard case .reading(_, let mid) = state, let deadline = nextDeadline, now >= deadline else { return [] }
        if mid { return fail(status: 408, message: "request not complete within \(limits.requestReadTimeout)") }
        state = .closed
        return [.close]
    }

    private mutating func parseNext(now: Instant) -> [Action] {
        do {
            switch try parser.parseStep() {
            case .needMore:
                guard case .reading(let since, _) = state else { return [] }
                let mid = parser.isMidRequest
                state = .reading(since: mid ? since : now, midRequest: mid)
                return []
            case .request(let request):
                state = .awaitingResponse(keepAlive: request.keepAlive)
                return [.dispatch(request)]
            }
        } catch {
            return fail(status: error.status, message: error.message)
        }
    }

    private mutating func fail(status: Int, message: String) -> [Action] {
        state = .closed
        let body = Array(#"{"serverErrorCode":"BAD_REQUEST","reason":\#(JSONString.quoted(message))}"#.utf8)
        return [.send(HTTPResponse.json(status, body).serialized(keepAlive: false)), .close]
    }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension HTTPServerConnection: SansIOMachine {}
