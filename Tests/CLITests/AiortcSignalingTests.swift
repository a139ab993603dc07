// aiortc signaling with us through a real store daemon, with our records: the signaling half of
// the WebRTC interop (issue 14). Tests/Interop/aiortc_zone_peer.py runs aiortc's
// RTCPeerConnection and reads and writes SignalSession / SignalEnvelope / SignalIceChunk over
// the daemon's HTTP API; this side is our record codecs and our browser-dialect SDP over
// RemoteStoreClient. Our descriptions carry a made-up certificate fingerprint (DTLS is not in
// this build), so the calls stop once both descriptions are set: ICE and media need DTLS-SRTP.
import Foundation
import RecordStore
import SDP
import Signaling
import StoreServer
import Testing
import TestSupport
import ZoneCore

@Suite("aiortc signals through our store", .serialized)
struct AiortcSignalingTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/aiortc_zone_peer.py").path

    /// True when python3 can import aiortc; a failure under ZONERTC_CI=1, a skip message elsewhere.
    static func aiortcAvailable() async throws -> Bool {
        if try await offPool({ ExternalProgram.pythonHas("aiortc") }) { return true }
        let message = "python3 with aiortc not found (PyPI aiortc)"
        if ExternalProgram.underCI {
            Issue.record("\(message), and ZONERTC_CI=1 says it must be installed")
        } else {
            print("skipped: \(message); `python3 -m pip install aiortc` to run this test")
        }
        return false
    }

    /// Our side: a room owner on the daemon, with its zone and the signal record names.
    struct OurSide {
        let client: RemoteStoreClient
        let binding: RoomBinding
        let key: SessionKey
        let me: String
        let remote: String

        var names: SignalRecordNames { SignalRecordNames(sessionKey: key) }

        init(daemon: DaemonProcess, room: String, me: String, remote: String) async throws {
            let token = try await RemoteStoreClient.register(userName: me, at: daemon.endpoint)
            client = RemoteStoreClient(configuration: .init(endpoint: daemon.endpoint, token: token),
                                       userRecordName: me, deviceID: "zonertc")
            let roomID = try RoomID(room)
            binding = try await client.setUp(RoomSetup(roomID: roomID, role: .owner, myUserID: me, displayName: me))
                .get()
            key = try SessionKey(roomID: roomID, users: me, remote)
            self.me = me
            self.remote = remote
        }

        /// The record named `name`, once `helper` has said it saved it (its JSON line of type `event`).
        func record(named name: String, after event: String, from helper: ProcessWatch,
                    within limit: Duration = .seconds(20)) async throws -> Record {
            let line = "\"type\": \"\(event)\""
            guard helper.wait(within: limit, until: { $0.stdout.contains(line) }) else {
                throw SpawnFailure("the helper said no \(event) within \(limit): \(helper.stderr.suffix(2000))")
            }
            let found = try await client.lookupRecords([RecordID(recordName: name, zoneID: binding.zone)],
                                                       scope: binding.scope)
            guard case .found(let record) = found.first else {
                throw SpawnFailure("the helper said \(event), but there is no record \(name)")
            }
            return record
        }

        /// The remote's chunks of `epoch`, decoded.
        func chunks(epoch: CallEpoch) async throws -> [SignalIceChunk] {
            let changes = try await client.fetchZoneChanges(binding.zone, since: nil, resultsLimit: nil,
                                                            scope: binding.scope)
            return try changes.changed.filter { $0.recordType == SignalRecordType.iceChunk }
                .map(SignalIceChunk.init(decoding:)).filter { $0.callEpoch == epoch && $0.ownerUserID == remote }
        }
    }

    /// Our side in the browsers' dialect, with a made-up fingerprint.
    static func ourConfiguration(direction: MediaDirection) -> SilentVideoConfiguration {
        var random = SeededRandom(seed: 21)
        var config = SilentVideoConfiguration(
            sessionID: random.next() >> 1, iceCredentials: .random(using: &random),
            candidates: [ICECandidate(foundation: "1", priority: 2_130_706_431, address: .ip(.loopbackV4),
                                      port: 9, type: .host)],
            endOfCandidates: true, direction: direction,
            dtls: .init(fingerprint: .sha256(certificateDER: Array("not a certificate".utf8))))
        config.dialect = .webRTC
        config.source = .random(using: &random)
        return config
    }

    static func helper(_ daemon: DaemonProcess, room: String, me: String, remote: String,
                       direction: String) throws -> ProcessWatch {
        try spawnWatched([
            try ExternalProgram.require("python3", package: "python3"), script, "--store",
            "http://\(daemon.endpoint)", "--room", room, "--me", me, "--remote", remote, "--direction", direction,
            "--signaling-only", "--timeout", "20",
        ])
    }

    /// The helper's steps, in order (its connection-state lines left out: with no DTLS on our
    /// side aiortc's connection only ever starts and closes).
    static func steps(_ watch: ProcessWatch) -> [String] {
        events(watch).compactMap { $0["type"] as? String }.filter { $0 != "connection" }
    }

    /// The helper's JSON lines.
    static func events(_ watch: ProcessWatch) -> [[String: Any]] {
        watch.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    static func finish(_ watch: ProcessWatch) async throws -> Int32? {
        let status = try await offPool { watch.wait(within: .seconds(30)) }
        if status == nil { kill(watch.pid, SIGKILL) }
        return status
    }

    @Test("we offer, aiortc answers: our offer read from our records, its answer and chunk in ours")
    func weOfferAiortcAnswers() async throws {
        guard try await Self.aiortcAvailable() else { return }
        let daemon = try DaemonProcess(arguments: ["--memory"])
        let room = "room_aiortc01"
        let ours = try await OurSide(daemon: daemon, room: room, me: "_a_zonertc", remote: "_b_aiortc")
        let helper = try Self.helper(daemon, room: room, me: "_b_aiortc", remote: "_a_zonertc", direction: "recvonly")
        defer { if helper.wait(within: .zero) == nil { kill(helper.pid, SIGKILL) } }

        // Epoch, session and offer in one atomic request, as the negotiator saves them.
        let epoch = CallEpoch(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let offer = SessionDescription.silentVideoOffer(Self.ourConfiguration(direction: .sendOnly))
        let now = epoch.milliseconds
        let session = SignalSession(sessionKey: ours.key.rawValue, roomID: room, userID: ours.me,
                                    otherUserID: ours.remote, callEpoch: epoch, updatedAtMs: now)
        let envelope = SignalEnvelope(sessionKey: ours.key.rawValue, roomID: room, callEpoch: epoch,
                                      ownerUserID: ours.me, envelopeType: .offer, description: offer, updatedAtMs: now)
        let saved = try await ours.client.modifyRecords(ModifyRecordsRequest(
            saves: [session.record(over: nil, name: ours.names.session, in: ours.binding.zone),
                    envelope.record(name: ours.names.envelope(epoch: epoch, type: .offer), in: ours.binding.zone)],
            atomic: true), scope: ours.binding.scope)
        #expect(saved.failures.isEmpty)

        let answerRecord = try await ours.record(named: ours.names.envelope(epoch: epoch, type: .answer),
                                                     after: "answer-saved", from: helper)
        let answer = try SignalEnvelope(decoding: answerRecord)
        #expect(answer.ownerUserID == "_b_aiortc" && answer.envelopeType == .answer && answer.callEpoch == epoch)
        let remote = try RemoteVideoDescription(answer.description)
        // aiortc took VP8 at our 96 with our RTX 98, receives only, and is the DTLS client.
        #expect(remote.codecs.first?.name == "VP8" && remote.codecs.first?.payloadType == 96)
        #expect(remote.retransmissionPayloadType(for: 96) == 98)
        #expect(remote.direction == .receiveOnly && remote.mid == "0")
        #expect(remote.setupRole == .active && remote.localRoleForAnswer == .passive)
        #expect(!remote.fingerprints.isEmpty && remote.iceCredentials != nil)

        let status = try await Self.finish(helper)
        #expect(status == 0, "helper: \(helper.stdout) \(helper.stderr)")
        let chunks = try await ours.chunks(epoch: epoch)
        #expect(chunks.count == 1)
        #expect(chunks.first?.endOfCandidates == true && chunks.first?.candidates.isEmpty == false)
        #expect(chunks.first?.ufrag == remote.iceCredentials?.usernameFragment)
        #expect(chunks.first?.rejectedCandidates.isEmpty == true)
        #expect(Self.steps(helper) == ["ready", "offer-applied", "answer-saved", "done"])
    }

    @Test("aiortc offers, we answer: its session, offer and chunk decode as ours; it applies our answer")
    func aiortcOffersWeAnswer() async throws {
        guard try await Self.aiortcAvailable() else { return }
        let daemon = try DaemonProcess(arguments: ["--memory"])
        let room = "room_aiortc02"
        let ours = try await OurSide(daemon: daemon, room: room, me: "_z_zonertc", remote: "_a_aiortc")
        let helper = try Self.helper(daemon, room: room, me: "_a_aiortc", remote: "_z_zonertc", direction: "sendonly")
        defer { if helper.wait(within: .zero) == nil { kill(helper.pid, SIGKILL) } }

        let session = try SignalSession(decoding: try await ours.record(named: ours.names.session,
                                                                                 after: "offer-saved", from: helper))
        #expect(session.userID == "_a_aiortc" && session.otherUserID == "_z_zonertc")
        let epoch = session.callEpoch
        let offerName = ours.names.envelope(epoch: epoch, type: .offer)
        let offer = try SignalEnvelope(decoding: try await ours.record(named: offerName, after: "offer-saved",
                                                                               from: helper))
        #expect(offer.ownerUserID == "_a_aiortc" && offer.description.type == .offer)

        let answer = try SessionDescription.answer(to: offer.description,
                                                   Self.ourConfiguration(direction: .sendReceive))
        let video = try #require(answer.media.first)
        // aiortc sends only: we receive only, VP8 at its 97 with its RTX 98 first.
        #expect(answer.direction(for: video) == .receiveOnly)
        #expect(Array(video.payloadTypes.prefix(2)) == [97, 98])
        let envelope = SignalEnvelope(sessionKey: ours.key.rawValue, roomID: room, callEpoch: epoch,
                                      ownerUserID: ours.me, envelopeType: .answer, description: answer,
                                      updatedAtMs: epoch.milliseconds)
        _ = try await ours.client.save([envelope.record(name: ours.names.envelope(epoch: epoch, type: .answer),
                                                        in: ours.binding.zone)], scope: ours.binding.scope)

        let status = try await Self.finish(helper)
        #expect(status == 0, "helper: \(helper.stdout) \(helper.stderr)")
        let events = Self.events(helper)
        #expect(Self.steps(helper) == ["ready", "offer-saved", "answer-applied", "done"])
        // What aiortc made of our answer: it sends VP8 at 97 with RTX 98, NACK and PLI.
        let applied = try #require(events.first { $0["type"] as? String == "answer-applied" })
        #expect(applied["codec"] as? String == "video/VP8")
        #expect(applied["payloadType"] as? Int == 97 && applied["rtx"] as? Int == 98)
        #expect(applied["rtcp"] as? [String] == ["nack", "nack pli"])
        let chunks = try await ours.chunks(epoch: epoch)
        #expect(chunks.count == 1 && chunks.first?.endOfCandidates == true)
    }
}
