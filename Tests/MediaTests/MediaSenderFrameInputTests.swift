// The sender takes its frames as input: a driver that hands them over as `framesWanted` asks
// gets the very datagrams, at the very instants, of a sender given every frame at once, while the
// sender never holds more than its lookahead; before its first frame it sends nothing at all.

import Testing
import ZoneCore
@testable import Media

@Suite struct MediaSenderFrameInputTests {
    /// What a sender handed out, and when.
    struct Step: Equatable {
        var at: Instant
        var output: MediaSender.Output
    }

    /// Runs `sender` alone on a manual clock from deadline to deadline until it finishes (no
    /// receiver: the drain times out). With `frames`, hands them over as it asks; returns the
    /// steps and the most frames it held at once (handed in, not yet sent).
    static func run(_ sender: inout MediaSender, feeding frames: [VideoFrame]?, clock: ManualClock)
        -> (steps: [Step], mostHeld: Int) {
        var steps: [Step] = []
        var fed = 0
        var mostHeld = 0
        func feed(_ sender: inout MediaSender, now: Instant) {
            guard let frames else { return }
            while sender.framesWanted > 0 {
                if fed < frames.count {
                    sender.handle(.frame(frames[fed]), now: now)
                    fed += 1
                } else {
                    sender.handle(.endOfStream, now: now)
                }
            }
            mostHeld = max(mostHeld, fed - sender.stats.framesSent - sender.stats.framesSkipped)
        }
        for _ in 0..<100_000 where !sender.isFinished {
            let now = clock.now()
            feed(&sender, now: now)
            while let output = sender.pollOutput() {
                steps.append(Step(at: now, output: output))
                feed(&sender, now: now)
            }
            guard let next = sender.nextDeadline else { break }
            if next > now { clock.set(to: next) }
            sender.handle(.timer, now: clock.now())
        }
        return (steps, mostHeld)
    }

    @Test(arguments: [MediaSender.Pace.realtime, .max])
    func framesHandedOverAsAskedGiveTheSameStream(pace: MediaSender.Pace) throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        var configuration = MediaSender.Configuration(codec: .vp8, ssrc: 7, pace: pace, maxPayloadSize: 300,
                                                      initialSequenceNumber: 65_000, timestampOrigin: 123)
        configuration.frameLookahead = 2
        let allClock = ManualClock()
        var all = MediaSender(configuration: configuration, frames: frames, timebase: format.timebase,
                              now: allClock.now())
        let expected = Self.run(&all, feeding: nil, clock: allClock).steps

        let fedClock = ManualClock()
        var fed = MediaSender(configuration: configuration, timebase: format.timebase, now: fedClock.now())
        let (steps, mostHeld) = Self.run(&fed, feeding: frames, clock: fedClock)

        #expect(fed.stats.framesSent == 60 && fed.stats.packetsSent == all.stats.packetsSent)
        #expect(steps.count == expected.count)
        let firstDifference = zip(steps, expected).enumerated().first { $1.0 != $1.1 }?.offset
        #expect(steps == expected, "first difference at \(firstDifference ?? -1)")
        // The frame being sent and the two asked for ahead of it.
        #expect(mostHeld <= 3, "held \(mostHeld)")
        #expect(steps.last?.output == .event(.finished))
    }

    @Test func beforeItsFirstFrameTheSenderWaits() throws {
        let clock = ManualClock()
        var sender = MediaSender(configuration: MediaSender.Configuration(codec: .vp8, ssrc: 7),
                                 timebase: Timebase(numerator: 1, denominator: 1), now: clock.now())
        #expect(sender.framesWanted == 2)
        #expect(sender.outputs(after: .timer, now: clock.now() + .seconds(5)).isEmpty)
        #expect(sender.nextDeadline == nil)
        // The lookahead counts frames waiting behind the one being sent (due at once, packetized).
        let later = clock.now() + .seconds(5)
        let keyframe: [UInt8] = [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A, 1, 0, 1, 0]
        sender.handle(.frame(VideoFrame(bytes: keyframe, pts: 0)), now: later)
        #expect(sender.framesWanted == 2)
        sender.handle(.frame(VideoFrame(bytes: keyframe, pts: 10)), now: later)
        #expect(sender.framesWanted == 1)
        sender.handle(.frame(VideoFrame(bytes: keyframe, pts: 20)), now: later)
        #expect(sender.framesWanted == 0)
        sender.handle(.endOfStream, now: later)
        #expect(sender.framesWanted == 0)
        // A frame after the end is the driver's mistake: ignored.
        sender.handle(.frame(VideoFrame(bytes: [1, 2, 3], pts: 30)), now: later)
        let outputs = sender.drainOutputs()
        let rtp = outputs.filter { if case .rtp = $0 { true } else { false } }
        // Only the first frame is due yet (its pts, 0 s, counts from the start); the next at 10 s,
        // after the next sender report, a second from now.
        #expect(rtp.count == 1 && sender.stats.framesSent == 1)
        #expect(sender.nextDeadline == later + .seconds(1))
    }

    @Test func anEmptyStreamSaysGoodbyeAndFinishes() throws {
        let clock = ManualClock()
        var configuration = MediaSender.Configuration(codec: .vp8, ssrc: 7)
        configuration.drainTimeout = .milliseconds(100)
        var sender = MediaSender(configuration: configuration, timebase: Timebase(numerator: 1, denominator: 30),
                                 now: clock.now())
        sender.handle(.endOfStream, now: clock.now())
        let steps = Self.run(&sender, feeding: nil, clock: clock).steps
        #expect(sender.stats.packetsSent == 0)
        #expect(steps.contains { if case .rtcp = $0.output { true } else { false } })
        #expect(steps.last?.output == .event(.finished))
    }
}
