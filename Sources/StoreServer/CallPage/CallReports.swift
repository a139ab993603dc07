// What call pages report (`POST /call/report?room=R&me=U`, the page's window.zonertcResult as JSON), kept
// for whoever runs the call (`GET /call/report?room=R&me=U`): `zonertc call --browser` and the Chromium tests
// read a browser's verdict here instead of driving the browser.
import Synchronization
import ZoneCore

/// The latest report of each (room, user), bounded in count and size: a page may post, nothing grows.
public final class CallReports: Sendable {
    /// Reports kept at once; the oldest goes first.
    public static let maxReports = 64
    /// The largest report taken.
    public static let maxBytes = 1 << 20

    private struct State {
        var reports: [String: [UInt8]] = [:]
        var order = OutputQueue<String>()
    }

    private let state = Mutex(State())

    public init() {}

    static func key(room: String, user: String) -> String { "\(room)\u{0}\(user)" }

    /// Keeps `body` as the report of `user` in `room`, replacing an earlier one.
    func put(room: String, user: String, body: [UInt8]) {
        let key = Self.key(room: room, user: user)
        state.withLock { s in
            if s.reports.updateValue(body, forKey: key) == nil { s.order.append(key) }
            while s.order.count > Self.maxReports, let oldest = s.order.pop() { s.reports[oldest] = nil }
        }
    }

    /// The report of `user` in `room`, if one came.
    public func report(room: String, user: String) -> [UInt8]? {
        state.withLock { $0.reports[Self.key(room: room, user: user)] }
    }
}
