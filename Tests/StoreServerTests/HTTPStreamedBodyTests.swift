import Testing
@testable import StoreServer
import TestSupport
import ZoneCore

/// The limits both HTTP parsers share (`HTTPMessageLimits`, `HTTPInputBuffer`) and the request
/// parser's streamed bodies (the asset upload route): whole, byte at a time and split at random
/// points, and the connection machine's spool actions.
@Suite("HTTP shared limits and streamed bodies")
struct HTTPStreamedBodyTests {
    static let streaming = HTTPRequestParser.Streaming(pathPrefix: "/up/", maxBytes: 64)

    /// What the parser made of `pieces`: requests, streamed heads, the streamed bytes, or the error.
    private func events(_ pieces: [ArraySlice<UInt8>]) -> [String] {
        var parser = HTTPRequestParser(maxHeadBytes: 1024, maxBodyBytes: 8, streaming: Self.streaming)
        var out: [String] = []
        var body: [UInt8] = []
        for piece in pieces {
            parser.append(piece)
            do {
                loop: while true {
                    switch try parser.parseStep() {
                    case .needMore: break loop
                    case .request(let r): out.append("request \(r.path) \(String(decoding: r.body, as: UTF8.self))")
                    case .streamedHead(let r, let length): out.append("streamed \(r.path) \(length)")
                    case .bodyPart(let part):
                        if part.isEmpty { out.append("empty part") }
                        body += part
                    case .bodyEnd:
                        out.append("body \(String(decoding: body, as: UTF8.self))")
                        body = []
                    }
                }
            } catch {
                out.append("error \(error.status)")
                return out
            }
        }
        return out
    }

