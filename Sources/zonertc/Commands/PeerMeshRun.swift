import Foundation
import Harness
import Media
import Net
import Peer
import PeerNet
import RecordStore
import Signaling
import Simulation
import ZoneCore

/// `zonertc peer` without `--remote`: this peer joins the room's group call (docs/PROTOCOL.md §11).
extension PeerSetup {
    /// Opens the store, sets up the room, runs the group call, prints the summary; returns the exit code.
    func runMesh() async -> Int32 {
        let start = WallClock().now()
        var startup = MeshPeerSummary.Startup(since: start)
        do { try joinAt?.checkEarly(deadline: start + connectTimeout, now: start) } catch {
            return meshFail("--join-at: \(error)")
        }
        mediaSecurity.warmUp()
        // The file is read beside the store's round trips (opening it, setting the room up): the call
        // needs it only once it joins.
        let reading = sendPath.map { path in
            Task.detached { () -> Result<(format: VideoStreamFormat, frames: [VideoFrame]), VideoFileError> in
                do throws(VideoFileError) { return .success(try VideoFileSource.read(path: path)) } catch {
                    return .failure(error)
                }
            }
        }
        let rehearsal = joinAt == nil ? nil
            : MeshRehearsal.start(signaling: signaling, security: mediaSecurity, pace: pace, file: reading)
        let client: any StoreClient
        var embedded: EmbeddedStore?
        do {
            (client, embedded) = try await openStore()
        } catch {
            return meshFail("cannot use the store \(storeSpec): \(error)")
        }
        defer { embedded?.close() }
        startup.mark(\.storeOpened)
        // The push stream is opened beside the room's setup: it needs only the user, and the call
        // would otherwise wait for its round trip before joining.
        let pushStream = Task { [client] in try await client.notifications() }
        let binding: RoomBinding
        do {
            binding = try await joinRoom(client, owner: roomOwner ?? me, deadline: start + connectTimeout)
        } catch {
            return meshFail("cannot set up room \(roomID.rawValue): \(error)")
        }
        startup.mark(\.roomReady)
        Logger(component: "peer").info("room \(roomID.rawValue) ready", ["role": owner ? "owner" : "participant"])
        var outgoing: CallMediaConfiguration.Outgoing?
        if let sendPath, let reading {
            switch await reading.value {
            case .success(let (format, frames)):
                guard !frames.isEmpty else { return meshFail("\(sendPath) holds no frames") }
                outgoing = .init(format: format, frames: frames)
            case .failure(let error):
                return meshFail("cannot read \(sendPath): \(error)")
            }
        }
        startup.mark(\.mediaRead)
        if let record {
            do { try FileManager.default.createDirectory(atPath: record, withIntermediateDirectories: true) } catch {
                return meshFail("cannot make the directory \(record): \(error)")
            }
        }
        let socket: UDPSocket
        do { socket = try UDPSocket(bind: Endpoint(address: bind, port: 0), coalescedReceive: true) } catch {
            return meshFail("cannot bind a UDP socket on \(bind): \(error)")
        }
        // Each leg allocates on the TURN servers from a socket of its own (RoomCallConfiguration.relaySockets).
        var relaySockets: [UDPSocket] = []
        if !turn.isEmpty {
            let count = RoomCallConfiguration.relaySocketCount(maxMembers: RoomSignalingConfiguration().maxMembers)
            do {
                for _ in 0..<count {
                    relaySockets.append(try UDPSocket(bind: Endpoint(address: bind, port: 0), coalescedReceive: true))
                }
            } catch {
                return meshFail("cannot bind the legs' relay sockets on \(bind): \(error)")
            }
        }
        startup.mark(\.socketsBound)
        var room = RoomSignalingConfiguration(signaling: signaling)
        room.uplinkKbps = uplinkKbps
        room.answerTimeout = answerTimeout
        room.offerFallback = answerTimeout / 5
        // A call for a known number of members does not wait for them forever, with or without media.
        if peers != nil { room.aloneTimeout = RoomCallConfiguration.aloneTimeout }
        let hasMedia = outgoing != nil || record != nil
        var configuration = RoomCallConfiguration(
            myUserID: me, room: room,
            transport: PeerTransportConfiguration(hostAddresses: [socket.localEndpoint], stunServers: stun,
                                                  turnServers: turn, relayOnly: relayOnly, consent: consent),
            media: CallMediaConfiguration(send: outgoing, receive: record != nil, pace: pace,
                                          receiveFrames: recordFrames),
            legLifetime: CallLifetime(mediaTimeout: mediaTimeout, reconnectTimeout: reconnectTimeout),
            leaveAfterMedia: hasMedia ? peers.map { $0 - 1 } : nil, seed: seed)
        // The others may leave the moment their own media is done: ours may still wait on their last packets.
        configuration.leaveAfterMediaDelay = .milliseconds(500)
        configuration.mediaSecurity = mediaSecurity
        configuration.dtlsHandshakeTimeout = dtlsTimeout
        // A leg whose remote sent its description and then nothing fails --connect-timeout after the room's
        // own bounds on waiting for one (--answer-timeout and its fallback) could have passed.
        configuration.legConnectGrace = connectTimeout
        configuration.relaySockets = relaySockets.map(\.localEndpoint)
        await mediaSecurity.warmedUp()
        startup.mark(\.securityReady)
        await rehearsal?.value
        if let joinAt {
            do { try await joinAt.wait(deadline: start + connectTimeout) } catch {
                return meshFail("--join-at: \(error)")
            }
        }
        let cpuAtJoin = CPUTime.now()
        let call: RoomCall
        do { call = try RoomCall(configuration: configuration, binding: binding, now: WallClock().now()) } catch {
            return meshFail("cannot join the call: \(error)")
        }
        var options = RoomRunner.Options()
        options.impairment = impairment
        options.storeRequestsInFlight = storeRequestsInFlight
        options.pushStream = pushStream
        let recorders = MeshRecorders(directory: record)
        let allPairsCPU = AllPairsCPU(others: peers.map { $0 - 1 })
        let runner: RoomRunner
        do {
            runner = try RoomRunner(call: call, client: client, sockets: [socket] + relaySockets,
                                    options: options) { event, call in
                if case .leg(let id, .frame(let frame)) = event {
                    allPairsCPU.frame(from: id.remote)
                    if let format = call.remoteFormat(of: id) { recorders.write(frame, format: format, from: id.remote) }
                }
            }
        } catch {
            return meshFail("cannot start the event loop: \(error)")
        }
        let signals = InterruptWatch { runner.interrupt() }
        // Bounded: a group call that never gets its members ends at the connect timeout.
        let watchdog = Task {
            try? await Task.sleep(for: connectTimeout + (mediaTimeout ?? .seconds(600)))
            runner.interrupt()
        }
        var outcome = await runner.run()
        watchdog.cancel()
        signals.cancel()
        let problems = recorders.finish()
        if let problem = problems.first, outcome == .completed { outcome = .failed(problem) }
        guard let snapshot = runner.final else { return meshFail("the call ended without a summary") }
        var summary = MeshPeerSummary(me: me, room: roomID.rawValue, sync: syncName, outcome: outcome,
                                      snapshot: snapshot, expected: peers, runner: runner.finalReport)
        summary.mediaSecurity = mediaSecurityName
        summary.launchedAtMs = start.millisecondsSinceEpoch
        summary.startup = startup
        summary.cpu = MeshPeerSummary.CPU(beforeJoinMs: cpuAtJoin * 1000,
                                          toAllPairsMs: allPairsCPU.reached.map { ($0 - cpuAtJoin) * 1000 })
        if let peers, outcome == .completed, summary.legs.filter({ $0.outcome == "completed" }).count < peers - 1 {
            summary.outcome = "failed"
            summary.reason = "media with \(summary.legs.filter { $0.outcome == "completed" }.count) of the \(peers - 1) "
                + "other members completed"
        }
        print(json ? ((try? Terminal.json(summary)) ?? "{}") : summary.text)
        switch summary.outcome {
        case "completed": return 0
        case "interrupted": return 130
        default: return 1
        }
    }

    private func meshFail(_ message: String) -> Int32 {
        if json {
            let summary = MeshPeerSummary(me: me, room: roomID.rawValue, sync: syncName, outcome: .failed(message),
                                          snapshot: nil, expected: peers)
            print((try? Terminal.json(summary)) ?? "{}")
        }
        Terminal.error("zonertc peer: \(message)")
        return 1
    }
}

/// One recording per sender of a group call: DIR/from-USER, in the sender's container.
final class MeshRecorders: @unchecked Sendable {
    private let directory: String?
    private let lock = NSLock()
    private var recorders: [String: Recorder] = [:]

    init(directory: String?) { self.directory = directory }

    func write(_ frame: VideoFrame, format: VideoStreamFormat, from user: String) {
        guard let directory else { return }
        lock.withLock {
            let recorder = recorders[user] ?? Recorder(path: "\(directory)/from-\(user)")
            recorders[user] = recorder
            recorder.write(frame, format: format)
        }
    }

    /// Closes every file; what went wrong, if anything.
    func finish() -> [String] {
        lock.withLock { recorders.keys.sorted().compactMap { recorders[$0]?.finish() } }
    }
}
