import Foundation
import Media
import Net
import ICE
import Peer
import PeerNet
import RecordStore
import Signaling
import StoreServer
import ZoneCore

/// `zonertc peer`: one side of a call, negotiated through the store, over real UDP.
enum PeerCommand {
    static let spec = CommandSpec(
        path: ["peer"],
        summary: "Run one peer of a call: signal through the store, connect with ICE over UDP, stream.",
        options: [
            .value("--store", "URL|embedded:DIR", "(required) a store daemon (http://HOST:PORT) or a store directory opened in this process"),
            .value("--room", "ROOM", "(required) the room ID: room_ and 8 of a-z 0-9"),
            .value("--me", "ID", "(required) my user ID"),
            .value("--remote", "ID", "the other peer's user ID: a call of two; without it, join the room's group call "
                   + "(a mesh of up to 5 members)"),
            .flag("--owner", "create the room (the other peer, or every other member, joins it)"),
            .value("--room-owner", "ID", "without --remote or --owner: the user ID of the room's owner (whose zone it is)"),
            .value("--peers", "N", "without --remote: the group call is for N members (2–5); leave once the media to "
                   + "and from the N−1 others is done, or after 60 s if no other member joins"),
            .value("--join-at", "UNIX_MS|stdin", "without --remote: prepare (store, room, file, sockets, DTLS) and "
                   + "join at this moment, in ms since 1970; stdin: say 'prepared' on stderr, then read the moment "
                   + "as a line on standard input. Up to 5 s late joins at once; later, or beyond "
                   + "--connect-timeout, fails"),
            .value("--uplink", "KBPS", "without --remote: the uplink each leg gets a share of (b=AS of KBPS/(N−1))",
                   default: "2000"),
            .value("--answer-timeout", "DURATION", "without --remote: end a leg whose member does not answer within "
                   + "this (its offer fallback waits a fifth of it)", default: "40s"),
            .value("--token", "TOKEN", "bearer token for the store (default: $ZONERTC_TOKEN)"),
            .value("--token-file", "PATH", "read the bearer token from PATH; when PATH does not exist, register --me "
                   + "and keep its token there (mode 0600) for the next run"),
            .value("--send", "FILE", "stream this video file (IVF, H.264 Annex B, Y4M) once connected"),
            .value("--record", "OUT", "write the received stream to OUT, in the sender's container (without --remote: "
                   + "OUT is a directory, one file per sender)"),
            .value("--record-frames", "N", "with --record: the received stream ends after N frames, BYE or not "
                   + "(a browser's fake camera loops its file and never says BYE)"),
            .value("--pace", "MODE", "realtime (by the file's timestamps) or max (as fast as the path takes)", default: "realtime"),
            .value("--impair", "SPEC", "impair outgoing datagrams: loss=0.1,delay=20ms,jitter=5ms,reorder=0.05,"
                   + "reorder-gap=10ms,duplicate=0.01,seed=1 (--link's names; latency= works for delay=)"),
            .value("--sync", "STRATEGY", "how records are learned: push, poll-token, poll-fullscan, hybrid, legacy", default: "hybrid"),
            .value("--bind", "IP", "local address for the UDP socket (host candidate)", default: "127.0.0.1"),
            .value("--stun", "HOST:PORT", "a STUN server for server-reflexive candidates (repeatable)", repeatable: true),
            .value("--turn", "USER:PASS@HOST:PORT", "a TURN server for relayed candidates (repeatable)", repeatable: true),
            .flag("--relay-only", "pair only relayed candidates: every packet goes through the TURN relay"),
            MediaSecurityOption.spec("dtls-srtp (needs the WebRTC build) or none (plain RTP/AVPF)"),
            .value("--dtls-timeout", "DURATION", "with dtls-srtp: fail when the DTLS handshake is not done this long "
                   + "after ICE selects a pair", default: "10s"),
            .value("--connect-timeout", "DURATION", "fail when not connected this long after the start; without --remote, "
                   + "a leg that has no path this long after its offer fallback and --answer-timeout ends", default: "30s"),
            .value("--duration", "DURATION", "hang up this long after connecting (default: when media ends, or on SIGINT)"),
            .value("--media-timeout", "DURATION", "fail when the media has not ended this long after connecting"),
            .value("--store-requests", "N", "store requests in flight at once, 1–16 (1: one after the other)",
                   default: "4"),
            .value("--consent-expiry", "DURATION", "the path is lost after this long without a consent response (RFC 7675)", default: "30s"),
            .value("--reconnect-timeout", "DURATION", "after the path is lost, end with 'remote unreachable' unless a new epoch connects within this", default: "15s"),
            .value("--max-epoch-lead", "DURATION", "refuse signal records whose epoch is further ahead of this clock", default: "86400s"),
            .value("--seed", "N", "seed of the call's random choices", default: "1"),
            .flag("--json", "print the summary as one JSON object"),
        ],
        discussion: """
            Both peers run this command with the same --room; the one with --owner creates the room and
            the other joins it (retrying until it exists). The lower user ID makes the offer. Without
            --remote the peer joins the room's group call instead (docs/PROTOCOL.md §11): its presence
            record, one leg per member present (the later joiner offers), FILE sent on every leg; the
            summary has one line per leg. A 6th member leaves by itself with a clear message (exit 1). On a terminal
            a live line shows the call's progress on stderr; at the end a summary goes to stdout: time to
            signaling complete, to ICE connected, to the first frame, the selected pair and the counters.
            Exit 0 when the call completed, 1 when it failed (the reason is printed), 130 on SIGINT/SIGTERM
            after an orderly goodbye. embedded:DIR locks DIR: two peer processes need a store daemon.
            """,
        run: run)

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        let setup = try PeerSetup(args, spec: spec)
        return setup.remote == nil ? await setup.runMesh() : await setup.runCall()
    }
}

