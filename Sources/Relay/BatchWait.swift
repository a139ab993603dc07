// When the relay rests before reading again. A relayed datagram costs the relay one receive and
// one delivery into its receiver's socket, and on top of those a share of the system calls,
// wake-ups and UDP_SEGMENT messages of its batch: the fewer datagrams a batch holds, the more
// each pays. Under a flood of ChannelData from many clients a wake-up that reads at once finds a
// handful waiting; resting a little first lets the batch fill (interrupt moderation, as a NIC's
// rx-usecs). It is taken only when a read found more than one datagram, so a relay that is not
// busy reads each datagram as soon as it arrives and adds no delay. A rest that gathered nothing
// (traffic that comes in bursts further apart than the rest: each burst is read whole anyway)
// only costs a sleep, so after a few in a row the relay reads at once for a while before it
// tries again; a flood has gaps too, so one idle rest alone changes nothing.

/// The pause a relay worker asks its loop for after a read.
struct BatchWait: Equatable, Sendable {
    /// A read that returned at least this many datagrams shows the relay busy.
    static let busyBatch = 2
    /// Rests in a row that gathered nothing, after which the relay stops resting for a while.
    static let idleRestsToBackOff = 2
    /// Reads without a rest after that.
    static let readsAfterIdleRests = 32

    /// How long to rest; zero turns batch waits off.
    let pause: Duration
    /// Rests in a row that gathered nothing.
    private var idleRests = 0
    /// Reads left before resting is tried again.
    private var readsWithoutRest = 0

    init(pause: Duration) {
        self.pause = pause
    }

    /// The pause to take after a read (of every datagram waiting on one socket) that returned
    /// `datagrams`, or nil to read again as soon as anything arrives. `lastRestGathered` says
    /// whether the rest before this read found anything ready when it ended (nil: no rest came
    /// before it).
    mutating func pause(afterReading datagrams: Int, lastRestGathered: Bool?) -> Duration? {
        guard pause > .zero else { return nil }
        switch lastRestGathered {
        case true?: idleRests = 0
        case false?:
            idleRests += 1
            if idleRests >= Self.idleRestsToBackOff {
                idleRests = 0
                readsWithoutRest = Self.readsAfterIdleRests
            }
        case nil: break
        }
        if readsWithoutRest > 0 {
            readsWithoutRest -= 1
            return nil
        }
        return datagrams >= Self.busyBatch ? pause : nil
    }
}
