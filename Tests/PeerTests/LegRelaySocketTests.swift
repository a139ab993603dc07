// A group call's leg allocates each epoch on its TURN server from the relay socket its room lent that
// epoch, and holds it until the epoch's transport is drained (RoomCall lends only sockets no leg holds): a new epoch
// never allocates from the 5-tuple of an allocation still being deleted (RFC 8656 §2.2, §7.2, §7.3).

import ICE
import SDP
import Signaling
import STUN
import Testing
import ZoneCore
@testable import Peer

@Suite struct LegRelaySocketTests {
    let host = Endpoint(address: .loopbackV4, port: 41000)
    let sockets = [Endpoint(address: .loopbackV4, port: 41001), Endpoint(address: .loopbackV4, port: 41002)]
    let server = Endpoint(address: .loopbackV4, port: 3478)

    /// Where the leg's Allocate requests went out from, in order.
    private func allocationSources(_ call: inout PeerCall) -> [Endpoint] {
        var sources: [Endpoint] = []
        while let output = call.pollOutput() {
            if case .transmit(let bytes, let from, let to) = output, to == server,
               let message = try? STUNMessage(decoding: bytes, verifyingFingerprint: false),
               message.messageType.method == .allocate {
                sources.append(from)
            }
        }
        return sources
    }

    @Test func eachEpochAllocatesFromTheSocketLentIt() throws {
        let room = try RoomID("room_legsock1")
        let turn = TURNServerCredentials(server: server, username: "u", password: "p")
        let configuration = PeerCallConfiguration(
            myUserID: "_alice", remoteUserID: "_bob", signaling: .standard(.hybrid),
            transport: PeerTransportConfiguration(hostAddresses: [host], turnServers: [turn], relayOnly: true),
            seed: 5)
        var call = try PeerCall(leg: configuration,
                                binding: RoomBinding(roomID: room, role: .owner, myUserID: "_alice"))
        var random = SeededRandom(seed: 1)
        var now = Instant.seconds(1_700_000_000)
        call.handle(.start, now: now)
        func epoch(_ number: Int64, socket: Endpoint) -> [Endpoint] {
            let epoch = CallEpoch(milliseconds: number)
            let credentials = ICECredentials.random(using: &random)
            let offer = SessionDescription.silentVideoOffer(SilentVideoConfiguration(
                sessionID: 1, iceCredentials: credentials, dtls: nil))
            call.lendRelaySocket(socket)
            call.handle(.leg(.ice(.restartICE(epoch: epoch, credentials: credentials))), now: now)
            call.handle(.leg(.ice(.setLocalDescription(epoch: epoch, offer))), now: now)
            return allocationSources(&call)
        }
        #expect(epoch(1, socket: sockets[0]) == [sockets[0]])
        #expect(call.heldRelaySockets == [sockets[0]])
        // A second epoch allocates from the socket lent it. The first one's Allocate was never answered, so its
        // transport had nothing to delete and is drained at once: its socket is free again.
        now += .milliseconds(50)
        #expect(epoch(2, socket: sockets[1]) == [sockets[1]])
        #expect(!call.holdsRelaySocket(sockets[0]) && call.holdsRelaySocket(sockets[1]))
        #expect(call.heldRelaySockets == [sockets[1]])
    }
}