/// A `zonertc peer` command line, checked and turned into what a call needs.
struct PeerSetup {
    let storeSpec: String
    let roomID: RoomID
    let me: String
    /// The other peer of a call of two; nil: the room's group call.
    let remote: String?
    let owner: Bool
    /// Group call: the room owner's user ID (nil when we own it), members expected, uplink in kbit/s.
    let roomOwner: String?
    let peers: Int?
    /// Group call: the moment to join at once prepared (nil: as soon as ready).
    let joinAt: JoinMoment?
    let uplinkKbps: UInt64
    let answerTimeout: Duration
    let token: String?
    let tokenFile: String?
    let signaling: SignalingConfiguration
    let syncName: String
    let bind: IPAddress
    let stun: [Endpoint]
    let turn: [TURNServerCredentials]
    let relayOnly: Bool
    let connectTimeout: Duration
    let duration: Duration?
    let mediaTimeout: Duration?
    let recordFrames: Int?
    let consent: ConsentConfiguration
    let reconnectTimeout: Duration
    let seed: UInt64
    let json: Bool
    let send: CallMediaConfiguration.Outgoing?
    let sendPath: String?
    let record: String?
    let pace: MediaSender.Pace
    let impairment: ImpairmentSpec?
    let mediaSecurity: MediaProtectionMode
    let mediaSecurityName: String
    let dtlsTimeout: Duration
    let storeRequestsInFlight: Int

