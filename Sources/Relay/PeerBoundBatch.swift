import ZoneCore

/// Client datagrams of one received batch bound for peers, payloads left where they landed, handed
/// out per relayed socket with each socket's datagrams grouped by peer.
///
/// A flood from several clients interleaves allocations in one receive batch, and one allocation
/// may alternate between peers; `SendBatch` joins only *consecutive* equal-sized datagrams to one
/// destination into a UDP_SEGMENT run. Grouping by (socket, peer) makes those runs as long as the
/// batch allows. Order is kept within each flow (one socket to one peer); RFC 8656 §12 relays over
/// UDP, which promises no order across flows.
struct PeerBoundBatch {
    struct Datagram {
        /// The relay handle (allocation slot) whose socket sends it.
        let handle: Int
        let start: UnsafeRawPointer
        let length: Int
        let peer: Endpoint
    }

    private var queued: [Datagram] = []
    private var handedOut: [Bool] = []

    init(capacity: Int) {
        queued.reserveCapacity(capacity)
        handedOut.reserveCapacity(capacity)
    }

    var isEmpty: Bool { queued.isEmpty }

    mutating func append(_ datagram: Datagram) { queued.append(datagram) }

    /// Hands out every queued datagram through `datagram`, socket by socket in order of first
    /// arrival and within a socket peer by peer, calling `endOfSocket(handle)` after each socket's
    /// last one; then empties the batch. Quadratic in the batch, which holds at most one receive
    /// batch (64): cheaper than hashing per datagram.
    mutating func drain(_ datagram: (Datagram) -> Void, endOfSocket: (Int) -> Void) {
        guard !queued.isEmpty else { return }
        handedOut.removeAll(keepingCapacity: true)
        handedOut.append(contentsOf: repeatElement(false, count: queued.count))
        for first in queued.indices where !handedOut[first] {
            let handle = queued[first].handle
            for lead in first..<queued.count where !handedOut[lead] && queued[lead].handle == handle {
                let peer = queued[lead].peer
                for k in lead..<queued.count where !handedOut[k] && queued[k].handle == handle
                    && queued[k].peer == peer {
                    handedOut[k] = true
                    datagram(queued[k])
                }
            }
            endOfSocket(handle)
        }
        queued.removeAll(keepingCapacity: true)
    }
}
