import Foundation
import Synchronization
import ZoneCore

/// `zonertc peer --join-at`: the moment a prepared group-call member joins. Members started together on one
/// machine become ready at different times (their processes compete for the cores); a member told a moment
/// prepares everything that does not show it in the call (the store, the room, the file, its sockets, its
/// DTLS certificate) and saves its presence only then, so that "joining together" means the same instant
/// for every member. Its times are still measured from its own join.
enum JoinMoment: Equatable {
    /// Milliseconds since the Unix epoch, given on the command line.
    case at(Int64)
    /// Read as one line (milliseconds since the Unix epoch) from standard input once prepared; the peer
    /// says `prepared` on stderr first, so that a harness knows when every member is ready.
    case fromStandardInput

    /// How late a member may be for its moment and still join (at once); later is an error: whoever chose
    /// the moment meant members joining together, not one arriving long after.
    static let lateness: Duration = .seconds(5)

    /// What a member prints on stderr once prepared, before it waits for its moment.
    static let preparedLine = "zonertc peer: prepared; waiting for the join moment"

    /// `--join-at UNIX_MS` or `--join-at stdin`.
    init(parsing text: String) throws(JoinMomentError) {
        if text == "stdin" {
            self = .fromStandardInput
        } else if let ms = Self.milliseconds(text) {
            self = .at(ms)
        } else {
            throw JoinMomentError("'\(text.prefix(40))': give milliseconds since 1970 (UNIX_MS) or stdin")
        }
    }

    /// Whole milliseconds since the Unix epoch, a positive number of at most 15 digits (until the year 33658).
    static func milliseconds(_ text: some StringProtocol) -> Int64? {
        guard (1...15).contains(text.count), text.allSatisfy(\.isASCII), let ms = Int64(text), ms > 0 else {
            return nil
        }
        return ms
    }

    /// Waits for the moment: reads it first when it comes on standard input (at most until `deadline`),
    /// then sleeps until it. Throws when it cannot be had, lies beyond `deadline`, or passed more than
    /// `lateness` ago; returns at once when it passed less than that ago.
    func wait(deadline: Instant, clock: WallClock = WallClock()) async throws(JoinMomentError) {
        let moment: Int64
        switch self {
        case .at(let ms):
            moment = ms
        case .fromStandardInput:
            FileHandle.standardError.write(Data((Self.preparedLine + "\n").utf8))
            let left = Duration.nanoseconds(max(0, deadline.nanosecondsSinceEpoch - clock.now().nanosecondsSinceEpoch))
            guard let line = await Self.standardInputLine(within: left) else {
                throw JoinMomentError("no join moment on standard input within \(left) (it was closed or silent)")
            }
            let text = line.trimmingCharacters(in: .whitespaces)
            guard let ms = Self.milliseconds(text) else {
                throw JoinMomentError("standard input gave '\(text.prefix(40))', not milliseconds since 1970")
            }
            moment = ms
        }
        let late = try Self.check(moment, deadline: deadline, now: clock.now())
        if late < .zero { try? await Task.sleep(for: .zero - late) }
    }

    /// Refuses a moment given on the command line that can never be kept, before anything is prepared.
    func checkEarly(deadline: Instant, now: Instant) throws(JoinMomentError) {
        if case .at(let moment) = self { _ = try Self.check(moment, deadline: deadline, now: now) }
    }

    /// How late `now` is for `moment` (negative: how long until it); throws when it is too late or lies
    /// beyond `deadline`.
    private static func check(_ moment: Int64, deadline: Instant, now: Instant) throws(JoinMomentError) -> Duration {
        let late = Duration.milliseconds(now.millisecondsSinceEpoch - moment)
        guard late <= lateness else {
            throw JoinMomentError("the join moment \(moment) passed \(late) ago (more than \(lateness) late)")
        }
        guard moment <= deadline.millisecondsSinceEpoch else {
            throw JoinMomentError("the join moment \(moment) is after the connect timeout's end "
                                  + "(\(deadline.millisecondsSinceEpoch))")
        }
        return late
    }

    /// One line from standard input, or nil on its end or when none comes within `limit`.
    private static func standardInputLine(within limit: Duration) async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            let wait = LineWait(continuation)
            // readLine blocks its thread; the timer bounds the wait (the thread is left to the process's end).
            Thread.detachNewThread { wait.finish(readLine(strippingNewline: true)) }
            Task.detached {
                try? await Task.sleep(for: limit)
                wait.finish(nil)
            }
        }
    }

    /// Resumes its continuation once, with whichever comes first: the line or the end of the wait.
    private final class LineWait: Sendable {
        private let continuation: Mutex<CheckedContinuation<String?, Never>?>

        init(_ continuation: CheckedContinuation<String?, Never>) { self.continuation = Mutex(continuation) }

        func finish(_ line: String?) {
            continuation.withLock { waiting in
                waiting?.resume(returning: line)
                waiting = nil
            }
        }
    }
}

/// A join moment that cannot be kept (exit 1).
struct JoinMomentError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