    init(_ args: ParsedCommand, spec: CommandSpec) throws {
        func usage(_ message: String) -> UsageError { UsageError(message: message, command: spec) }
        storeSpec = try args.required("--store")
        do { roomID = try RoomID(try args.required("--room")) } catch let error as UsageError { throw error } catch {
            throw usage("--room: \(error)")
        }
        me = try args.required("--me")
        remote = args.string("--remote")
        guard me != remote else { throw usage("--me and --remote must differ") }
        owner = args.has("--owner")
        roomOwner = args.string("--room-owner")
        peers = try args.int("--peers", in: 2...5)
        if let text = args.string("--join-at") {
            do { joinAt = try JoinMoment(parsing: text) } catch { throw usage("--join-at \(error)") }
        } else {
            joinAt = nil
        }
        uplinkKbps = try args.int("--uplink", in: UInt64(8)...UInt64(10_000_000)) ?? 2000
        if remote != nil {
            for flag in ["--room-owner", "--peers", "--uplink", "--answer-timeout", "--join-at"] where !args.strings(flag).isEmpty {
                throw usage("\(flag) is for a group call: it does not go with --remote")
            }
        } else {
            guard owner != (roomOwner != nil) else {
                throw usage("without --remote, give --owner (this peer creates the room) or --room-owner ID")
            }
            guard roomOwner != me else { throw usage("--room-owner is another user: use --owner for yourself") }
            guard args.string("--duration") == nil else { throw usage("--duration needs --remote") }
        }
        tokenFile = args.string("--token-file")
        guard args.string("--token") == nil || tokenFile == nil else {
            throw usage("--token and --token-file exclude each other")
        }
        let environment = ProcessInfo.processInfo.environment["ZONERTC_TOKEN"]
        token = args.string("--token") ?? (tokenFile == nil ? environment : nil)
        syncName = args.string("--sync") ?? "hybrid"
        guard let configuration = SignalingConfiguration.named(syncName), syncName != "standard" else {
            throw usage("--sync \(syncName): choose one of push, poll-token, poll-fullscan, hybrid, legacy")
        }
        var chosenSignaling = configuration
        do { bind = try IPAddress(parsing: args.string("--bind") ?? "127.0.0.1") } catch {
            throw usage("--bind: \(error)")
        }
        var servers: [Endpoint] = []
        for text in args.strings("--stun") {
            do { servers.append(try Endpoint(parsing: text)) } catch { throw usage("--stun \(text): \(error)") }
        }
        stun = servers
        var relays: [TURNServerCredentials] = []
        for text in args.strings("--turn") {
            do { relays.append(try TURNServerCredentials(parsing: text)) } catch { throw usage("--turn: \(error)") }
        }
        turn = relays
        relayOnly = args.has("--relay-only")
        guard !relayOnly || !turn.isEmpty else { throw usage("--relay-only needs a --turn server") }
        func duration(_ flag: String) throws -> Duration? {
            guard let text = args.string(flag) else { return nil }
            do { return try PushProfile.parseDuration(text) } catch { throw usage("\(flag) \(text): \(error)") }
        }
        connectTimeout = try duration("--connect-timeout") ?? .seconds(30)
        answerTimeout = try duration("--answer-timeout") ?? .seconds(40)
        guard answerTimeout >= .milliseconds(100) else { throw usage("--answer-timeout: at least 100ms") }
        self.duration = try duration("--duration")
        mediaTimeout = try duration("--media-timeout")
        guard mediaTimeout.map({ $0 > .zero }) ?? true else { throw usage("--media-timeout must be positive") }
        let inFlight = args.string("--store-requests") ?? "4"
        guard let n = Int(inFlight), (1...16).contains(n) else {
            throw usage("--store-requests \(inFlight): give a number from 1 to 16")
        }
        storeRequestsInFlight = n
        let expiry = try duration("--consent-expiry") ?? .seconds(30)
        guard expiry >= .milliseconds(300) else { throw usage("--consent-expiry: at least 300ms") }
        // RFC 7675's ratios: a check every 5 s (or a sixth of the expiry, whichever is shorter),
        // `disconnected` after a third of it.
        consent = ConsentConfiguration(interval: min(.seconds(5), expiry / 6), disconnectedAfter: expiry / 3,
                                       expiry: expiry)
        reconnectTimeout = try duration("--reconnect-timeout") ?? .seconds(15)
        chosenSignaling.negotiator.maxEpochLead = try duration("--max-epoch-lead") ?? .seconds(86_400)
        signaling = chosenSignaling
        seed = try args.int("--seed", in: UInt64(0)...UInt64.max) ?? 1
        json = args.has("--json")
        let paceText = args.string("--pace") ?? "realtime"
        guard let pace = MediaSender.Pace(rawValue: paceText) else {
            throw usage("--pace \(paceText): choose realtime or max")
        }
        self.pace = pace
        if let text = args.string("--impair") {
            do { impairment = try ImpairmentSpec(parsing: text) } catch { throw usage("--impair \(text): \(error)") }
        } else {
            impairment = nil
        }
        let securityName = args.string("--media-security") ?? MediaProtectionMode.defaultName
        mediaSecurityName = securityName
        dtlsTimeout = try duration("--dtls-timeout") ?? .seconds(10)
        guard dtlsTimeout >= .milliseconds(100) else { throw usage("--dtls-timeout: at least 100ms") }
        do { mediaSecurity = try MediaProtectionMode(named: securityName) } catch {
            throw usage("--media-security \(securityName): \(error)")
        }
        record = args.string("--record")
        recordFrames = try args.int("--record-frames", in: 1...Int.max)
        guard recordFrames == nil || record != nil else { throw usage("--record-frames needs --record") }
        sendPath = args.string("--send")
        if let path = sendPath {
            guard FileManager.default.isReadableFile(atPath: path) else { throw usage("--send: cannot read \(path)") }
            send = nil  // read in runCall, where a bad file is a failure (exit 1), not a usage error
        } else {
            send = nil
        }
    }

