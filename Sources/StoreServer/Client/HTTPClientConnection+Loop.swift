import Foundation
import Glibc
import Net
import ZoneCore

/// One request and response on a connection served by `StoreClientLoop`. Everything here runs on
/// the loop's thread; the connection is used by one request at a time (the pool hands it out).
extension HTTPClientConnection {
    /// The request in progress: what is left to send, whether any response byte came, its timer.
    struct LoopExchange {
        var outbound: [UInt8]
        var sent = 0
        var received = false
        var timer: EventLoop.Timer?
        var done: (Result<(HTTPResponseParser.Head, [UInt8]), ClientError>) -> Void
    }

    /// Sends `request` and reads its response on `loop`; never blocks the caller's thread. A
    /// pooled connection (`fresh` false) found closed before the request went out fails with
    /// `.closedBeforeSending`; a fresh one is not looked at, since what the server sent on it
    /// before the request (a 503 when it is full) is the answer to read.
    func exchange(_ request: [UInt8], timeoutMilliseconds: Int, fresh: Bool,
                  on loop: EventLoop) async -> Result<(HTTPResponseParser.Head, [UInt8]), ClientError> {
        await withCheckedContinuation { continuation in
            loop.execute { [self] in
                begin(request, timeoutMilliseconds: timeoutMilliseconds, fresh: fresh, on: loop) {
                    continuation.resume(returning: $0)
                }
            }
        }
    }

    /// Closes the connection from any thread: on its loop, which may be watching it.
    func retire(on loop: EventLoop) {
        loop.execute { [self] in shutDownOnLoop(loop) }
    }

    private func begin(_ request: [UInt8], timeoutMilliseconds: Int, fresh: Bool, on loop: EventLoop,
                       done: @escaping (Result<(HTTPResponseParser.Head, [UInt8]), ClientError>) -> Void) {
        // Closed by the server while idle (the loop saw it), or with bytes nobody asked for.
        guard fd >= 0, fresh || isReusable else {
            shutDownOnLoop(loop)
            return done(.failure(ClientError(kind: .closedBeforeSending, description: "\(endpoint) closed it")))
        }
        if !watched {
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0,
                  // Weakly: a pool that is dropped frees its idle connections (deinit then
                  // deregisters and closes them on this loop).
                  (try? loop.register(fd, interest: .readable, handler: { [weak self] ready in
                      self?.onReady(ready, loop)
                  })) != nil else {
                shutDownOnLoop(loop)
                return done(.failure(ClientError(description: "cannot watch the connection to \(endpoint)")))
            }
            watched = true
            watchingLoop = loop
        }
        var exchange = LoopExchange(outbound: request, done: done)
        let due = loop.clock.now() + .milliseconds(max(1, timeoutMilliseconds))
        exchange.timer = loop.schedule(at: due) { [self] in
            finish(loop, .failure(ClientError(kind: .timedOut,
                                              description: "no response from \(endpoint) within \(timeoutMilliseconds) ms")))
        }
        pending = exchange
        writeSome(loop)
    }

    private func onReady(_ ready: EventLoop.Readiness, _ loop: EventLoop) {
        guard pending != nil else {
            // Idle: the server closed (its idle timeout) or sent something unasked; either way the
            // connection cannot carry another request.
            shutDownOnLoop(loop)
            return
        }
        if ready.contains(.writable) { writeSome(loop) }
        if pending != nil, !ready.isDisjoint(with: [.readable, .hangup, .error]) { readSome(loop) }
    }

    private func writeSome(_ loop: EventLoop) {
        guard var exchange = pending, exchange.sent < exchange.outbound.count else { return }
        while exchange.sent < exchange.outbound.count {
            let n = exchange.outbound.withUnsafeBytes {
                send(fd, $0.baseAddress! + exchange.sent, $0.count - exchange.sent, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                return finish(loop, .failure(sendFailure()))
            }
            exchange.sent += n
        }
        pending = exchange
        loop.setInterest(fd, exchange.sent < exchange.outbound.count ? [.readable, .writable] : .readable)
    }

    private func readSome(_ loop: EventLoop) {
        while var exchange = pending {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            if n <= 0 { return finish(loop, .failure(receiveFailure(n, received: exchange.received))) }
            exchange.received = true
            pending = exchange
            appendReceived(n)
            let step: HTTPResponseParser.Step
            do { step = try parseStep() } catch {
                return finish(loop, .failure(ClientError(description: "bad response from \(endpoint): \(error)")))
            }
            switch step {
            case .needMore: continue
            case .response(let head, let body): return finish(loop, .success((head, body)))
            default:
                return finish(loop, .failure(ClientError(description: "unexpected streamed response from \(endpoint)")))
            }
        }
    }

    /// Ends the exchange: a failed connection is closed (it may be mid-response), a good one is
    /// left watched for the server closing it while idle.
    private func finish(_ loop: EventLoop, _ result: Result<(HTTPResponseParser.Head, [UInt8]), ClientError>) {
        guard let exchange = pending else { return }
        pending = nil
        if let timer = exchange.timer { loop.cancel(timer) }
        if case .failure = result { shutDownOnLoop(loop) } else { loop.setInterest(fd, .readable) }
        exchange.done(result)
    }

    private func shutDownOnLoop(_ loop: EventLoop) {
        if let exchange = pending {
            pending = nil
            if let timer = exchange.timer { loop.cancel(timer) }
            exchange.done(.failure(ClientError(kind: .failed, description: "the connection to \(endpoint) was closed")))
        }
        if watched, fd >= 0 { loop.deregister(fd) }
        watched = false
        close()
    }
}
