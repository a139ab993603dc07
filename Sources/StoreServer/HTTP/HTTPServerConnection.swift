import Foundation

import ZoneCore

/// One server-side HTTP/1.1 connection as a sans-I/O machine (`SansIOMachine`): bytes, answers
/// and time in; requests to dispatch, bytes to send and closing out; `nextDeadline` for the read
/// and idle timeouts. One request at a time: the next is parsed only after the previous one's
/// response went out.
///
/// A request whose body the `streaming` limit lets through above the in-memory limit (the asset
/// upload route) is first shown by its head alone (`.checkStreamedHead`): nothing of its body is
/// read or kept until the driver answers `.headChecked`, so a request its head already condemns (a
/// forged, used or lapsed upload URL) is refused at once and costs no disk. Admitted, its body is
/// handed out as it arrives: `.beginSpool`, `.spool` for each part, then `.dispatchSpooled`;
/// whenever such a request cannot complete (an error, a timeout, a half-close) `.discardSpool`
/// comes first, so nothing of it is left behind.
public struct HTTPServerConnection: Sendable {
    /// What happened to the connection.
    public enum Input: Sendable {
        /// Bytes arrived.
        case received(ArraySlice<UInt8>)
        /// The response to the dispatched request is ready.
        case respond(HTTPResponse)
        /// The driver's verdict on a `.checkStreamedHead`: nil admits the body (it is spooled as it
        /// arrives); a response refuses it, and is sent at once, with the connection closed after it.
        case headChecked(HTTPResponse?)
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
        /// Which requests may stream a larger body, and how large (nil: none). A streamed body's
        /// read timeout runs from the last bytes that arrived, not from the request's first.
        public var streaming: HTTPRequestParser.Streaming?

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
        /// A request whose `length`-byte body would be streamed has arrived as far as its head: decide
        /// from the head alone whether to take the body, and answer `.headChecked`. Until then no
        /// more of the request is parsed, so the driver may stop reading the connection meanwhile.
        case checkStreamedHead(HTTPRequest, length: Int)
        /// A request whose body is streamed begins: keep somewhere to put its `length` bytes.
        case beginSpool(HTTPRequest, length: Int)
        /// The next bytes of the streamed body.
        case spool([UInt8])
        /// The streamed body is complete: handle the request of `.beginSpool`; answer with `.respond`.
        case dispatchSpooled
        /// The streamed request will not complete: remove what was kept of it.
        case discardSpool
    }

    enum State: Sendable {
        /// Waiting for (more of) a request; `since` is when its first byte came, or the idle start.
        case reading(since: Instant, midRequest: Bool)
        /// The head of a streamed request is being checked (`.checkStreamedHead`); bytes that arrive
        /// meanwhile wait in the parser's buffer.
        case checkingHead(HTTPRequest, length: Int)
        /// A streamed body arriving; `since` is when its last bytes came.
        case receivingBody(since: Instant, keepAlive: Bool)
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
        parser = HTTPRequestParser(maxHeadBytes: limits.maxHeadBytes, maxBodyBytes: limits.maxBodyBytes,
                                   streaming: limits.streaming)
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

    /// Actions go straight into `outputs`, in order, rather than through an array per input: the
    /// daemon's event loop feeds every request, response and push event through here.
    public mutating func handle(_ input: Input, now: Instant) {
        switch input {
        case .received(let bytes): received(bytes, now: now)
        case .respond(let response): respond(response, now: now)
        case .headChecked(let refusal): headChecked(refusal, now: now)
        case .peerFinishedSending: peerFinishedSending()
        case .startStream(let status, let headers): startStream(status: status, headers: headers)
        case .streamChunk(let bytes): streamChunk(bytes)
        case .endStream: endStream()
        case .timer: timerFired(now: now)
        case .peerClosed:
            if isReceivingBody { outputs.append(.discardSpool) }
            state = .closed
        }
    }

    public mutating func pollOutput() -> Action? { outputs.pop() }

    /// The read timeout of a request under way, or the idle timeout between requests.
    public var nextDeadline: Instant? {
        switch state {
        case .reading(let since, let mid): return since + (mid ? limits.requestReadTimeout : limits.idleTimeout)
        case .receivingBody(let since, _): return since + limits.requestReadTimeout
        case .checkingHead, .awaitingResponse, .streaming, .closed: return nil
        }
    }

    private var isReceivingBody: Bool {
        if case .receivingBody = state { return true }
        return false
    }

    private mutating func received(_ bytes: ArraySlice<UInt8>, now: Instant) {
        switch state {
        case .closed, .streaming:
            return
        case .awaitingResponse, .checkingHead:
            parser.append(bytes)  // pipelined, or a body not yet admitted: parsed later
        case .reading(let since, let mid):
            parser.append(bytes)
            if !mid { state = .reading(since: now, midRequest: true) } else { state = .reading(since: since, midRequest: true) }
            parseNext(now: now)
        case .receivingBody(_, let keepAlive):
            parser.append(bytes)
            state = .receivingBody(since: now, keepAlive: keepAlive)
            parseNext(now: now)
        }
    }