    /// Opens the store, sets up the room, runs the call, prints the summary; returns the exit code.
    func runCall() async -> Int32 {
        guard let remote else { return fail("no --remote") }
        let start = WallClock().now()
        mediaSecurity.warmUp()  // beside the store and the room's setup, before the call needs DTLS
        let client: any StoreClient
        var embedded: EmbeddedStore?
        do {
            (client, embedded) = try await openStore()
        } catch {
            return fail("cannot use the store \(storeSpec): \(error)")
        }
        defer { embedded?.close() }
        let binding: RoomBinding
        do {
            binding = try await joinRoom(client, owner: remote, deadline: start + connectTimeout)
        } catch {
            return fail("cannot set up room \(roomID.rawValue): \(error)")
        }
        // A participant that cannot retry (nothing tells it a share appeared) may start on this line.
        Logger(component: "peer").info("room \(roomID.rawValue) ready", ["role": owner ? "owner" : "participant"])
        var outgoing: CallMediaConfiguration.Outgoing?
        if let sendPath {
            do {
                let (format, frames) = try VideoFileSource.read(path: sendPath)
                guard !frames.isEmpty else { return fail("\(sendPath) holds no frames") }
                outgoing = .init(format: format, frames: frames)
            } catch {
                return fail("cannot read \(sendPath): \(error)")
            }
        }
        let socket: UDPSocket
        // UDP_GRO: the other peer's media trains (UDP_SEGMENT sends) arrive as one buffer each on loopback.
        do { socket = try UDPSocket(bind: Endpoint(address: bind, port: 0), coalescedReceive: true) } catch {
            return fail("cannot bind a UDP socket on \(bind): \(error)")
        }
        var configuration = PeerCallConfiguration(
            myUserID: me, remoteUserID: remote, signaling: signaling,
            transport: PeerTransportConfiguration(hostAddresses: [socket.localEndpoint], stunServers: stun,
                                                  turnServers: turn, relayOnly: relayOnly, consent: consent),
            media: CallMediaConfiguration(send: outgoing, receive: record != nil, pace: pace,
                                          receiveFrames: recordFrames),
            lifetime: CallLifetime(connectTimeout: connectTimeout, holdAfterConnect: duration,
                                   endAfterMedia: outgoing != nil || record != nil, mediaTimeout: mediaTimeout,
                                   reconnectTimeout: reconnectTimeout),
            seed: seed)
        configuration.mediaSecurity = mediaSecurity
        configuration.dtlsHandshakeTimeout = dtlsTimeout
        await mediaSecurity.warmedUp()  // a call's first DTLS-SRTP association must not pay it
        let call: PeerCall
        do { call = try PeerCall(configuration: configuration, binding: binding) } catch {
            return fail("cannot start the call: \(error)")
        }
        var options = PeerRunner.Options()
        options.impairment = impairment
        options.storeRequestsInFlight = storeRequestsInFlight
        let progress = ProgressLine(enabled: !json && isatty(STDERR_FILENO) == 1)
        let recorder = record.map { Recorder(path: $0) }
        let runner: PeerRunner
        do {
            runner = try PeerRunner(call: call, client: client, sockets: [socket], options: options) { event, call in
                progress.update(event, call)
                if case .frame(let frame) = event, let format = call.media.remoteFormat {
                    recorder?.write(frame, format: format)
                }
            }
        } catch {
            return fail("cannot start the event loop: \(error)")
        }
        let signals = InterruptWatch { runner.interrupt() }
        var outcome = await runner.run()
        signals.cancel()
        progress.finish()
        if let recorder, let problem = recorder.finish() {
            if outcome == .completed { outcome = .failed(problem) }
        }
        guard let snapshot = runner.final else { return fail("the call ended without a summary") }
        var summary = PeerSummary(me: me, remote: remote, room: roomID.rawValue, sync: syncName,
                                  outcome: outcome, snapshot: snapshot, runner: runner.finalReport)
        summary.mediaSecurity = mediaSecurityName
        if json {
            print((try? Terminal.json(summary)) ?? "{}")
        } else {
            print(summary.text)
        }
        switch outcome {
        case .completed: return 0
        case .failed: return 1
        case .interrupted: return 130
        }
    }