    static func post(_ path: String, _ body: String) -> String {
        "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test("a body over the in-memory limit on the streamed route comes out in parts, however split")
    func streamedSplits() {
        let body = String(repeating: "0123456789", count: 5)
        let bytes = Array((Self.post("/up/t", body) + Self.post("/other", "small") + Self.post("/up/u", "tiny")).utf8)
        let whole = events(InputSplit.whole.pieces(bytes))
        #expect(whole == ["streamed /up/t 50", "body \(body)", "request /other small", "request /up/u tiny"])
        #expect(InputSplit.mismatches(bytes, seed: 3, randomRuns: 100, maxPiece: 20) { events($0) } == [])
    }

    @Test("over the in-memory limit elsewhere: 413; over the streamed limit: 400 from the head alone")
    func streamedLimits() {
        #expect(events([Array(Self.post("/other", "123456789").utf8)[...]]) == ["error 413"])
        let head = "POST /up/t HTTP/1.1\r\nHost: x\r\nContent-Length: 65\r\n\r\n"
        #expect(events([Array(head.utf8)[...]]) == ["error 400"])
    }

    @Test("chunk sizes are hex digits only: a sign, 0x or inner spaces are refused; extensions and BWS kept")
    func chunkSizes() {
        func size(_ text: String) -> Int? { HTTPMessageLimits.chunkSize(Array(text.utf8)[...]) }
        #expect(size("1a") == 26 && size("1A;ext=1") == 26 && size("5 ;x") == 5 && size("0") == 0)
        for bad in ["+5", "-5", "0x5", " 5", "5 5", "", "g", "8000000000000000", "fffffffffffffffff"] {
            #expect(size(bad) == nil, "\(bad)")
        }
        var parser = HTTPResponseParser()
        parser.append(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+3\r\nabc\r\n0\r\n\r\n".utf8))
        #expect(throws: HTTPResponseParser.ParseError.self) { try parser.parseStep() }
    }

    @Test("header count: more than the limit is refused by both parsers", arguments: [256, 257])
    func headerCount(_ count: Int) {
        let fields = (0..<(count - 1)).map { "X-\($0): v\r\n" }.joined()
        var request = HTTPRequestParser(maxHeadBytes: 64 * 1024)
        request.append(Array("GET / HTTP/1.1\r\nHost: x\r\n\(fields)\r\n".utf8))
        var response = HTTPResponseParser()
        response.limits.maxHeaderCount = 256
        response.append(Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\(fields)\r\n".utf8))
        if count <= 256 {
            #expect((try? request.parseStep()).map { if case .request = $0 { true } else { false } } == true)
            #expect((try? response.parseStep()) != nil)
        } else {
            #expect { try request.parseStep() } throws: { ($0 as? HTTPParseError)?.status == 431 }
            #expect(throws: HTTPResponseParser.ParseError.self) { try response.parseStep() }
        }
    }

    /// The machine tests' limits (8 bytes in memory, `/up/` streamed), start and upload: a 20-byte POST
    /// to the streamed route.
    static func streamedUpload() -> (HTTPServerConnection.Limits, Instant, [UInt8]) {
        var limits = HTTPServerConnection.Limits()
        limits.maxBodyBytes = 8
        limits.streaming = streaming
        return (limits, Instant.seconds(100), Array(post("/up/t", String(repeating: "a", count: 20)).utf8))
    }

    @Test("the machine spools a streamed body and dispatches it; a half-close mid-body discards the spool")
    func machineSpools() {
        let (limits, t0, request) = Self.streamedUpload()
        var m = HTTPServerConnection(limits: limits, now: t0)
        // The head alone is shown first; nothing of the body is handed out until it is admitted.
        let checking = m.outputs(after: .received(request[..<(request.count - 5)]), now: t0)
        guard checking.count == 1, case .checkStreamedHead(let head, 20) = checking[0] else {
            Issue.record("\(checking)"); return
        }
        #expect(head.path == "/up/t" && head.body.isEmpty)
        #expect(m.nextDeadline == nil)
        let first = m.outputs(after: .headChecked(nil), now: t0)
        guard case .beginSpool(let spooled, 20) = first.first else { Issue.record("\(first)"); return }
        #expect(spooled.path == "/up/t")
        #expect(first.dropFirst().allSatisfy { if case .spool = $0 { true } else { false } })
        // The read timeout runs from the last bytes: a slow upload that keeps sending is not cut.
        #expect(m.nextDeadline == t0 + limits.requestReadTimeout)
        let t1 = t0 + .seconds(9)
        let rest = m.outputs(after: .received(request[(request.count - 5)...]), now: t1)
        #expect(rest == [.spool(Array("aaaaa".utf8)), .dispatchSpooled])

        var cut = HTTPServerConnection(limits: limits, now: t0)
        _ = cut.outputs(after: .received(request[..<(request.count - 5)]), now: t0)
        _ = cut.outputs(after: .headChecked(nil), now: t0)
        #expect(cut.outputs(after: .peerFinishedSending, now: t0) == [.discardSpool, .close])
        var stalled = HTTPServerConnection(limits: limits, now: t0)
        _ = stalled.outputs(after: .received(request[..<(request.count - 5)]), now: t0)
        _ = stalled.outputs(after: .headChecked(nil), now: t0)
        let timedOut = stalled.outputs(after: .timer, now: t0 + limits.requestReadTimeout)
        #expect(timedOut.first == .discardSpool && timedOut.last == .close)
    }

    @Test("a streamed head refused: its answer and close, never a spool; admitted with Expect: 100-continue: 100 first")
    func machineRefusesHead() {
        let (limits, t0, request) = Self.streamedUpload()
        var m = HTTPServerConnection(limits: limits, now: t0)
        _ = m.outputs(after: .received(request[..<(request.count - 5)]), now: t0)
        // More of the body while the head is judged: held, not handed out.
        #expect(m.outputs(after: .received(request[(request.count - 5)...]), now: t0).isEmpty)
        let refusal = HTTPResponse.json(401, Array(#"{"serverErrorCode":"AUTHENTICATION_FAILED"}"#.utf8))
        #expect(m.outputs(after: .headChecked(refusal), now: t0)
                    == [.send(refusal.serialized(keepAlive: false)), .close])
        #expect(m.isClosed)

        var gone = HTTPServerConnection(limits: limits, now: t0)
        _ = gone.outputs(after: .received(request[..<(request.count - 5)]), now: t0)
        #expect(gone.outputs(after: .peerFinishedSending, now: t0) == [.close])

        let expecting = Array(Self.post("/up/t", String(repeating: "b", count: 20))
            .replacingOccurrences(of: "\r\n\r\n", with: "\r\nExpect: 100-Continue\r\n\r\n").utf8)
        var asked = HTTPServerConnection(limits: limits, now: t0)
        _ = asked.outputs(after: .received(expecting[...]), now: t0)
        let admitted = asked.outputs(after: .headChecked(nil), now: t0)
        #expect(admitted.first == .send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)), "\(admitted)")
        #expect(admitted.last == .dispatchSpooled)
    }
}
