// A receive-side jitter buffer (RFC 3550 §6.4.1 on interarrival jitter; the frame boundaries
// come from the marker bit and timestamp, RFC 3551 §4.1). Packets are held by extended sequence
// number (SequenceUnwrapper), duplicates and late packets are dropped, and complete frames —
// consecutive packets from a frame boundary to the marker — are depacketized and emitted in
// sequence order as soon as they are complete.
//
// Time only decides when to stop waiting: at the start of a stream the buffer waits `latency`
// after the first arrival (so packets reordered ahead of the first one still count), and when a
// packet is missing it waits until the oldest buffered packet is `latency` old, then skips the
// gap (reporting it) to the next complete frame. Sans-I/O: `insert` and `poll` take `now`.

import ZoneCore

/// The jitter buffer's knobs.
public struct JitterBufferConfiguration: Equatable, Sendable {
    /// How long a packet may wait for the ones before it (the playout delay).
    public var latency: Duration
    /// The most packets held; more are refused as overflow.
    public var maxPackets: Int
    /// How long the stream start waits for packets reordered ahead of the first arrival; nil
    /// means `latency`. A fast stream wants it short, or its first packets pile up meanwhile.
    public var startupDelay: Duration?

    public init(latency: Duration = .milliseconds(100), maxPackets: Int = 4096, startupDelay: Duration? = nil) {
        self.latency = latency
        self.maxPackets = maxPackets
        self.startupDelay = startupDelay
    }
}

/// A frame out of the jitter buffer.
public struct ReceivedFrame: Equatable, Sendable {
    /// The depacketized frame.
    public var bytes: [UInt8]
    public var rtpTimestamp: UInt32
    /// The extended sequence numbers of its first and last packets.
    public var sequenceNumbers: ClosedRange<UInt64>

    public init(bytes: [UInt8], rtpTimestamp: UInt32, sequenceNumbers: ClosedRange<UInt64>) {
        self.bytes = bytes
        self.rtpTimestamp = rtpTimestamp
        self.sequenceNumbers = sequenceNumbers
    }
}

/// What `JitterBuffer.poll` reports, in stream order.
public enum JitterBufferEvent: Equatable, Sendable {
    /// A complete frame, in order.
    case frame(ReceivedFrame)
    /// The buffer gave up on these extended sequence numbers (lost, or in an incomplete frame).
    case gap(Range<UInt64>)
    /// A frame whose packets were all there but did not depacketize.
    case corruptFrame(rtpTimestamp: UInt32, error: MediaError)
}

/// What happened to an inserted packet.
public enum JitterBufferInsertResult: Equatable, Sendable {
    /// Held until its frame is complete and due.
    case accepted
    /// Already held.
    case duplicate
    /// Older than what was already emitted or skipped.
    case late
    /// The buffer is full.
    case overflow
}

/// Reorders RTP packets into frames.
public struct JitterBuffer<Depacketizer: RTPDepacketizer>: Sendable {
    private struct Slot: Sendable {
        var sequence: UInt64
        var packet: RTPPacket
        var arrival: Instant
    }

    public let configuration: JitterBufferConfiguration
    public private(set) var depacketizer: Depacketizer
    private var unwrapper = SequenceUnwrapper()
    /// Held packets, sorted by extended sequence number.
    private var slots: [Slot] = []
    /// The extended sequence number of the next packet to emit; nil before the stream started.
    private var nextSequence: UInt64?
    /// Whether `nextSequence` is known to begin a frame (it follows an emitted frame).
    private var nextIsBoundary = false
    /// How many leading slots are known to be one incomplete run: consecutive, with the first
    /// slot's timestamp and no marker. Lets `poll` resume its frame search instead of walking a
    /// large frame's packets again at every arrival.
    private var scannedPrefix = 0
    /// The earliest arrival among held packets, kept up to date on insert and removal.
    private var oldestArrival: Instant?

    public init(depacketizer: Depacketizer, configuration: JitterBufferConfiguration = .init()) {
        self.depacketizer = depacketizer
        self.configuration = configuration
    }

    /// How many packets are held.
    public var count: Int { slots.count }

    /// When `poll` should next be called if no packet arrives: the oldest packet's deadline
    /// (before the stream started, the end of the startup delay).
    public var nextDeadline: Instant? {
        oldestArrival.map { $0 + (nextSequence == nil ? startupWait : configuration.latency) }
    }

    /// How long the start waits: the startup delay when the lowest packet held begins a frame,
    /// else the full latency (the frame's first packets may still come, repaired).
    private var startupWait: Duration {
        guard let first = slots.first, depacketizer.startsFrame(first.packet.payload) else {
            return configuration.latency
        }
        return configuration.startupDelay ?? configuration.latency
    }

    /// Declares the stream's first sequence number (when signaled): the stream starts there at
    /// once, with no startup wait, and packets before it are late.
    public mutating func expectFirst(sequenceNumber: UInt16) {
        guard nextSequence == nil, slots.isEmpty else { return }
        nextSequence = unwrapper.unwrap(sequenceNumber)
        nextIsBoundary = true
    }

