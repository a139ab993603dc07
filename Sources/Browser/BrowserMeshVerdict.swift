// What `zonertc call FILE --browser --peers N` concludes about the page's legs: from the page's report (its
// window.zonertcResult in group-call mode, read from the daemon's /call/report, one entry per member) and from
// each `zonertc peer`'s summary of its leg with the page. One home for these lines, so each is tested without
// a browser; the streams between the peers are checked frame for frame by the caller, as in a group call
// without a browser.
import Foundation

public enum BrowserMeshVerdict {
    /// What one `zonertc peer` of the call says about its leg with the page.
    public struct PeerLeg: Sendable, Equatable {
        public var name: String
        /// Frames it sent to the page, and received from it (nil: it has no leg with the page).
        public var framesSent: Int?
        public var framesReceived: Int?

        public init(name: String, framesSent: Int?, framesReceived: Int?) {
            self.name = name
            self.framesSent = framesSent
            self.framesReceived = framesReceived
        }
    }

    /// One directed stream between the page and a peer, as checked.
    public struct Stream: Sendable, Equatable, Codable {
        public var from: String
        public var to: String
        /// Frames the receiver should have: what the peer sent, or the page's camera frames the peer records.
        public var expected: Int
        /// Frames the page decoded, or the peer received.
        public var got: Int
        /// Frames the page dropped (the page as receiver only).
        public var dropped: Int
        /// When the receiver had its first frame, ms after it started (the page: after it loaded).
        public var firstFrameMs: Double?
        public var ok: Bool
    }

    /// The page's streams from and (when it sends) to every peer, and the verdict on them.
    /// - From each peer: OK when the page decoded every frame that peer sent it and dropped none.
    /// - To each peer (`pageFrames` non-nil, the page sends its camera): OK when the peer received `pageFrames`
    ///   frames from the page (it records that many and ends the stream: a camera never says BYE).
    /// The report must say the page was content (`ok`); its reason is quoted when it was not.
    public static func check(report: [String: Any]?, page: String, peers: [PeerLeg],
                             pageFrames: Int?) -> (streams: [Stream], ok: Bool, text: String) {
        guard let report else { return ([], false, "FAIL: the page reported nothing") }
        let members = report["members"] as? [String: Any] ?? [:]
        var streams: [Stream] = []
        for peer in peers {
            let leg = members[peer.name] as? [String: Any]
            let media = leg?["media"] as? [String: Any] ?? [:]
            let number = { (key: String) in (media[key] as? NSNumber)?.intValue }
            let decoded = number("framesDecoded") ?? 0, dropped = number("framesDropped") ?? 0
            let sent = peer.framesSent ?? 0
            streams.append(Stream(from: peer.name, to: page, expected: sent, got: decoded, dropped: dropped,
                                  firstFrameMs: (media["firstFrameMs"] as? NSNumber)?.doubleValue,
                                  ok: peer.framesSent != nil && sent > 0 && decoded == sent && dropped == 0))
            if let pageFrames {
                let got = peer.framesReceived ?? 0
                streams.append(Stream(from: page, to: peer.name, expected: pageFrames, got: got, dropped: 0,
                                      firstFrameMs: nil, ok: pageFrames > 0 && got == pageFrames))
            }
        }
        guard report["ok"] as? Bool == true else {
            return (streams, false, "FAIL: the page says: \(report["reason"] as? String ?? "?")")
        }
        let bad = streams.filter { !$0.ok }
        guard bad.isEmpty else {
            let list = bad.map { "\($0.from)→\($0.to) \($0.got)/\($0.expected)"
                + ($0.dropped > 0 ? " (\($0.dropped) dropped)" : "") }.joined(separator: ", ")
            return (streams, false, "FAIL: \(bad.count) of \(streams.count) streams with the page fall short: \(list)")
        }
        let fromPeers = streams.filter { $0.to == page }.map { "\($0.got) from \($0.from)" }.joined(separator: ", ")
        let toPeers = pageFrames.map { "; each peer received its \($0) camera frames" } ?? ""
        return (streams, true, "OK: the page decoded every frame (\(fromPeers)), none dropped\(toPeers)")
    }
}
