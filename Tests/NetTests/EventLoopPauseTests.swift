import Foundation
import Net
import Synchronization
import Testing
import ZoneCore

/// `EventLoop.pauseBeforeNextWait`: the loop rests before it next asks what is ready, once and
/// never longer than its bound; what the rest gathered is told once.
@Suite("Event loop pause before the next wait")
struct EventLoopPauseTests {
    @Test("a pause asked for is bounded: after a request for a minute the next datagram is still handled")
    func boundedPause() throws {
        let loop = try EventLoop(name: "pause-test")
        let socket = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        let sender = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        let handled = DispatchSemaphore(value: 0)
        let reads = Mutex(0)
        // Per read: the outcome of the pause before it, taken twice (the second take is always nil).
        let outcomes = Mutex<[(Bool?, Bool?)]>([])
        let registered = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let readSocket = socket
        loop.execute {
            try? loop.register(readSocket.fd, interest: .readable) { _ in
                let n = readSocket.receiveAll { _, _ in }
                guard n > 0 else { return }
                reads.withLock { $0 += 1 }
                let first = loop.takePauseOutcome()
                let second = loop.takePauseOutcome()
                outcomes.withLock { $0.append((first, second)) }
                loop.pauseBeforeNextWait(.seconds(60))
                handled.signal()
            }
            registered.signal()
        }
        loop.start()
        defer { loop.stop() }
        #expect(registered.wait(timeout: .now() + 5) == .success)
        #expect(sender.send([1], to: socket.localEndpoint))
        #expect(handled.wait(timeout: .now() + 5) == .success)
        // The loop now rests; a 60 s rest would miss this bound, the 10 ms cap meets it easily.
        let start = ContinuousClock.now
        #expect(sender.send([2], to: socket.localEndpoint))
        #expect(handled.wait(timeout: .now() + 5) == .success)
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(reads.withLock { $0 } == 2)
        // The first read followed no pause; the second followed one, judged once however often asked.
        let seen = outcomes.withLock { $0 }
        #expect(seen.count == 2 && seen[0].0 == nil && seen[1].0 != nil && seen.allSatisfy { $0.1 == nil })
        #expect(EventLoop.maxPauseBeforeWait == .milliseconds(10))
    }
}