    /// When packets held now start being given up on, whether or not the stream has started.
    private var expiry: Instant? { oldestArrival.map { $0 + configuration.latency } }

    /// Adds a received packet.
    @discardableResult
    public mutating func insert(_ packet: RTPPacket, now: Instant) -> JitterBufferInsertResult {
        let sequence = unwrapper.unwrap(packet.sequenceNumber)
        if let nextSequence, sequence < nextSequence { return .late }
        let index = insertionIndex(sequence)
        if index < slots.count && slots[index].sequence == sequence { return .duplicate }
        guard slots.count < configuration.maxPackets else { return .overflow }
        slots.insert(Slot(sequence: sequence, packet: packet, arrival: now), at: index)
        scannedPrefix = min(scannedPrefix, index)
        oldestArrival = min(oldestArrival ?? now, now)
        return .accepted
    }

    /// Emits every frame that is complete and in order, and skips gaps that waited too long.
    public mutating func poll(now: Instant) -> [JitterBufferEvent] {
        var events: [JitterBufferEvent] = []
        while !slots.isEmpty {
            guard let next = nextSequence else {
                // Stream start: wait one latency for packets reordered ahead of the first.
                guard let oldest = nextDeadline, now >= oldest else { break }
                nextSequence = slots[0].sequence
                nextIsBoundary = depacketizer.startsFrame(slots[0].packet.payload)
                continue
            }
            if slots[0].sequence == next, nextIsBoundary || isBoundary(at: 0), let end = firstFrameEnd() {
                emit(through: end, into: &events)
                continue
            }
            guard let deadline = expiry, now >= deadline else { break }
            // Waited long enough: skip to the next complete frame, or drop what expired.
            if let start = slots.indices.first(where: { slots[$0].sequence > next && isBoundary(at: $0)
                                                         && frameEnd(from: $0) != nil }) {
                events.append(.gap(next..<slots[start].sequence))
                nextSequence = slots[start].sequence
                nextIsBoundary = true
                removeFirst(start)
            } else {
                let expired = slots.lastIndex { $0.arrival + configuration.latency <= now }!
                let last = slots[expired]
                events.append(.gap(next..<(last.sequence + 1)))
                nextSequence = last.sequence + 1
                nextIsBoundary = last.packet.marker
                removeFirst(expired + 1)
            }
        }
        return events
    }

    // MARK: Frames

    private func insertionIndex(_ sequence: UInt64) -> Int {
        var low = 0, high = slots.count
        while low < high {
            let mid = (low + high) / 2
            if slots[mid].sequence < sequence { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Whether the packet at `index` begins a frame: the packet before it ended one (marker, or
    /// a different timestamp), or — if that packet is missing — the payload format says so.
    private func isBoundary(at index: Int) -> Bool {
        let slot = slots[index]
        if index > 0 && slots[index - 1].sequence == slot.sequence - 1 {
            let previous = slots[index - 1].packet
            return previous.marker || previous.timestamp != slot.packet.timestamp
        }
        return depacketizer.startsFrame(slot.packet.payload)
    }

    /// The index of the last packet of the frame starting at `index`, if all its packets are
    /// here: consecutive, one timestamp, ending with the marker.
    private func frameEnd(from index: Int) -> Int? {
        let timestamp = slots[index].packet.timestamp
        var i = index
        while i < slots.count {
            if slots[i].packet.timestamp != timestamp { return nil }
            if slots[i].packet.marker { return i }
            guard i + 1 < slots.count, slots[i + 1].sequence == slots[i].sequence + 1 else { return nil }
            i += 1
        }
        return nil
    }

    private mutating func emit(through end: Int, into events: inout [JitterBufferEvent]) {
        let packets = slots[0...end]
        let timestamp = packets.first!.packet.timestamp
        do {
            let bytes = try depacketizer.depacketize(packets.map(\.packet.payload))
            events.append(.frame(ReceivedFrame(bytes: bytes, rtpTimestamp: timestamp,
                                               sequenceNumbers: packets.first!.sequence...packets.last!.sequence)))
        } catch {
            events.append(.corruptFrame(rtpTimestamp: timestamp, error: error))
        }
        nextSequence = packets.last!.sequence + 1
        nextIsBoundary = true
        removeFirst(end + 1)
    }

    private mutating func removeFirst(_ count: Int) {
        slots.removeFirst(count)
        scannedPrefix = 0
        oldestArrival = nil
        for slot in slots where oldestArrival == nil || slot.arrival < oldestArrival! { oldestArrival = slot.arrival }
    }

    /// `frameEnd(from: 0)`, resuming after the prefix already known to be incomplete.
    private mutating func firstFrameEnd() -> Int? {
        let timestamp = slots[0].packet.timestamp
        var i = max(scannedPrefix - 1, 0)
        while i < slots.count {
            if slots[i].packet.timestamp != timestamp {
                scannedPrefix = i
                return nil
            }
            if slots[i].packet.marker { return i }
            guard i + 1 < slots.count, slots[i + 1].sequence == slots[i].sequence + 1 else {
                scannedPrefix = i + 1
                return nil
            }
            i += 1
        }
        return nil
    }
}
