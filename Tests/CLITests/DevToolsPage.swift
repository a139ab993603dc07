import Foundation
import Glibc
import Net
import TestSupport
import ZoneCore

/// A page of a headless Chromium started with `--remote-debugging-port=0`, driven over the Chrome DevTools
/// Protocol as a person would drive it: the tests click the call page's buttons and navigate away with it.
/// The browser prints `DevTools listening on ws://127.0.0.1:PORT/…`; `/json/list` on that port names the
/// page's WebSocket; one `Runtime.evaluate` goes over a WebSocket (RFC 6455, client frames masked) and its
/// answer is read back. Loopback only, every read bounded.
struct DevToolsPage {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let endpoint: Endpoint
    /// The path of the page's WebSocket (`/devtools/page/<id>`).
    let path: String

    /// The page whose URL contains `urlPart`, from the DevTools port in the browser's `stderr`.
    init(browserStderr: String, urlPart: String) throws {
        guard let range = browserStderr.range(of: #"DevTools listening on ws://127\.0\.0\.1:\d+"#,
                                              options: .regularExpression) else {
            throw Failure(description: "the browser printed no DevTools port")
        }
        let port = browserStderr[range].split(separator: ":").last.map(String.init) ?? ""
        endpoint = try Endpoint(parsing: "127.0.0.1:\(port)")
        // Read to the body's length: the browser keeps the connection open whatever the request says.
        let reply = try rawResponse(endpoint, Array(("GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
                                                     + "Connection: close\r\n\r\n").utf8), timeoutMilliseconds: 5000)
        guard let body = reply.range(of: "\r\n\r\n").map({ reply[$0.upperBound...] }),
              let targets = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]],
              let page = targets.first(where: { $0["type"] as? String == "page"
                                                && ($0["url"] as? String)?.contains(urlPart) == true }),
              let socket = page["webSocketDebuggerUrl"] as? String,
              let slash = socket.range(of: "/devtools/") else {
            throw Failure(description: "no page with \(urlPart) in /json/list: \(reply.suffix(2000))")
        }
        path = String(socket[slash.lowerBound...])
    }

    /// Evaluates `expression` in the page; the result's JSON text (`Runtime.evaluate`'s answer). With
    /// `awaitPromise` the answer comes once the promise `expression` gives has settled; no read waits longer
    /// than `within`.
    @discardableResult
    func evaluate(_ expression: String, awaitPromise: Bool = false, within: Duration = .seconds(10)) throws -> String {
        let fd = try TCPSocket.connectBlocking(to: endpoint)
        defer { close(fd) }
        TCPSocket.setReceiveTimeout(fd, milliseconds: Int(within.components.seconds) * 1000)
        try write(fd, Array(("GET \(path) HTTP/1.1\r\nHost: \(endpoint)\r\nUpgrade: websocket\r\n"
                             + "Connection: Upgrade\r\nSec-WebSocket-Key: em9uZXJ0Yy1kZXZ0b29scw==\r\n"
                             + "Sec-WebSocket-Version: 13\r\n\r\n").utf8))
        var input = [UInt8]()
        while input.firstRange(of: Array("\r\n\r\n".utf8)) == nil { input += try read(fd) }
        let headEnd = input.firstRange(of: Array("\r\n\r\n".utf8))!.upperBound
        guard String(decoding: input[..<headEnd], as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw Failure(description: "no WebSocket: \(String(decoding: input, as: UTF8.self).prefix(500))")
        }
        input.removeFirst(headEnd)
        let command: [String: Any] = ["id": 1, "method": "Runtime.evaluate",
                                      "params": ["expression": expression, "returnByValue": true,
                                                 "awaitPromise": awaitPromise]]
        try write(fd, Self.maskedTextFrame(try JSONSerialization.data(withJSONObject: command)))
        while true {
            while Self.frameLength(input) == nil { input += try read(fd) }
            let (headerLength, payloadLength) = Self.frameLength(input)!
            guard payloadLength >= 0, payloadLength <= 1 << 24 else {
                throw Failure(description: "DevTools: a frame of \(payloadLength) bytes")
            }
            while input.count < headerLength + payloadLength { input += try read(fd) }
            let text = String(decoding: input[headerLength..<headerLength + payloadLength], as: UTF8.self)
            input.removeFirst(headerLength + payloadLength)
            if text.hasPrefix(#"{"id":1,"#) { return text }
        }
    }

    /// A final text frame of `payload`, masked as a client must (RFC 6455 §5.3).
    static func maskedTextFrame(_ payload: Data) -> [UInt8] {
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (8 * UInt64($0))) & 0xFF) }
        }
        let mask: [UInt8] = [0x5A, 0x0E, 0x7E, 0xC3]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }

    /// The header and payload lengths of the unmasked server frame `input` starts with, once its header is in.
    static func frameLength(_ input: [UInt8]) -> (Int, Int)? {
        guard input.count >= 2 else { return nil }
        let short = Int(input[1] & 0x7F)
        switch short {
        case 126:
            guard input.count >= 4 else { return nil }
            return (4, Int(input[2]) << 8 | Int(input[3]))
        case 127:
            guard input.count >= 10 else { return nil }
            return (10, input[2..<10].reduce(0) { $0 << 8 | Int($1) })
        default:
            return (2, short)
        }
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) throws {
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw Failure(description: "DevTools: a short write") }
    }

    private func read(_ fd: Int32) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw Failure(description: "DevTools: the connection ended or timed out") }
        return Array(buffer[0..<n])
    }
}
