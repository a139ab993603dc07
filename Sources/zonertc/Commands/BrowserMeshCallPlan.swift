import Browser
import Foundation
import Media
import Net
import RecordStore
import Signaling
import StoreServer
import ZoneCore

/// `zonertc call FILE --browser --peers N` (3–5): the store, N−1 `zonertc peer`s in the room's group call
/// (alice owns the room; each sends FILE on every leg and records what it receives) and headless Chromium
/// opening the group-call page (`mesh=1`) as the last member, its fake camera sending to every peer. Checked:
/// - the page decoded every frame each peer sent it, none dropped (its report, read from `/call/report`);
/// - each peer received as many frames from the page as FILE holds (it records that many: the camera loops
///   and never says BYE);
/// - the streams between the peers are frame-identical (per-frame checksums, as without a browser).
/// DTLS-SRTP only, as for a call of two with a browser: without the WebRTC trait it stops at once.
struct BrowserMeshCallPlan {
    var file: String
    var peers: Int
    var browserPath: String?
    var push: String
    var timeout: Duration
    var keep: String?
    var json: Bool

    /// The page's member: the last of the names, after the peers.
    var pageUser: String { MeshCallPlan.names[peers - 1] }
    var peerNames: [String] { Array(MeshCallPlan.names.prefix(peers - 1)) }

    struct Report: Encodable {
        var peers: Int
        var page: String
        var members: [MeshPeerSummary?]
        /// The page's streams with every peer, then the streams between the peers.
        var pageStreams: [BrowserMeshVerdict.Stream]
        var streams: [MeshCallPlan.Stream]
        var verdict: CallPlan.Verdict
    }