    private mutating func respond(_ response: HTTPResponse, now: Instant) {
        guard case .awaitingResponse(let keepAlive) = state else { return }
        for part in response.parts(keepAlive: keepAlive) { outputs.append(.send(part)) }
        if !keepAlive {
            state = .closed
            outputs.append(.close)
            return
        }
        state = .reading(since: now, midRequest: parser.bufferedBytes > 0)
        parseNext(now: now)
        if inputEnded, case .reading = state {
            // Every request the client sent before its half-close is answered: nothing more can come.
            state = .closed
            outputs.append(.close)
        }
    }

    private mutating func headChecked(_ refusal: HTTPResponse?, now: Instant) {
        guard case .checkingHead(let request, let length) = state else { return }
        if let refusal {
            // The body is never read: the connection cannot be reused, and closing is what tells the client.
            state = .closed
            outputs.append(.send(refusal.serialized(keepAlive: false)))
            outputs.append(.close)
            return
        }
        state = .receivingBody(since: now, keepAlive: request.keepAlive)
        if let expect = request.headers["Expect"], expect.caseInsensitiveEquals("100-continue") {
            // RFC 9110 §10.1.1: a client that waits before sending the body is told to go on.
            outputs.append(.send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)))
        }
        outputs.append(.beginSpool(request, length: length))
        parseNext(now: now)
    }

    private mutating func peerFinishedSending() {
        inputEnded = true
        switch state {
        case .checkingHead:
            // The body cannot complete: nothing of it was kept.
            state = .closed
            outputs.append(.close)
        case .reading:
            // `received` dispatched every complete request already: what is left is incomplete.
            state = .closed
            outputs.append(.close)
        case .receivingBody:
            state = .closed
            outputs.append(.discardSpool)
            outputs.append(.close)
        case .awaitingResponse, .streaming, .closed:
            return
        }
    }

    private mutating func startStream(status: Int, headers: HTTPHeaders) {
        guard case .awaitingResponse = state else { return }
        state = .streaming
        var head = "HTTP/1.1 \(status) \(HTTPResponse.reason(status))\r\n"
        for f in headers.fields { head += "\(f.name): \(f.value)\r\n" }
        head += "Transfer-Encoding: chunked\r\n\r\n"
        outputs.append(.send(Array(head.utf8)))
    }

    private mutating func streamChunk(_ bytes: [UInt8]) {
        guard case .streaming = state, !bytes.isEmpty else { return }
        outputs.append(.send(httpChunk(bytes)))
    }

    private mutating func endStream() {
        guard case .streaming = state else { return }
        state = .closed
        outputs.append(.send(httpChunk([])))
        outputs.append(.close)
    }

    /// A deadline may have passed.
    private mutating func timerFired(now: Instant) {
        guard let deadline = nextDeadline, now >= deadline else { return }
        if isReceivingBody {
            fail(status: 408, message: "no bytes of the body for \(limits.requestReadTimeout)")
            return
        }
        guard case .reading(_, let mid) = state else { return }
        if mid {
            fail(status: 408, message: "request not complete within \(limits.requestReadTimeout)")
            return
        }
        state = .closed
        outputs.append(.close)
    }

    /// Parses what the buffer holds, up to one complete request.
    private mutating func parseNext(now: Instant) {
        do {
            while true {
                switch try parser.parseStep() {
                case .needMore:
                    if case .reading(let since, _) = state {
                        let mid = parser.isMidRequest
                        state = .reading(since: mid ? since : now, midRequest: mid)
                    }
                    return
                case .request(let request):
                    state = .awaitingResponse(keepAlive: request.keepAlive)
                    outputs.append(.dispatch(request))
                    return
                case .streamedHead(let request, let length):
                    state = .checkingHead(request, length: length)
                    outputs.append(.checkStreamedHead(request, length: length))
                    return
                case .bodyPart(let bytes):
                    outputs.append(.spool(bytes))
                case .bodyEnd:
                    guard case .receivingBody(_, let keepAlive) = state else { return }
                    state = .awaitingResponse(keepAlive: keepAlive)
                    outputs.append(.dispatchSpooled)
                    return
                }
            }
        } catch {
            fail(status: error.status, message: error.message,
                 ckErrorCode: error.kind == .limitExceeded ? "limitExceeded" : nil)
        }
    }

    private mutating func fail(status: Int, message: String, ckErrorCode: String? = nil) {
        if isReceivingBody { outputs.append(.discardSpool) }
        state = .closed
        let kind = ckErrorCode.map { #","ckErrorCode":\#(JSONString.quoted($0))"# } ?? ""
        let body = Array(#"{"serverErrorCode":"BAD_REQUEST"\#(kind),"reason":\#(JSONString.quoted(message))}"#.utf8)
        outputs.append(.send(HTTPResponse.json(status, body).serialized(keepAlive: false)))
        outputs.append(.close)
    }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension HTTPServerConnection: SansIOMachine {}
