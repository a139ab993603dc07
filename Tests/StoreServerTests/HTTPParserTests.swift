import Testing
@testable import StoreServer
import ZoneCore
import TestSupport

/// The HTTP/1.1 request and response parsers: whole, byte at a time, split at random points,
/// every error path, and seeded hostile input.
@Suite("HTTP parsers")
struct HTTPParserTests {
    static let twoRequests = Array((
        "POST /database/1/c/e/private/records/modify HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
        + "Authorization: Bearer t\r\n\r\nhello"
        + "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").utf8)

    /// Feeds `pieces` one after the other and collects every request.
    private func requests(_ pieces: [ArraySlice<UInt8>]) throws -> [HTTPRequest] {
        var parser = HTTPRequestParser()
        var out: [HTTPRequest] = []
        for piece in pieces {
            parser.append(piece)
            while case .request(let r) = try parser.parseStep() { out.append(r) }
        }
        return out
    }

    @Test("whole, byte at a time and split at random points give the same requests")
    func splits() throws {
        let whole = try requests(InputSplit.whole.pieces(Self.twoRequests))
        #expect(whole.count == 2)
        #expect(whole[0].method == "POST" && whole[0].body == Array("hello".utf8))
        #expect(whole[0].headers["authorization"] == "Bearer t")
        #expect(whole[0].keepAlive && !whole[1].keepAlive)
        #expect(whole[1].path == "/health")
        #expect(InputSplit.mismatches(Self.twoRequests, seed: 7, randomRuns: 200, maxPiece: 40) {
            try? requests($0)
        } == [])
    }

    @Test("a request head just under the 16 KB limit, a byte at a time: the same request as whole")
    func largeRequestHeadByteAtATime() throws {
        var head = "GET /records HTTP/1.1\r\nHost: x\r\n"
        for i in 0..<150 { head += "X-Pad-\(i): " + String(repeating: "v", count: 90) + "\r\n" }
        let bytes = Array((head + "\r\n").utf8)
        #expect(bytes.count > 15_000 && bytes.count < 16 * 1024)
        let whole = try requests(InputSplit.whole.pieces(bytes))
        #expect(whole.count == 1 && whole.first?.headers["x-pad-149"] == String(repeating: "v", count: 90))
        #expect(try requests(InputSplit.byteAtATime.pieces(bytes)) == whole)
    }

    @Test("malformed requests get the status that fits", arguments: [
        ("GARBAGE\r\n\r\n", 400),
        ("get / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400),
        ("GET relative HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n", 413),
    ])
    func errors(_ text: String, _ status: Int) {
        var parser = HTTPRequestParser()
        parser.append(Array(text.utf8))
        do {
            _ = try parser.parseStep()
            Issue.record("accepted \(text.debugDescription)")
        } catch {
            #expect(error.status == status, "\(text.debugDescription): \(error)")
        }
    }

    @Test("header values: whitespace around them trimmed, UTF-8 kept, colons after the first kept; invalid UTF-8 refused")
    func headerValues() throws {
        let head = "GET /x?y=1 HTTP/1.1\r\nHost:x\r\nX-Name: \t caf\u{e9} \u{1F600} \t\r\nX-Time:  12:30:05\r\n"
            + "X-Empty:\r\n\r\n"
        let request = try #require(try requests([Array(head.utf8)[...]]).first)
        #expect(request.target == "/x?y=1" && request.method == "GET" && request.minorVersion == 1)
        #expect(request.headers["host"] == "x")
        #expect(request.headers["x-name"] == "caf\u{e9} \u{1F600}")
        #expect(request.headers["X-Time"] == "12:30:05")
        #expect(request.headers["x-empty"] == "")
        for bad in [[0xFF], [0xC3], [0xED, 0xA0, 0x80]] as [[UInt8]] {
            var parser = HTTPRequestParser()
            parser.append(Array("GET / HTTP/1.1\r\nHost: x\r\nX: a".utf8) + bad + Array("\r\n\r\n".utf8))
            #expect(throws: HTTPParseError.self) { try parser.parseStep() }
        }
        var response = HTTPResponseParser()
        response.append(Array("HTTP/1.1 409 Conflict\r\nContent-Length: 2\r\nX-Why:  caf\u{e9}\t\r\n\r\nok".utf8))
        guard case .response(let responseHead, let body) = try response.parseStep() else {
            Issue.record("no response")
            return
        }
        #expect(responseHead.status == 409 && body == Array("ok".utf8))
        #expect(responseHead.headers["x-why"] == "caf\u{e9}")
        var broken = HTTPResponseParser()
        broken.append(Array("HTTP/1.1 200 OK\r\nX: ".utf8) + [0xFF] + Array("\r\n\r\n".utf8))
        #expect(throws: HTTPResponseParser.ParseError.self) { try broken.parseStep() }
    }

    @Test("a response body or event-stream chunk over the client's cap is refused before it is read")
    func responseBodyCap() throws {
        func parse(_ text: String, cap: Int = 8) -> HTTPResponseParser.ParseError? {
            var parser = HTTPResponseParser()
            parser.maxBodyBytes = cap
            parser.append(Array(text.utf8))
            do {
                while true {
                    let step = try parser.parseStep()
                    if step == .needMore || step == .end { return nil }
                    if case .response = step { return nil }
                }
            } catch { return error }
        }
        #expect(parse("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n12345678") == nil)
        // Refused from the head alone: no byte of the body has to arrive.
        #expect(parse("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n")?.description.contains("9 bytes") == true)
        #expect(parse("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\n") != nil)
        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(parse(chunked + "4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n") == nil)
        #expect(parse(chunked + "4\r\nabcd\r\n5\r\n") != nil, "the second chunk takes the body past 8")
        #expect(parse(chunked + "7fffffffffffffff\r\n") != nil)
        let stream = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        // A stream's chunks are handed out one by one: each must fit, not their sum.
        #expect(parse(stream + "8\r\nabcdefgh\r\n8\r\nabcdefgh\r\n0\r\n\r\n") == nil)
        #expect(parse(stream + "9\r\n")?.description.contains("chunk of 9 bytes") == true)
    }

    @Test("request line and headers beyond 16 KB: 431, even before they end")
    func headersTooLarge() {
        var parser = HTTPRequestParser()
        parser.append(Array("GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ".utf8) + [UInt8](repeating: 65, count: 17_000))
        #expect(throws: HTTPParseError.self) { _ = try parser.parseStep() }
    }

    @Test("20,000 seeded mutations never crash or hang the request parser")
    func hostile() {
        var random = SeededRandom(seed: 3)
        for _ in 0..<20_000 {
            var bytes = Self.twoRequests
            for _ in 0..<(1 + Int(random.next() % 6)) {
                bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
            }
            var parser = HTTPRequestParser()
            parser.append(bytes)
            for _ in 0..<4 {
                guard let step = try? parser.parseStep(), step != .needMore else { break }
            }
        }
    }

    @Test("responses: Content-Length and chunked, whole and byte at a time; event streams chunk by chunk")
    func responses() throws {
        let fixed = HTTPResponse.json(200, Array("{}".utf8)).serialized(keepAlive: true)
        let chunked = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n".utf8)
        for bytes in [fixed, chunked] {
            for pieceSize in [bytes.count, 1, 3] {
                var parser = HTTPResponseParser()
                var result: HTTPResponseParser.Step = .needMore
                var offset = 0
                while offset < bytes.count, result == .needMore {
                    parser.append(bytes[offset..<min(bytes.count, offset + pieceSize)])
                    offset += pieceSize
                    result = try parser.parseStep()
                }
                guard case .response(let head, let body) = result else { Issue.record("no response"); continue }
                #expect(head.status == 200)
                #expect(body == (bytes == fixed ? Array("{}".utf8) : Array("abcde".utf8)))
            }
        }
        var stream = HTTPResponseParser()
        stream.append(Array("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
        guard case .streamHead = try stream.parseStep() else { Issue.record("no stream head"); return }
        stream.append(httpChunk(Array(": ready\n\n".utf8)))
        #expect(try stream.parseStep() == .chunk(Array(": ready\n\n".utf8)))
        #expect(try stream.parseStep() == .needMore)
    }

    /// Parses a response fed in `pieces`: the result, or the error, and the bytes the parser examined.
    private func response(_ pieces: [ArraySlice<UInt8>]) -> (step: String, scanned: Int) {
        var parser = HTTPResponseParser()
        for piece in pieces {
            parser.append(piece)
            do {
                let step = try parser.parseStep()
                if step != .needMore { return ("\(step)", parser.bytesScanned) }
            } catch {
                return ("error: \(error)", parser.bytesScanned)
            }
        }
        return ("needMore", parser.bytesScanned)
    }

    @Test("a 55 KB response head a byte at a time: parsed as whole, each byte searched once")
    func largeResponseHeadByteAtATime() throws {
        var head = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
        for i in 0..<600 { head += "X-Pad-\(i): " + String(repeating: "v", count: 80) + "\r\n" }
        let bytes = Array((head + "\r\nok").utf8)
        #expect(bytes.count > 50_000 && bytes.count < 64 * 1024)
        let whole = response(InputSplit.whole.pieces(bytes))
        #expect(whole.step.hasPrefix("response(") && whole.step.contains("X-Pad-599"))
        let byteAtATime = response(InputSplit.byteAtATime.pieces(bytes))
        #expect(byteAtATime.step == whole.step)
        // Rescanning from the head's start on every read examined about n²/2 bytes (1.6 billion here).
        #expect(byteAtATime.scanned <= bytes.count, "examined \(byteAtATime.scanned) bytes of \(bytes.count)")
        #expect(InputSplit.mismatches(bytes, seed: 11, randomRuns: 20, maxPiece: 500) { response($0).step } == [])
    }

    @Test("chunked bodies with chunk extensions, however split; the last chunk's line may arrive before its CRLF")
    func chunkExtensionsSplit() {
        let bytes = Array(("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "3;name=value\r\nabc\r\n2\r\nde\r\n0;last=1\r\n\r\n").utf8)
        let whole = response(InputSplit.whole.pieces(bytes)).step
        #expect(whole.hasPrefix("response(") && whole.hasSuffix("[97, 98, 99, 100, 101])"), "\(whole)")
        #expect(InputSplit.mismatches(bytes, seed: 5, randomRuns: 100, maxPiece: 8) { response($0).step } == [])
    }

    @Test("hostile chunk sizes: the largest Int waits for bytes without trapping; an endless size line is refused")
    func hostileChunkSizes() throws {
        let head = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        // Without a cap on the body (the default refuses it: `responseBodyCap`).
        var huge = HTTPResponseParser()
        huge.maxBodyBytes = .max
        huge.append(head + Array("7fffffffffffffff\r\nabc".utf8))
        #expect(try huge.parseStep() == .needMore)
        var endless = HTTPResponseParser()
        endless.append(head)
        #expect(try endless.parseStep() == .needMore)
        endless.append([UInt8](repeating: UInt8(ascii: "0"), count: HTTPResponseParser.maxChunkSizeLineBytes + 1))
        #expect(throws: HTTPResponseParser.ParseError.self) { try endless.parseStep() }
    }

    @Test("header names fold only ASCII letters: every printable pair 0x20 apart")
    func headerNameCaseFolding() {
        for byte in UInt8(0x21)..<0x7F {
            let other = byte ^ 0x20
            guard other > 0x20 && other < 0x7F else { continue }
            let isLetter = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte & ~0x20)
            let name = "X-" + String(UnicodeScalar(byte)), lookedUp = "X-" + String(UnicodeScalar(other))
            let headers = HTTPHeaders([(name, "v")])
            #expect((headers[lookedUp] == "v") == isLetter, "\(name) looked up as \(lookedUp)")
            #expect(headers.values(lookedUp).count == (isLetter ? 1 : 0))
        }
        #expect(HTTPHeaders([("Content-Type", "a")])["cONTENT-tYPE"] == "a")
    }

    @Test("server-sent events split across chunks")
    func serverSentEvents() {
        var sse = ServerSentEvents()
        let text = Array(": ready\n\nevent: notification\ndata: {\"notificationID\":1,\"subscriptionID\":\"s\",\"databaseScope\":\"private\"}\n\n".utf8)
        var events: [ServerSentEvents.Event] = []
        for b in text { events += sse.feed([b]) }
        #expect(events.count == 2)
        #expect(events[0].isReady)
        #expect(events[1].notification?.subscriptionID == "s")
    }
}