    func run() async -> Int32 {
        let check = BrowserCallPlan(file: file, browserPath: browserPath, browserSends: nil, push: push,
                                    timeout: timeout, keep: keep)
        if let problem = check.problem() {
            Terminal.error("zonertc call --browser: \(problem)")
            return 1
        }
        let chromium = try! HeadlessChromium.locate(explicit: browserPath)
        let frames = (try? VideoFileSource.read(path: file))?.frames.count ?? 0
        let workspace = CallWorkspace(keep: keep, prefix: "zonertc-browser-mesh")
        let directory = workspace.directory, group = workspace.group
        let interrupt = InterruptWatch { group.signal(SIGTERM) }
        defer { interrupt.cancel() }
        func failure(_ message: String, members: [MeshPeerSummary?] = []) async -> Int32 {
            Terminal.error("zonertc call: \(message)\n\(workspace.logs.suffix(20_000))")
            if json {
                print((try? Terminal.json(Report(peers: peers, page: pageUser, members: members, pageStreams: [],
                                                 streams: [], verdict: .init(ok: false, text: message)))) ?? "{}")
            }
            await workspace.cleanUp()
            return 1
        }
        let url: String
        do throws(CallSetupError) { url = try await workspace.startStore(push: push) } catch {
            return await failure(error.message)
        }
        guard let endpoint = try? Endpoint(parsing: String(url.dropFirst("http://".count))) else {
            return await failure("the store daemon's URL \(url) is not http://HOST:PORT")
        }
        let tokens: [String: String]
        do {
            tokens = try await TokenFile.register(peerNames + [pageUser], storeURL: url, directory: directory,
                                                  newStore: keep == nil)
        } catch {
            return await failure("cannot register the members: \(error)")
        }
        let pageToken = ((try? String(contentsOfFile: tokens[pageUser]!, encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let room = CallWorkspace.newRoomName()
        let seconds = Int(timeout.components.seconds)
        // Every peer records what it receives: from the other peers FILE (which ends with their BYE), from the
        // page its camera, cut at FILE's frame count.
        let common = ["--store", url, "--room", room, "--json", "--send", file, "--peers", String(peers),
                      "--media-security", "dtls-srtp", "--record-frames", String(frames),
                      "--connect-timeout", "\(seconds)s", "--media-timeout", "\(seconds)s"]
        var children: [ChildProcess] = []
        for (index, name) in peerNames.enumerated() {
            let role = index == 0 ? ["--owner"] : ["--room-owner", peerNames[0]]
            let arguments = ["peer", "--me", name, "--token-file", tokens[name]!, "--seed", String(index + 1),
                             "--record", "\(directory)/received/\(name)", "--join-at", "stdin"] + role + common
            do {
                children.append(try ChildProcess(name: name, arguments: arguments, directory: directory, input: true))
            } catch {
                return await failure("cannot start \(name): \(error)")
            }
            group.children.append(children[index])
        }
        let token = pageToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? pageToken
        let page = "\(url)/call?room=\(room)&me=\(pageUser)&mesh=1&roomOwner=\(peerNames[0])&report=1"
            + "&frames=\(frames)&peers=\(peers - 1)&timeout=\(seconds)#token=\(token)"
        let browser: ChildProcess
        do {
            browser = try ChildProcess(name: "chromium", executable: chromium,
                                       arguments: HeadlessChromium.arguments(
                                           url: page, userDataDir: "\(directory)/chromium-profile"),
                                       directory: directory)
            group.children.append(browser)
        } catch { return await failure("cannot start \(chromium): \(error)") }
        if !json { Terminal.error("zonertc call: \(peerNames.joined(separator: ", ")) and the page (\(pageUser)) in \(room)") }
        // The peers prepare (store, room, sockets, DTLS) while Chromium starts; once the page's presence is in the
        // zone they are released together, so each peer's times run from one join and not from a start spread over
        // the browser's launch. A page that never joins releases them at the bound: the call then fails on the page.
        await MeshCallPlan.joinTogether(children, limit: timeout, ready: {
            await Self.pageJoined(room: room, page: pageUser, owner: peerNames[0], endpoint: endpoint,
                                  ownerToken: tokens[peerNames[0]]!, browser: browser, until: $0)
        })

        let statuses = await CallWorkspace.waitForPeers(children, limit: timeout + .seconds(10))
        let summaries = children.map { MeshPeerSummary(lastLineOf: $0.stdout) }
        if statuses.contains(where: { $0 == nil }) {
            return await failure("a peer did not end within \(timeout)", members: summaries)
        }
        // The page reports once it decoded FILE from every peer, then once per leg that ends: after the peers
        // left, its last report has each leg's final figures. Bounded: a page that stopped reporting is read
        // as it last reported.
        let store = group.children[0]
        let wanted = 1 + peerNames.count, end = ContinuousClock.now + .seconds(15)
        while Self.reports(in: store.stderr, user: pageUser) < wanted, ContinuousClock.now < end,
              store.process.isRunning, browser.process.isRunning {
            try? await Task.sleep(for: .milliseconds(50))
        }
        let report = BrowserCallPlan.report(endpoint: endpoint, room: room, user: pageUser, token: pageToken)
        let legs = zip(peerNames, summaries).map { name, summary in
            let leg = summary?.legs.last { $0.remote == pageUser }
            return BrowserMeshVerdict.PeerLeg(name: name, framesSent: leg?.media.framesSent,
                                              framesReceived: leg?.media.framesReceived)
        }
        let pageVerdict = BrowserMeshVerdict.check(report: report, page: pageUser, peers: legs, pageFrames: frames)
        let (streams, peerVerdict) = MeshCallPlan.verdict(names: peerNames, summaries: summaries,
                                                          statuses: statuses.map { $0! })
        let verdict = !peerVerdict.ok ? peerVerdict
            : CallPlan.Verdict(ok: pageVerdict.ok, text: pageVerdict.ok
                               ? "\(pageVerdict.text); \(streams.count) streams between the peers identical"
                               : pageVerdict.text)
        if json {
            print((try? Terminal.json(Report(peers: peers, page: pageUser, members: summaries,
                                             pageStreams: pageVerdict.streams, streams: streams,
                                             verdict: verdict))) ?? "{}")
        } else {
            for (child, summary) in zip(children, summaries) {
                print("== \(child.name)")
                print(summary?.text ?? child.stdout)
            }
            print("== streams")
            for s in pageVerdict.streams {
                print("  \(s.from)→\(s.to)".padding(toLength: 18, withPad: " ", startingAt: 0)
                      + "\(s.got)/\(s.expected) frames \(s.to == pageUser ? "decoded" : "received"), "
                      + (s.to == pageUser ? "\(s.dropped) dropped, first frame \(PeerSummary.ms(s.firstFrameMs)), " : "")
                      + (s.ok ? "ok" : "FAIL"))
            }
            for s in streams {
                print("  \(s.from)→\(s.to)".padding(toLength: 18, withPad: " ", startingAt: 0)
                      + "\(s.framesReceived)/\(s.framesSent) frames \(s.identical ? "identical" : "DIFFER"), "
                      + "first frame \(PeerSummary.ms(s.firstFrameMs))")
            }
            print(verdict.text)
        }
        if !verdict.ok { Terminal.error(workspace.logs.suffix(20_000).description) }
        await workspace.cleanUp()
        return verdict.ok ? 0 : 1
    }

    /// Waits (polling the zone as its owner, bounded by `end`) until `page`'s presence record is in the room's
    /// zone or the browser exited; whether it came.
    static func pageJoined(room: String, page: String, owner: String, endpoint: Endpoint, ownerToken path: String,
                           browser: ChildProcess, until end: ContinuousClock.Instant) async -> Bool {
        guard let token = try? TokenFile(path: path).read(), let roomID = try? RoomID(room) else { return false }
        let client = RemoteStoreClient(configuration: .init(endpoint: endpoint, token: token), userRecordName: owner,
                                       deviceID: "\(owner)-call-check")
        let id = RecordID(recordName: SignalRecordNames.callMember(page), zoneID: roomID.zoneID(owner: owner))
        while ContinuousClock.now < end, browser.process.isRunning {
            if case .found? = try? await client.lookupRecords([id], scope: .private).first { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// How many reports `user`'s page posted, by the store daemon's log.
    static func reports(in log: String, user: String) -> Int {
        log.split(separator: "\n").filter { $0.contains("call report") && $0.hasSuffix(" user=\(user)") }.count
    }
}
