#if WebRTC
import Browser
import Foundation
import Testing
import TestSupport

/// Issue 28: the group-call page (`mesh=1`) and a `zonertc peer --remote` making a call of two meet in one
/// room, as docs/PROTOCOL.md §11.6 promises: when the peer has the lower user ID its offer starts a leg at
/// the page (the offer proves presence); when the page has it, the page takes the peer's fresh `RoomMember`
/// record without `groupCallVersion` for a call-of-two client and, after the grace, offers. Either way the
/// page decodes every frame the peer sends and ends that leg on the peer's goodbye. Every wait is on output,
/// bounded; every process is stopped by its PID. Without Chromium the suite is skipped; under ZONERTC_CI=1 it
/// fails.
@Suite("The group-call page and a zonertc peer making a call of two", .serialized,
       .enabled(if: ExternalProgram.underCI || (try? HeadlessChromium.locate()) != nil, "Chromium is not installed"))
struct BrowserMeshPeerTests {
    typealias BrowserCall = BrowserCallTests.BrowserCall

    @Test("a call-of-two peer and the group-call page converge, whichever has the lower user ID",
          arguments: [("room_meshpr1a", "alice", "bob"), ("room_meshpr2a", "zed", "amy")])
    func pageAndCallOfTwoPeer(room: String, peer: String, page: String) async throws {
        let call = try BrowserCall(room: room)
        defer { call.stop() }
        try await call.register(peer, page)
        let sender = try BrowserPeerCallTests.peer(call, me: peer, remote: page, owner: true,
                                                   ["--send", BrowserPeerCallTests.vp8])
        try call.openMesh(me: page, roomOwner: peer, query: "&frames=60&peers=1&timeout=60&send=0")
        let summary = try await BrowserPeerCallTests.summary(sender)
        #expect(summary["outcome"] as? String == "completed", "\(summary)")
        #expect(BrowserPeerCallTests.media(summary, "framesSent") == 60, "\(summary)")
        #expect(summary["malformedRecords"] as? Int ?? 0 == 0)
        // The first report when 60 frames are decoded, the second when the peer's goodbye ends the leg.
        let report = try await call.meshReports([page], counts: [2])[page]
        #expect(report?["ok"] as? Bool == true, "\(page): \(report?["reason"] ?? "no report")")
        let leg = BrowserMeshTests.member(report, peer)
        let media = leg?["media"] as? [String: Any]
        #expect((media?["framesDecoded"] as? NSNumber)?.intValue == 60, "\(leg ?? [:])")
        #expect((media?["framesDropped"] as? NSNumber)?.intValue == 0)
        #expect(leg?["memberSession"] is NSNull, "a call-of-two peer has no presence record")
        let pageOffers = page < peer
        #expect(leg?["firstOffer"] as? Bool == pageOffers)
        #expect(BrowserMeshTests.count(report, "mesh", pageOffers ? "callOfTwoCalled" : "callersAnswered") == 1)
        #expect(BrowserMeshTests.count(report, "mesh", pageOffers ? "callersAnswered" : "callOfTwoCalled") == 0)
        let reason = (leg?["ended"] as? [String: Any])?["reason"] as? String ?? "not ended"
        #expect(reason.hasPrefix("\(peer) hung up (its \(pageOffers ? "answer" : "offer") of epoch "), "\(reason)")
        #expect(((leg?["call"] as? [String: Any])?["resets"] as? NSNumber)?.intValue == 0)
    }
}
#endif
