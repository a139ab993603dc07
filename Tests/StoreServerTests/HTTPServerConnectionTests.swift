import Testing
@testable import StoreServer
import ZoneCore

/// The server connection machine on a manual clock: dispatch, keep-alive, pipelining, timeouts.
@Suite("HTTP server connection machine")
struct HTTPServerConnectionTests {
    let t0 = Instant.seconds(1000)
    let get = Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8)

    private func sends(_ actions: [HTTPServerConnection.Action]) -> String {
        actions.compactMap { if case .send(let b) = $0 { return String(decoding: b, as: UTF8.self) } else { return nil } }
            .joined()
    }

    @Test("one request at a time; a pipelined request is dispatched after the response")
    func pipelining() {
        var m = HTTPServerConnection(now: t0)
        #expect(m.nextDeadline == t0 + .seconds(60))
        let actions = m.outputs(after: .received((get + get)[...]), now: t0)
        #expect(actions.count == 1)
        guard case .dispatch(let r) = actions[0] else { Issue.record("no dispatch"); return }
        #expect(r.path == "/health")
        let after = m.outputs(after: .respond(HTTPResponse.json(200, Array("{}".utf8))), now: t0)
        #expect(sends(after).hasPrefix("HTTP/1.1 200 OK"))
        #expect(after.contains { if case .dispatch = $0 { return true } else { return false } })
    }

    @Test("Connection: close ends the connection after the response")
    func connectionClose() {
        var m = HTTPServerConnection(now: t0)
        _ = m.outputs(after: .received(Array("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)[...]),
                      now: t0)
        let after = m.outputs(after: .respond(HTTPResponse(status: 204)), now: t0)
        #expect(after.last == .close)
        #expect(sends(after).contains("Connection: close"))
        #expect(m.isClosed)
    }

    @Test("a request not complete within the read timeout gets 408 and a close")
    func slowRequest() {
        var m = HTTPServerConnection(now: t0)
        let a = m.outputs(after: .received(Array("GET / HTTP/1.1\r\nHo".utf8)[...]), now: t0 + .seconds(1))
        #expect(a == [] && m.nextDeadline == t0 + .seconds(11))
        #expect(m.outputs(after: .timer, now: t0 + .seconds(5)) == [] && m.nextDeadline == t0 + .seconds(11))
        let timeout = m.outputs(after: .timer, now: t0 + .seconds(11))
        #expect(sends(timeout).hasPrefix("HTTP/1.1 408"))
        #expect(timeout.last == .close)
    }

    @Test("an idle kept-alive connection is closed after the idle timeout")
    func idle() {
        var m = HTTPServerConnection(now: t0)
        #expect(m.outputs(after: .timer, now: t0 + .seconds(59)) == [] && m.nextDeadline == t0 + .seconds(60))
        #expect(m.outputs(after: .timer, now: t0 + .seconds(60)) == [.close])
        #expect(m.nextDeadline == nil)
    }

    @Test("malformed input gets a JSON error and a close; nothing after it is read")
    func malformed() {
        var m = HTTPServerConnection(now: t0)
        let a = m.outputs(after: .received(Array("BAD\r\n\r\n".utf8)[...]), now: t0)
        #expect(sends(a).hasPrefix("HTTP/1.1 400"))
        #expect(sends(a).contains("serverErrorCode"))
        #expect(a.last == .close)
        #expect(m.outputs(after: .received(get[...]), now: t0).isEmpty)
    }

    @Test("streams: head with chunked encoding, chunks, and an end")
    func streaming() {
        var m = HTTPServerConnection(now: t0)
        _ = m.outputs(after: .received(get[...]), now: t0)
        let headers = HTTPHeaders([("Content-Type", "text/event-stream")])
        let head = m.outputs(after: .startStream(status: 200, headers: headers), now: t0)
        #expect(sends(head).contains("Transfer-Encoding: chunked"))
        #expect(sends(m.outputs(after: .streamChunk(Array("hi".utf8)), now: t0)) == "2\r\nhi\r\n")
        #expect(m.outputs(after: .received(get[...]), now: t0).isEmpty)
        let end = m.outputs(after: .endStream, now: t0)
        #expect(sends(end) == "0\r\n\r\n" && end.last == .close)
    }
}
