import Foundation
import Peer
import PeerNet
import Signaling

/// The end-of-call summary of `zonertc peer`, as text or as one JSON object.
struct PeerSummary: Codable {
    var me: String
    var remote: String
    var room: String
    var sync: String
    /// `completed`, `failed` or `interrupted`.
    var outcome: String
    var reason: String?
    var signalingCompleteMs: Double?
    var iceConnectedMs: Double?
    /// `dtls-srtp` or `none`, and when the media path was secured (DTLS done; plain: pair selected).
    var mediaSecurity: String?
    var mediaSecuredMs: Double?
    var firstFrameMs: Double?
    var mediaFinishedMs: Double?
    /// Wall-clock instants (ms since 1970) of the call's start and first frame, to line up two peers.
    var startedAtMs: Int64?
    var firstFrameAtMs: Int64?
    var callState: String?
    var iceState: String?
    /// host, srflx, prflx or relay.
    var path: String?
    var localCandidate: String?
    var remoteCandidate: String?
    var storeRequests: Int?
    var recordsFetched: Int?
    var staleDrops: Int?
    var duplicates: Int?
    var resets: Int?
    /// Signal records the other user wrote that were dropped as malformed or refused.
    var malformedRecords: Int?
    /// ICE restarts tried after the path failed.
    var restarts: Int?
    /// What was dropped on the way, by where: every drop is counted.
    var drops: CallDrops?
    /// Why push notifications could not be had (the call then polled only), when they could not.
    var pushUnavailable: String?
    /// The store did not answer the goodbye, or the transports did not drain, in time.
    var goodbyeTimedOut: Bool?
    var media: CallMediaStats?

    init(me: String, remote: String, room: String, sync: String, outcome: PeerRunner.Outcome,
         snapshot: PeerCallSnapshot?, runner: PeerRunner.Report? = nil) {
        self.me = me
        self.remote = remote
        self.room = room
        self.sync = sync
        switch outcome {
        case .completed: self.outcome = "completed"
        case .failed(let why): self.outcome = "failed"; reason = why
        case .interrupted: self.outcome = "interrupted"
        }
        guard let s = snapshot else { return }
        signalingCompleteMs = s.milestones.milliseconds(to: s.milestones.signalingComplete)
        iceConnectedMs = s.milestones.milliseconds(to: s.milestones.iceConnected)
        mediaSecuredMs = s.milestones.milliseconds(to: s.milestones.mediaSecured)
        firstFrameMs = s.milestones.milliseconds(to: s.milestones.firstFrame)
        mediaFinishedMs = s.milestones.milliseconds(to: s.milestones.mediaFinished)
        startedAtMs = s.milestones.started?.millisecondsSinceEpoch
        firstFrameAtMs = s.milestones.firstFrame?.millisecondsSinceEpoch
        callState = s.callState.description
        iceState = s.iceState.rawValue
        path = s.pathKind
        localCandidate = s.localCandidate
        remoteCandidate = s.remoteCandidate
        storeRequests = s.signaling.storeRequests
        recordsFetched = s.signaling.recordsFetched
        staleDrops = s.signaling.staleDrops
        duplicates = s.signaling.duplicates
        resets = s.signaling.resets
        malformedRecords = s.signaling.malformedRecords
        restarts = s.restartsTried
        drops = s.drops
        drops?.socketRefused = runner?.unsentDatagrams ?? 0
        pushUnavailable = runner?.pushUnavailable
        goodbyeTimedOut = runner?.goodbyeTimedOut
        media = s.media
    }

    /// The summary a `zonertc peer --json` child printed last, if it printed one.
    init?(lastLineOf output: String) {
        guard let line = output.split(separator: "\n").last,
              let summary = try? JSONDecoder().decode(PeerSummary.self, from: Data(line.utf8)) else { return nil }
        self = summary
    }

    static func ms(_ value: Double?) -> String {
        value.map { String(format: "%.1f ms", $0) } ?? "—"
    }

    var text: String {
        var lines = ["call \(room): \(me) ↔ \(remote) (\(sync)) \(outcome)" + (reason.map { ": \($0)" } ?? "")]
        lines.append("  signaling complete  \(Self.ms(signalingCompleteMs))")
        lines.append("  ICE connected       \(Self.ms(iceConnectedMs))")
        if mediaSecurity == "dtls-srtp" { lines.append("  DTLS-SRTP           \(Self.ms(mediaSecuredMs))") }
        lines.append("  first frame         \(Self.ms(firstFrameMs))")
        if let path { lines.append("  path                \(path): \(localCandidate ?? "?") → \(remoteCandidate ?? "?")") }
        if let storeRequests {
            lines.append("  store               \(storeRequests) requests, \(recordsFetched ?? 0) records fetched, "
                         + "\(staleDrops ?? 0) stale dropped, \(duplicates ?? 0) duplicates, \(resets ?? 0) resets, "
                         + "\(malformedRecords ?? 0) malformed records")
        }
        if let restarts, restarts > 0 { lines.append("  ICE restarts        \(restarts)") }
        if let drops { lines.append("  dropped             \(drops.text)") }
        if let pushUnavailable { lines.append("  push                unavailable (\(pushUnavailable)): polled only") }
        if goodbyeTimedOut == true { lines.append("  goodbye             timed out") }
        if let media, let text = media.summaryText { lines.append(text) }
        return lines.joined(separator: "\n")
    }
}

/// The live status line on a terminal (stderr), redrawn in place.
final class ProgressLine: @unchecked Sendable {
    private let enabled: Bool
    private let lock = NSLock()
    private var last = ""
    private var lastDraw = Date.distantPast

    init(enabled: Bool) { self.enabled = enabled }

    func update(_ event: PeerCall.Event, _ call: borrowing PeerCall) {
        guard enabled else { return }
        var force = true
        if case .frame = event { force = false }
        let now = Date()
        lock.lock()
        defer { lock.unlock() }
        guard force || now.timeIntervalSince(lastDraw) > 0.2 else { return }
        lastDraw = now
        var parts = ["call \(call.signaling.negotiator.state)", "ICE \(call.report.iceState)"]
        if let pair = call.selectedPair { parts.append("path \(pair.local.kind.rawValue)→\(pair.remote.kind.rawValue)") }
        if let media = call.media.stats.progressText { parts.append(media) }
        let line = parts.joined(separator: " · ")
        guard line != last else { return }
        last = line
        FileHandle.standardError.write(Data(("\r\u{1B}[2K" + line).utf8))
    }

    func finish() {
        guard enabled, !last.isEmpty else { return }
        FileHandle.standardError.write(Data("\n".utf8))
    }
}

/// The nearest-rank percentile `p` (0…1) of `values`, or nil when there are none.
func percentile(_ values: [Double], _ p: Double) -> Double? {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return nil }
    return sorted[min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))]
}
