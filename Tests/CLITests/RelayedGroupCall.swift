// What a relayed group call must show, checked the same way whichever TURN relay carried it: ours
// (`MeshProcessTests.threePeersRelayed`) or coturn (`CallRelayTests.groupCallThroughCoturn`).

import Foundation
import Testing

/// The parts of `zonertc call FILE --peers N --relay-only --json` a relayed group call is judged by.
struct RelayedGroupCallReport: Decodable {
    struct Member: Decodable {
        struct Leg: Decodable { var remote: String; var outcome: String; var path: String? }
        var me: String
        var legs: [Leg]
        var goodbyeTimedOut: Bool?
    }

    var members: [Member?]
    var streams: [MeshProcessTests.CallReport.Stream]
    var verdict: MeshProcessTests.CallReport.Verdict

    /// Expects `run` of `peers` members each sending `frames` frames to have exited 0 with every directed
    /// stream identical, every member's every leg completed through the relay (each on an allocation of
    /// its own: with one for several legs, one leg's relayed data would reach another, or the second
    /// Allocate from one address be refused, and a stream differ), and every member's allocations deleted
    /// with the deletions answered before it left.
    static func expect(_ run: ZonertcProcess.Output, peers: Int, frames: Int) throws {
        #expect(run.status == 0, "stderr: \(run.stderr.suffix(4000))")
        let report = try JSONDecoder().decode(Self.self, from: Data(run.stdout.utf8))
        #expect(report.verdict.ok, "\(report.verdict.text)")
        #expect(report.streams.count == peers * (peers - 1))
        #expect(report.streams.allSatisfy { $0.identical && $0.framesReceived == frames })
        let members = report.members.compactMap { $0 }
        #expect(members.count == peers)
        for member in members {
            let relayed = member.legs.allSatisfy { $0.path == "relay" && $0.outcome == "completed" }
            #expect(member.legs.count == peers - 1 && relayed,
                    "\(member.me): \(member.legs.map { "\($0.remote) \($0.outcome) \($0.path ?? "no path")" })")
            #expect(member.goodbyeTimedOut == false, "\(member.me)")
        }
    }
}