    func fail(_ message: String) -> Int32 {
        if json, let remote {
            let summary = PeerSummary(me: me, remote: remote, room: roomID.rawValue, sync: syncName,
                                      outcome: .failed(message), snapshot: nil)
            print((try? Terminal.json(summary)) ?? "{}")
        }
        Terminal.error("zonertc peer: \(message)")
        return 1
    }

    func openStore() async throws -> (any StoreClient, EmbeddedStore?) {
        if storeSpec.hasPrefix("embedded:") {
            let directory = String(storeSpec.dropFirst("embedded:".count))
            guard !directory.isEmpty else { throw StoreError(.invalidArguments, "embedded: needs a directory") }
            let store = try EmbeddedStore(options: EmbeddedStore.Options(directory: directory))
            return (store.client(user: me, deviceID: "\(me)-device"), store)
        }
        let endpoint = try RemoteStoreClient.endpoint(fromURL: storeSpec)
        let bearer: String
        if let token {
            bearer = token
        } else if let tokenFile {
            bearer = try await TokenFile(path: tokenFile).tokenRegisteringIfMissing(user: me, at: endpoint)
        } else {
            // Without a token, register --me: that works once per user, as tokens are never handed out again.
            do { bearer = try await RemoteStoreClient.register(userName: me, at: endpoint) } catch let e as StoreError
                where e.code == .alreadyExists {
                throw StoreError(.alreadyExists, "\(me) is already registered on \(storeSpec): pass its token with "
                                 + "--token or --token-file (a file written when it registered)")
            }
        }
        var configuration = RemoteStoreClient.Configuration(endpoint: endpoint, token: bearer)
        configuration.requestTimeout = .seconds(10)
        return (RemoteStoreClient(configuration: configuration, userRecordName: me, deviceID: "\(me)-device"), nil)
    }

    /// The owner creates the room; the other peer retries joining until the owner has made it.
    func joinRoom(_ client: any StoreClient, owner ownerUserID: String, deadline: Instant) async throws -> RoomBinding {
        let setup = RoomSetup(roomID: roomID, role: owner ? .owner : .participant(ownerUserID: ownerUserID), myUserID: me,
                              displayName: me, roomName: roomID.rawValue)
        var wait = Duration.milliseconds(5)
        while true {
            switch await client.setUp(setup) {
            case .success(let binding):
                return binding
            case .failure(let error):
                let retryable = !owner && [.zoneNotFound, .unknownItem, .permissionFailure]
                    .contains(error.code)
                guard retryable || error.code.isRetryable, WallClock().now() + wait < deadline else { throw error }
                try? await Task.sleep(for: wait)
                wait = min(wait * 2, .milliseconds(20))
            }
        }
    }
}

/// Writes received frames to the record file, in the sender's container (opened at the first frame).
final class Recorder: @unchecked Sendable {
    let path: String
    private var sink: VideoFileSink?
    private var problem: String?

    init(path: String) { self.path = path }

    func write(_ frame: VideoFrame, format: VideoStreamFormat) {
        guard problem == nil else { return }
        do {
            if sink == nil { sink = try VideoFileSink(path: path, format: format) }
            try sink!.write(frame)
        } catch {
            problem = "cannot write \(path): \(error)"
        }
    }

    /// Closes the file; returns what went wrong, if anything.
    func finish() -> String? {
        do { try sink?.finish() } catch { problem = problem ?? "cannot finish \(path): \(error)" }
        if sink == nil && problem == nil { problem = "no frame was received to record in \(path)" }
        return problem
    }
}
