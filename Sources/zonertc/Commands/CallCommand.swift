import Foundation
import Peer
import RecordStore
import ZoneCore

/// `zonertc call FILE`: a whole call on this machine — a store daemon, two peer processes, FILE
/// streamed from one to the other, the frames checked, everything cleaned up.
enum CallCommand {
    static let spec = CommandSpec(
        path: ["call"],
        summary: "Run an end-to-end call on loopback: store daemon + two peers, FILE streamed and checked.",
        positionals: [("FILE", "the video file to stream (IVF, H.264 Annex B or Y4M)")],
        options: [
            .flag("--both-ways", "stream FILE in both directions"),
            .value("--peers", "N", "members of the call, 2–5: 2 is a call of two; 3 or more a group call in one room, "
                   + "every member sending FILE to every other", default: "2"),
            .flag("--mesh", "run the members as a group call in one room even with --peers 2 (a group call of two, "
                  + "timed as one: to compare with --peers 3–5)"),
            .value("--record", "DIR", "with a group call (--peers 3 or more, or --mesh): keep every received stream, "
                   + "DIR/RECEIVER/from-SENDER"),
            .value("--sync", "STRATEGY", "push, poll-token, poll-fullscan, hybrid or legacy", default: "hybrid"),
            .value("--push-profile", "PROFILE", "the store daemon's push profile: lan, cloudkit or custom:…", default: "lan"),
            .value("--pace", "MODE", "realtime (by the file's timestamps) or max", default: "realtime"),
            .flag("--relay-only", "send only through a TURN relay: --turn's, or one this command starts"),
            .value("--turn", "USER:PASS@HOST:PORT",
                   "a TURN relay you run (e.g. coturn) for both peers, instead of ours"),
            MediaSecurityOption.spec("both peers: dtls-srtp (needs the WebRTC build) or none"),
            .value("--impair", "SPEC", "impair both peers' outgoing datagrams: loss=0.1,delay=20ms,jitter=5ms,seed=1"),
            .value("--timeout", "DURATION", "give up when the call has not ended this long after the start", default: "60s"),
            .value("--keep", "DIR", "keep the data directory, received files and logs in DIR"),
            .flag("--json", "print one JSON object: both peers' summaries and the verdict"),
            .flag("--browser", "bob is headless Chromium opening the call page (needs the WebRTC build); with --peers N "
                  + "the last member is the group-call page, its fake camera sending to every peer"),
            .value("--browser-path", "PATH", "the Chromium binary (default: chromium, chromium-browser or google-chrome in PATH)"),
            .value("--browser-sends", "FILE.y4m", "with --browser: Chromium's fake camera sends FILE.y4m, alice records it"),
        ],
        discussion: """
            Starts `zonertc store serve` on a free loopback port with a temporary data directory, then two
            `zonertc peer` processes (alice owns the room and sends; bob records), waits for both, checks
            that the frames bob received equal the frames alice sent (per-frame checksums), prints both
            summaries and a one-line verdict, and removes every process and temporary file.
            With --relay-only and no --turn it also starts `zonertc relay serve`; with --turn both peers
            allocate on that relay (IPv4 or [IPv6] literal, port 1–65535) and nothing else is started.
            With --peers N (3–5), or --mesh with any N, it starts N peers (alice, bob, carol, dave, erin;
            alice owns the room) in the room's group call, prepared and released together (`peer --join-at
            stdin`), each sending FILE on every leg, and checks all
            N(N−1) directed streams frame-identical; it prints each member's summary, one line per directed
            stream, the time until the slowest member had a frame from every other and each member's
            timeline (--json: one object with all of it); --relay-only and --turn work there as for two,
            every member's legs relayed.
            With --browser --peers N (3–5) the last member is headless Chromium on the group-call page
            (mesh=1) and the others are `zonertc peer`s, prepared while Chromium starts and released together
            once the page's presence is in the zone: it checks that the page decoded every frame of each
            peer (none dropped), that each peer received as many frames of the page's camera as FILE holds,
            and that the streams between the peers are frame-identical.
            Exit 0 when the frames match, 1 otherwise.
            """,
        run: run)

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        guard args.positionals.count == 1 else {
            throw UsageError(message: "give exactly one FILE to stream", command: spec)
        }
        let file = args.positionals[0]
        guard FileManager.default.isReadableFile(atPath: file) else {
            throw UsageError(message: "cannot read \(file)", command: spec)
        }
        let timeoutText = args.string("--timeout") ?? "60s"
        let timeout: Duration
        do { timeout = try PushProfile.parseDuration(timeoutText) } catch {
            throw UsageError(message: "--timeout \(timeoutText): \(error)", command: spec)
        }
        let peers = try args.int("--peers", in: 2...5) ?? 2
        if peers > 2 && args.has("--browser") {
            for option in ["--both-ways", "--relay-only", "--turn", "--impair", "--browser-sends", "--record", "--sync",
                           "--pace", "--media-security"] where args.has(option) || !args.strings(option).isEmpty {
                throw UsageError(message: "\(option) does not go with --browser --peers \(peers)", command: spec)
            }
            let plan = BrowserMeshCallPlan(file: file, peers: peers, browserPath: args.string("--browser-path"),
                                           push: args.string("--push-profile") ?? "lan", timeout: timeout,
                                           keep: args.string("--keep"), json: args.has("--json"))
            return await plan.run()
        }
        let mesh = peers > 2 || args.has("--mesh")
        if args.has("--mesh") && args.has("--browser") {
            throw UsageError(message: "--mesh does not go with --browser", command: spec)
        }
        if mesh || args.string("--record") != nil {
            guard mesh else { throw UsageError(message: "--record needs --peers 3 or more, or --mesh", command: spec) }
            for option in ["--both-ways", "--impair", "--browser", "--browser-path", "--browser-sends"]
            where args.has(option) || args.string(option) != nil {
                let call = peers > 2 ? "--peers \(peers)" : "--mesh"
                throw UsageError(message: "\(option) does not go with \(call)", command: spec)
            }
            var plan = MeshCallPlan(file: file, peers: peers, sync: args.string("--sync") ?? "hybrid",
                                    push: args.string("--push-profile") ?? "lan", pace: args.string("--pace") ?? "realtime",
                                    timeout: timeout, keep: args.string("--keep"), record: args.string("--record"),
                                    json: args.has("--json"))
            plan.mediaSecurity = try checkedSecurity(args, pace: plan.pace)
            plan.turn = try checkedTURN(args)
            plan.relayOnly = args.has("--relay-only")
            return await plan.run()
        }
        if args.has("--browser") {
            for option in ["--both-ways", "--relay-only", "--impair", "--json"]
            where args.has(option) || args.string(option) != nil {
                throw UsageError(message: "\(option) does not go with --browser", command: spec)
            }
            let plan = BrowserCallPlan(file: file, browserPath: args.string("--browser-path"),
                                       browserSends: args.string("--browser-sends"),
                                       push: args.string("--push-profile") ?? "lan", timeout: timeout,
                                       keep: args.string("--keep"))
            return await plan.run()
        }
        for option in ["--browser-path", "--browser-sends"] where args.string(option) != nil {
            throw UsageError(message: "\(option) needs --browser", command: spec)
        }
        let turn = try checkedTURN(args)
        var plan = CallPlan(
            file: file, bothWays: args.has("--both-ways"), sync: args.string("--sync") ?? "hybrid",
            push: args.string("--push-profile") ?? "lan", pace: args.string("--pace") ?? "realtime",
            relayOnly: args.has("--relay-only"), turn: turn, impair: args.string("--impair"), timeout: timeout,
            keep: args.string("--keep"), json: args.has("--json"))
        plan.mediaSecurity = try checkedSecurity(args, pace: plan.pace)
        return await plan.run()
    }

    /// The peers' `--turn`, checked (nil without one).
    private static func checkedTURN(_ args: ParsedCommand) throws -> String? {
        guard let text = args.string("--turn") else { return nil }
        do { _ = try TURNServerCredentials(parsing: text) } catch {
            throw UsageError(message: "--turn: \(error)", command: spec)
        }
        return text
    }

    /// The peers' `--media-security`, checked, once `pace` is checked too.
    private static func checkedSecurity(_ args: ParsedCommand, pace: String) throws -> String {
        let security = args.string("--media-security") ?? MediaProtectionMode.defaultName
        do { _ = try MediaProtectionMode(named: security) } catch {
            throw UsageError(message: "--media-security \(security): \(error)", command: spec)
        }
        guard ["realtime", "max"].contains(pace) else {
            throw UsageError(message: "--pace \(pace): choose realtime or max", command: spec)
        }
        return security
    }
}
