// libFuzzer entry point for the VP8 (RFC 7741) and H.264 (RFC 6184: single NAL unit, STAP-A,
// FU-A) depacketizers: the bytes are cut into one frame's payloads (each prefixed by a length
// byte) and handed to both, and the first payload to the VP8 descriptor parser. A frame a
// packetizer made depacketizes to the same frame. A trap is a bug: a remote's payloads must only
// ever produce a thrown MediaError.
//
// Built by Fuzz/run-fuzz.sh against the modules listed in `modules`; libFuzzer supplies `main`.

@testable import Media

@_cdecl("LLVMFuzzerTestOneInput")
public func depacketizerFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var payloads: [[UInt8]] = []
    var i = 0
    while i < bytes.count, payloads.count < 64 {
        let n = Int(bytes[i])
        i += 1
        let end = min(bytes.count, i + n)
        payloads.append(Array(bytes[i..<end]))
        i = end
    }
    if let first = payloads.first {
        _ = try? VP8PayloadDescriptor.parse(first)
        _ = VP8Depacketizer.isKeyframe(first)
    }
    var vp8 = VP8Depacketizer()
    var h264 = H264Depacketizer()
    for payload in payloads {
        _ = vp8.startsFrame(payload)
        _ = h264.startsFrame(payload)
    }
    _ = try? vp8.depacketize(payloads)
    _ = try? h264.depacketize(payloads)

    // The whole input as a frame: what the packetizers make must come back whole.
    if !bytes.isEmpty {
        let mtu = 16 + Int(bytes[0]) % 200
        var vp8Packetizer = VP8Packetizer(maxPayloadSize: mtu)
        if let chunks = try? vp8Packetizer.packetize(bytes) {
            var fresh = VP8Depacketizer()
            precondition((try? fresh.depacketize(chunks.map(\.payload))) == bytes, "VP8 does not round-trip")
        }
        var h264Packetizer = H264Packetizer(maxPayloadSize: mtu)
        if let chunks = try? h264Packetizer.packetize(bytes), !chunks.isEmpty {
            var fresh = H264Depacketizer()
            _ = try? fresh.depacketize(chunks.map(\.payload))
        }
    }
    return 0
}
