// Which leg of a group call a datagram on the shared sockets is for. Every leg's transports use the
// peer's sockets, so the remote address tells the leg once a leg has sent to it (its checks, its
// media); a connectivity check from an address no leg has sent to yet (a peer-reflexive candidate,
// RFC 8445 §7.3.1.3) names the leg's local username fragment first in its USERNAME (§7.2.2).
// A TURN server's address is shared by every leg's allocation: its responses go to the leg awaiting
// them.

import ICE
import STUN
import Signaling
import ZoneCore

/// Routes datagrams to legs: remote addresses learned from what each leg sent.
struct RoomDatagramRoute {
    private var byAddress: [Endpoint: LegID] = [:]
    /// Addresses more than one leg sent to (a server's): never routed by address.
    private var shared: Set<Endpoint> = []

    /// `leg` sent to `address`.
    mutating func note(sent address: Endpoint, by leg: LegID) {
        guard !shared.contains(address) else { return }
        if let known = byAddress[address], known != leg {
            byAddress[address] = nil
            shared.insert(address)
            return
        }
        byAddress[address] = leg
    }

    /// `leg` is gone: its addresses may be another's.
    mutating func forget(_ leg: LegID) {
        byAddress = byAddress.filter { $0.value != leg }
    }

    /// The leg `bytes` from `from` is for, if one can be told.
    func leg(for bytes: [UInt8], from: Endpoint, among legs: [RoomCallLeg]) -> RoomCallLeg? {
        if let id = byAddress[from], let leg = legs.first(where: { $0.id == id }) { return leg }
        if PacketDemultiplexer.classify(bytes) == .stun,
           let message = try? STUNMessage(decoding: bytes, verifyingFingerprint: false) {
            if let username = message.username, let colon = username.firstIndex(of: ":") {
                let fragment = username[..<colon]
                if let leg = legs.last(where: { $0.call.hasLocalFragment(fragment) }) { return leg }
            }
        }
        if let leg = legs.first(where: { $0.call.awaitsResponse(bytes, from: from) }) { return leg }
        return legs.count == 1 ? legs.first : nil
    }
}
