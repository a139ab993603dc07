// RTCP sender reports (RFC 3550 §6.4.1) and receiver reports (§6.4.2).
//
// SR: header (PT=200, RC) | sender SSRC | NTP timestamp (64) | RTP timestamp | packet count |
//     octet count | RC report blocks | profile-specific extensions (ignored)
// RR: header (PT=201, RC) | sender SSRC | RC report blocks | extensions (ignored)

import ZoneCore

/// A sender report: what a sender has sent, and how it received others.
public struct RTCPSenderReport: Equatable, Sendable {
    public static let packetType: UInt8 = 200

    public var ssrc: UInt32
    /// The wallclock time of this report as a 64-bit NTP timestamp (RFC 3550 §4).
    public var ntpTimestamp: UInt64
    /// The same instant on the RTP media clock.
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32
    public var reports: [RTCPReportBlock]

    public init(ssrc: UInt32, ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32,
                reports: [RTCPReportBlock] = []) {
        precondition(reports.count <= 31, "an SR holds at most 31 report blocks")
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reports = reports
    }

    /// The middle 32 bits of the NTP timestamp, which receivers echo as LSR (§6.4.1).
    public var compactNTP: UInt32 { UInt32(truncatingIfNeeded: ntpTimestamp >> 16) }

    init(body r: inout ByteReader, count: Int) throws(ByteReaderError) {
        ssrc = try r.readUInt32()
        ntpTimestamp = try r.readUInt64()
        rtpTimestamp = try r.readUInt32()
        packetCount = try r.readUInt32()
        octetCount = try r.readUInt32()
        reports = []
        for _ in 0..<count { reports.append(try RTCPReportBlock(reading: &r)) }
    }

    func writeBody(to w: inout ByteWriter) {
        w.writeUInt32(ssrc)
        w.writeUInt64(ntpTimestamp)
        w.writeUInt32(rtpTimestamp)
        w.writeUInt32(packetCount)
        w.writeUInt32(octetCount)
        for block in reports { block.write(to: &w) }
    }
}

/// A receiver report: how a participant that sends nothing received others.
public struct RTCPReceiverReport: Equatable, Sendable {
    public static let packetType: UInt8 = 201

    public var ssrc: UInt32
    public var reports: [RTCPReportBlock]

    public init(ssrc: UInt32, reports: [RTCPReportBlock] = []) {
        precondition(reports.count <= 31, "an RR holds at most 31 report blocks")
        self.ssrc = ssrc
        self.reports = reports
    }

    init(body r: inout ByteReader, count: Int) throws(ByteReaderError) {
        ssrc = try r.readUInt32()
        reports = []
        for _ in 0..<count { reports.append(try RTCPReportBlock(reading: &r)) }
    }

    func writeBody(to w: inout ByteWriter) {
        w.writeUInt32(ssrc)
        for block in reports { block.write(to: &w) }
    }
}
