// What `zonertc call --browser` concludes once the page has reported: from the report (the page's
// window.zonertcResult, read from the daemon's /call/report) and, when the browser sends, from how alice —
// the `zonertc peer` recording it — exited. One home for these lines, so each is tested without a browser;
// the recording itself is BrowserRecordingCheck's to judge.
import Foundation

public enum BrowserCallVerdict {
    /// The call's verdict from the page's report, or nil when it is the browser that sends and the page is
    /// content: then alice's exit (`aliceExit`) and her recording decide.
    /// - bob receives: OK when the browser decoded every frame sent and dropped none.
    public static func fromReport(_ report: [String: Any], framesSent: Int, browserSends: Bool)
        -> (ok: Bool, text: String)? {
        let media = report["media"] as? [String: Any] ?? [:]
        let decoded = (media["framesDecoded"] as? NSNumber)?.intValue ?? 0
        let dropped = (media["framesDropped"] as? NSNumber)?.intValue ?? 0
        let first = (media["firstFrameMs"] as? NSNumber)?.intValue
        let firstText = first.map { "first frame \($0) ms after the page started" } ?? "no frame"
        guard report["ok"] as? Bool == true else {
            return (false, "FAIL: the browser says: \(report["reason"] as? String ?? "?") (\(firstText))")
        }
        guard browserSends else {
            let ok = decoded == framesSent && dropped == 0
            return (ok, "\(ok ? "OK" : "FAIL"): the browser decoded \(decoded) of \(framesSent) frames sent, "
                    + "\(dropped) dropped, \(firstText)")
        }
        return nil
    }

    /// How alice exited after the page reported, when she records what the browser sent: nil when she exited
    /// 0 (her recording decides), else the failure. A recording is only as good as the peer that wrote it: one
    /// that crashed on its way out (after its file was complete) is a failure, not a pass. `status` is nil when
    /// she had not exited within `waited`; `reason` is her summary's, if she printed one.
    public static func aliceExit(status: Int32?, reason: String?, waited: Duration) -> (ok: Bool, text: String)? {
        guard let status else { return (false, "FAIL: alice did not hang up within \(waited) of the browser's report") }
        guard status == 0 else {
            return (false, "FAIL: alice exited with status \(status) after recording\(reason.map { ": \($0)" } ?? "")")
        }
        return nil
    }
}
