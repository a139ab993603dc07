import CSystem

/// Where the datagrams lie in one buffer that a socket with UDP_GRO on read: the kernel joins a train
/// of datagrams from one source into one buffer (udp_gro_receive; on loopback a UDP_SEGMENT send
/// arrives whole) and says in a UDP_GRO control message how long each piece but the last is. Each
/// range is then handed on as its own datagram, checked like any other; nothing is copied.
public struct CoalescedDatagrams: Sequence, IteratorProtocol {
    /// The segment size of a message whose control data says nothing usable (`cs_gro_segment_size`).
    public static let unknownSegmentSize: Int32 = -1

    private let length: Int
    private let segmentSize: Int
    private var offset = 0
    private var done = false

    /// The datagrams of a `length`-byte message with the kernel's `segmentSize`: 0 means one
    /// datagram (the kernel reports a size only for a coalesced message); a size at or above the
    /// length is one datagram too. A negative size (unknown) gives none: where one datagram ends and
    /// the next begins cannot be told, so the message is dropped rather than read as one.
    public init(length: Int, segmentSize: Int32) {
        self.length = Swift.max(0, length)
        self.segmentSize = Int(segmentSize)
        done = segmentSize < 0
    }

    public mutating func next() -> Range<Int>? {
        guard !done else { return nil }
        guard segmentSize > 0, segmentSize < length else {
            done = true
            return 0..<length
        }
        let start = offset
        let end = Swift.min(length, start + segmentSize)
        offset = end
        done = end == length
        return start..<end
    }

    /// The segment size in a message's control data (what recvmsg left in `msg_control`): 0 when
    /// there is no UDP_GRO message, `unknownSegmentSize` when the control data is malformed.
    public static func segmentSize(control: UnsafeRawBufferPointer) -> Int32 {
        Int32(cs_gro_segment_size(control.baseAddress, control.count))
    }
}
