// libFuzzer entry point for the store daemon's HTTP/1.1 request reading: arbitrary bytes through
// the HTTPRequestParser whole, and split in two at a point the input chooses — the same requests
// and the same error either way — and through the HTTPServerConnection machine on a manual
// timeline, answering each dispatched request and half-closing at the end. Targets under `/up`
// stream bodies over the 4096-byte in-memory limit (up to 8192), as the asset upload route does:
// a streamed body's parts must add up to its length, whatever the split. A trap here is a bug:
// hostile bytes must only ever produce an HTTPParseError (a 4xx/5xx answer and a close).
//
// Built by Fuzz/run-fuzz.sh from the modules listed in `modules`; libFuzzer supplies `main`.
import StoreServer
import ZoneCore

/// What a parser made of its input: each request's method, target, headers and body, then the
/// status of the error that stopped it, if any.
private func readAll(_ chunks: [ArraySlice<UInt8>]) -> [String] {
    var parser = HTTPRequestParser(maxHeadBytes: 2048, maxBodyBytes: 4096, streaming: streaming)
    var out: [String] = []
    var streamed: [UInt8] = []
    for chunk in chunks {
        parser.append(chunk)
        while true {
            do {
                switch try parser.parseStep() {
                case .needMore:
                    break
                case .request(let r):
                    let headers = r.headers.fields.map { "\($0.name)=\($0.value)" }.joined(separator: ";")
                    out.append("\(r.method) \(r.target) 1.\(r.minorVersion) \(headers) \(r.body.count) \(r.keepAlive)")
                    continue
                case .streamedHead(let r, let length):
                    precondition(length > 4096 && length <= 8192, "streamed a body of \(length) bytes")
                    out.append("streamed \(r.method) \(r.target) \(length)")
                    streamed = []
                    continue
                case .bodyPart(let part):
                    precondition(!part.isEmpty, "an empty body part")
                    streamed += part
                    continue
                case .bodyEnd:
                    out.append("body \(streamed.count) \(streamed.reduce(0) { $0 &+ Int($1) })")
                    continue
                }
            } catch {
                out.append("error \(error.status)")
                return out
            }
            break
        }
    }
    return out
}

private let streaming = HTTPRequestParser.Streaming(pathPrefix: "/up", maxBytes: 8192)

@_cdecl("LLVMFuzzerTestOneInput")
public func httpRequestFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    let whole = readAll([bytes[...]])
    let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    let split = readAll([bytes[..<cut], bytes[cut...]])
    precondition(whole == split, "split at \(cut) read \(split), whole read \(whole)")

    // The connection machine: every dispatched request answered, time moving, then a half-close.
    var limits = HTTPServerConnection.Limits()
    limits.maxHeadBytes = 2048
    limits.maxBodyBytes = 4096
    limits.streaming = streaming
    var now = Instant.seconds(1000)
    var machine = HTTPServerConnection(limits: limits, now: now)
    var pending = machine.outputs(after: .received(bytes[...]), now: now)
    var rounds = 0
    while !pending.isEmpty {
        rounds += 1
        precondition(rounds < 100_000, "the connection machine does not settle")
        if let deadline = machine.nextDeadline { precondition(deadline >= now, "a deadline in the past") }
        let action = pending.removeFirst()
        switch action {
        case .dispatch, .dispatchSpooled:
            now = now + .milliseconds(1)
            pending += machine.outputs(after: .respond(HTTPResponse.json(200, Array("{}".utf8))), now: now)
        case .checkStreamedHead:
            // Admitted or refused, by the input's last byte.
            let refusal = bytes.last.map { $0 & 1 == 1 } == true ? HTTPResponse.json(401, Array("{}".utf8)) : nil
            pending += machine.outputs(after: .headChecked(refusal), now: now)
        case .send, .close, .beginSpool, .spool, .discardSpool:
            break
        }
    }
    machine.handle(.peerFinishedSending, now: now)
    machine.handle(.timer, now: now + .seconds(120))
    return 0
}
