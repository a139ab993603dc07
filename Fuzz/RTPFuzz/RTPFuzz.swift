// libFuzzer entry point for RTP (RFC 3550 §5.1, header extensions RFC 8285) and compound RTCP
// (RFC 3550 §6, feedback RFC 4585): arbitrary bytes as a packet. What parses serializes to bytes
// that parse to the same packet(s). A trap is a bug: a remote's packet must only ever produce a
// thrown MediaError.
//
// Built by Fuzz/run-fuzz.sh against the modules listed in `modules`; libFuzzer supplies `main`.

@testable import Media

@_cdecl("LLVMFuzzerTestOneInput")
public func rtpFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let packet = try? RTPPacket(parsing: bytes) {
        let again = try? RTPPacket(parsing: packet.serialized())
        precondition(again == packet, "a serialized RTP packet parses differently")
    }
    if let packets = try? RTCPPacket.parseCompound(bytes), !packets.isEmpty {
        let again = try? RTCPPacket.parseCompound(RTCPPacket.serializeCompound(packets))
        precondition(again == packets, "a serialized RTCP compound parses differently")
    }
    return 0
}
