@testable import Relay
import Testing

/// When a relay worker rests before reading again.
@Suite("Batch wait")
struct BatchWaitTests {
    @Test("rests only after a read that found more than one datagram, and never when off")
    func busyReads() {
        var wait = BatchWait(pause: .microseconds(100))
        #expect(wait.pause(afterReading: 1, lastRestGathered: nil) == nil)
        #expect(wait.pause(afterReading: 2, lastRestGathered: nil) == .microseconds(100))
        #expect(wait.pause(afterReading: 64, lastRestGathered: true) == .microseconds(100))
        var off = BatchWait(pause: .zero)
        #expect(off.pause(afterReading: 64, lastRestGathered: nil) == nil)
        #expect(off.pause(afterReading: 64, lastRestGathered: false) == nil)
    }

    @Test("after rests in a row that gathered nothing it reads at once for a while, then tries again")
    func idleRestsBackOff() {
        var wait = BatchWait(pause: .microseconds(100))
        #expect(wait.pause(afterReading: 5, lastRestGathered: nil) == .microseconds(100))
        // One idle rest, then one that gathered: resting goes on.
        #expect(wait.pause(afterReading: 5, lastRestGathered: false) == .microseconds(100))
        #expect(wait.pause(afterReading: 5, lastRestGathered: true) == .microseconds(100))
        #expect(wait.pause(afterReading: 5, lastRestGathered: false) == .microseconds(100))
        // A second idle rest in a row: the next reads take none, however busy they look.
        #expect(wait.pause(afterReading: 5, lastRestGathered: false) == nil)
        for _ in 1..<BatchWait.readsAfterIdleRests {
            #expect(wait.pause(afterReading: 64, lastRestGathered: nil) == nil)
        }
        #expect(wait.pause(afterReading: 64, lastRestGathered: nil) == .microseconds(100))
        // Rests that gather keep going.
        #expect(wait.pause(afterReading: 30, lastRestGathered: true) == .microseconds(100))
    }
}
