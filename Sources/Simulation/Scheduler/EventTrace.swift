// The event trace of a simulated run: one compact binary record per thing that happened
// (a datagram delivered or dropped, a store request and its reply, a push, a state change), in
// the order the scheduler took them. Two runs with the same seed produce the same bytes; the
// SHA-256 of the bytes (`RunTraceHash`) is what the command prints, so a reader can check that.
// A readable text form is kept only when asked for (`--trace FILE`): building strings for
// every event would cost more than the simulation itself.
import ZoneCore

/// What a trace record is about.
public enum TraceKind: UInt8, Sendable, CustomStringConvertible {
    case trialStart = 1
    case callStart
    case datagramSent
    case datagramDelivered
    case datagramDropped
    case storeRequest
    case storeReply
    case pushSubmitted
    case pushDelivered
    case pushLost
    case callState
    case iceEvent
    case converged
    case deadline
    case fault
    case zoneUnavailable
    case remoteHungUp
    /// The trial had both peers hang up.
    case hangUp
    /// Both calls closed: every transport drained, every store request answered.
    case closed

    public var description: String {
        switch self {
        case .trialStart: "trial"
        case .callStart: "call-start"
        case .datagramSent: "udp-send"
        case .datagramDelivered: "udp-recv"
        case .datagramDropped: "udp-drop"
        case .storeRequest: "store-req"
        case .storeReply: "store-rep"
        case .pushSubmitted: "push-submit"
        case .pushDelivered: "push"
        case .pushLost: "push-lost"
        case .callState: "state"
        case .iceEvent: "ice"
        case .converged: "converged"
        case .deadline: "deadline"
        case .fault: "fault"
        case .zoneUnavailable: "zone-unavailable"
        case .remoteHungUp: "remote-hung-up"
        case .hangUp: "hang-up"
        case .closed: "closed"
        }
    }
}

/// One trial's trace: binary records, and text lines when `capturesText`.
public struct EventTrace: Sendable {
    /// The records, in order: each is the time (ns since the trial's start, 8 bytes big-endian),
    /// the kind, the actor (0 none, 1 peer A, 2 peer B, 3 store, 4 relay, 5 network), then the
    /// kind's numbers, 8 bytes each. A copy; `withUnsafeBytes` reads them in place.
    public var bytes: [UInt8] { Array(storage[..<count]) }
    /// The records in their first `count` bytes, zeros after: the array grows by zeros ahead of
    /// the records, so each record is written into bytes that are there already.
    private var storage: [UInt8]
    /// How many bytes of `storage` hold records.
    private var count = 0
    /// Readable lines, when captured.
    public private(set) var lines: [String] = []
    public let capturesText: Bool
    private let origin: Instant

    public init(origin: Instant, capturesText: Bool) {
        self.origin = origin
        self.capturesText = capturesText
        storage = [UInt8](repeating: 0, count: 4096)
    }

    /// Calls `body` with the records' bytes, read in place.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// Appends a record; `text` is evaluated only when text is captured.
    @inline(__always)
    public mutating func record(_ kind: TraceKind, at now: Instant, actor: UInt8, _ a: UInt64 = 0, _ b: UInt64 = 0,
                                _ c: UInt64 = 0, text: @autoclosure () -> String = "") {
        appendRecord(UInt64(bitPattern: (now - origin).nanoseconds), kind.rawValue, actor, a, b, c)
        if capturesText {
            let micros = (now - origin).nanoseconds / 1000
            let name = ["-", "A", "B", "store", "relay", "net"][Int(min(actor, 5))]
            let detail = text()
            lines.append("\(micros)us \(name) \(kind)" + (detail.isEmpty ? "" : " " + detail))
        }
    }

    /// The size of one record.
    private static let recordSize = 34

    /// Writes the record's 34 bytes after the last one, first doubling the zeros ahead
    /// when fewer than a record's worth are left: every event writes one.
    @inline(__always)
    private mutating func appendRecord(_ time: UInt64, _ kind: UInt8, _ actor: UInt8, _ a: UInt64, _ b: UInt64,
                                       _ c: UInt64) {
        if storage.count - count < Self.recordSize {
            storage.append(contentsOf: repeatElement(0, count: Swift.max(storage.count, Self.recordSize)))
        }
        let at = count
        storage.withUnsafeMutableBytes { out in
            out.storeBytes(of: time.bigEndian, toByteOffset: at, as: UInt64.self)
            out.storeBytes(of: kind, toByteOffset: at + 8, as: UInt8.self)
            out.storeBytes(of: actor, toByteOffset: at + 9, as: UInt8.self)
            out.storeBytes(of: a.bigEndian, toByteOffset: at + 10, as: UInt64.self)
            out.storeBytes(of: b.bigEndian, toByteOffset: at + 18, as: UInt64.self)
            out.storeBytes(of: c.bigEndian, toByteOffset: at + 26, as: UInt64.self)
        }
        count += Self.recordSize
    }

    /// FNV-1a (32-bit) of a datagram: its content, in the trace, at a cost of one pass.
    ///
    /// Read through the array's buffer, eight bytes a turn (FNV-1a is one chain of xor and multiply
    /// per byte, so only the loop around it can be made shorter). The value is the byte-by-byte
    /// loop's.
    @inline(__always)
    public static func fingerprint(_ payload: [UInt8]) -> UInt64 {
        payload.withUnsafeBufferPointer { bytes in
            var h: UInt32 = 0x811C_9DC5
            guard let base = bytes.baseAddress else { return UInt64(h) }
            let count = bytes.count, whole = count & ~7
            var i = 0
            while i < whole {
                h = (h ^ UInt32(base[i])) &* 0x0100_0193
                h = (h ^ UInt32(base[i &+ 1])) &* 0x0100_0193
                h = (h ^ UInt32(base[i &+ 2])) &* 0x0100_0193
                h = (h ^ UInt32(base[i &+ 3])) &* 0x0100_0193
                h = (h ^ UInt32(base[i &+ 4])) &* 0x0100_0193
                h = (h ^ UInt32(base[i &+ 5])) &* 0x0100_0193
                h = (h ^ UInt32(base[i &+ 6])) &* 0x0100_0193
                h = (h ^ UInt32(base[i &+ 7])) &* 0x0100_0193
                i &+= 8
            }
            while i < count {
                h = (h ^ UInt32(base[i])) &* 0x0100_0193
                i &+= 1
            }
            return UInt64(h)
        }
    }

    /// An endpoint as one number: IPv4 address and port (IPv6 folded), for trace records.
    @inline(__always)
    public static func pack(_ endpoint: Endpoint) -> UInt64 {
        switch endpoint.address {
        case .v4(let a): return UInt64(a) << 16 | UInt64(endpoint.port)
        case .v6(let bits): return (bits.high ^ bits.low) << 16 | UInt64(endpoint.port)
        }
    }
}

/// The SHA-256 of every trial's trace bytes, fed in trial order.
public struct RunTraceHash: Sendable {
    private var hash = SHA256()
    public private(set) var trials = 0

    public init() {}

    public mutating func absorb(_ trace: EventTrace) {
        trace.withUnsafeBytes { hash.update($0) }
        trials += 1
    }

    /// The digest so far, in lower-case hex.
    public var hex: String {
        Hex.encode(hash.finalize())
    }
}
