// The goodbye a leaving member says on a leg's own path, beside deleting its records (docs/PROTOCOL.md
// §11.4): its records reach the others only through the store and their pushes or polls, a datagram on
// the leg's selected pair reaches its remote within one trip. On a DTLS-SRTP leg it is the DTLS
// close_notify alert (RFC 5246 §7.2.1, RFC 9147 §4.7), which only that association's keys can make; on a
// plain RTP/AVPF leg an RTCP compound packet, RR + BYE (RFC 3550 §6.6), whose BYE names the leaving
// member's source and gives as its reason `leave:` and the leaving member's ICE username fragment of the
// leg's current epoch — so that it is told from the BYE that ends a media stream (which names no
// reason), and a receiver takes it only from the leg's selected pair, for the epoch it is on. UDP loses
// datagrams: the goodbye goes `copies` times, `spacing` apart (a receiver takes the first, DTLS drops the
// replays), and a leg whose goodbye is lost still ends when the leaving member's presence deletion
// reaches the remote.

import ICE
import Media
import ZoneCore

/// The media-path goodbye of one leg: its datagrams and the copies still to send.
struct MediaGoodbye {
    init() {}

    /// How many times the goodbye is sent.
    static let copies = 3
    /// How far apart its copies go (a burst of loss rarely spans them; the whole goodbye takes 10 ms).
    static let spacing = Duration.milliseconds(5)
    /// What a plain goodbye's BYE reason begins with, before the sender's ICE username fragment.
    static let reasonPrefix = "leave:"

    /// The datagrams of one copy, as the leg's transport sent them (wrapped for a relay when the
    /// selected pair is relayed).
    private(set) var datagrams: [(bytes: [UInt8], from: Endpoint, to: Endpoint)] = []
    private(set) var sent = 1
    private(set) var nextDeadline: Instant?

    /// Notes datagrams of the first copy, sent at `now`; the next copy is due `spacing` later.
    mutating func firstCopy(_ more: [(bytes: [UInt8], from: Endpoint, to: Endpoint)], now: Instant) {
        datagrams += more
        if nextDeadline == nil, !datagrams.isEmpty, sent < Self.copies { nextDeadline = now + Self.spacing }
    }

    /// The datagrams of the copy due at `now`, if one is (empty otherwise).
    mutating func due(now: Instant) -> [(bytes: [UInt8], from: Endpoint, to: Endpoint)] {
        guard let at = nextDeadline, at <= now else { return [] }
        sent += 1
        nextDeadline = sent < Self.copies ? now + Self.spacing : nil
        return datagrams
    }

    /// Whether every copy went out (or none could).
    var isDone: Bool { nextDeadline == nil }

    // MARK: The plain RTP goodbye

    /// RR + BYE from `source`, the reason naming `fragment` (the sender's ICE username fragment of the
    /// epoch the leg is on).
    static func plainPacket(source: UInt32, fragment: String) -> [UInt8] {
        RTCPPacket.serializeCompound([
            .receiverReport(RTCPReceiverReport(ssrc: source)),
            .goodbye(RTCPGoodbye(sources: [source], reason: reasonPrefix + String(fragment.prefix(200)))),
        ])
    }

    /// Whether `bytes` is a plain goodbye from the remote of the leg: a BYE whose reason names
    /// `remoteFragment` (the remote's ICE username fragment of the leg's current epoch) and which names
    /// `remoteSource` among its sources when the remote's source is known. Where it came from is checked
    /// by the caller (the leg's selected pair). Anything else — an RTP packet, a BYE ending a stream, one
    /// for another epoch or leg, bytes that do not parse — is not.
    static func isPlainGoodbye(_ bytes: [UInt8], remoteFragment: String, remoteSource: UInt32?) -> Bool {
        guard bytes.count >= 8, bytes[0] >> 6 == 2, (192...223).contains(bytes[1]),  // RFC 5761 §4
              let packets = try? RTCPPacket.parseCompound(bytes) else { return false }
        let reason = reasonPrefix + remoteFragment
        return packets.contains { packet in
            guard case .goodbye(let bye) = packet, bye.reason == reason else { return false }
            return remoteSource.map { bye.sources.contains($0) } ?? true
        }
    }
}
