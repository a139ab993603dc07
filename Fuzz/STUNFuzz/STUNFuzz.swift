// libFuzzer entry point for the STUN module: arbitrary bytes through every decoder (STUN message,
// layout scan, integrity check, ChannelData datagram, TURN-over-TCP stream framing, RFC 7983
// demultiplexing, SASLprep), and whatever decodes is encoded again and must decode to the same
// thing. A trap here — a failed `precondition`, a failed `try!`, an out-of-bounds read caught by
// AddressSanitizer — is a bug: hostile bytes must only ever produce a thrown STUNError.
//
// Built by Fuzz/run-fuzz.sh against the modules listed in `modules`; libFuzzer supplies `main`.

@testable import STUN
import ZoneCore

/// A fixed key for the integrity round trips (the fuzzer cannot guess MACs anyway).
private let fuzzKey = STUNIntegrityKey(bytes: Array("fuzz-key".utf8))

@_cdecl("LLVMFuzzerTestOneInput")
public func stunFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    let bytes = Array(raw)

    // RFC 7983 / RFC 5761 demultiplexing is total: every input has a kind.
    let kind = PacketDemultiplexer.classify(raw)
    if kind == .rtpOrRTCP { _ = PacketDemultiplexer.isRTCP(bytes) }
    _ = STUNMessageHeader.looksLikeSTUN(raw)
    _ = try? STUNMessageHeader(parsing: raw)
    _ = STUNIntegrity.hasValidFingerprint(raw)
    _ = try? STUNIntegrity.verify(raw, key: fuzzKey)

    // STUN: decode (with and without the fingerprint check), re-encode, decode again.
    if let message = try? STUNMessage(decoding: raw, verifyingFingerprint: false) {
        let kept = message.attributes.filter { !$0.isComputedByEncoder }
        let encoded = try! message.encode()
        let again = try! STUNMessage(decoding: encoded)
        precondition(again.attributes == kept, "re-encoded message decodes differently")
        precondition(again.transactionID == message.transactionID && again.messageType == message.messageType)
        _ = message.unknownComprehensionRequiredAttributes
        // Signed and fingerprinted, it must verify (unless the extra 68 bytes overflow the length).
        if let signed = try? message.encode(key: fuzzKey, integrity: [.hmacSHA1, .hmacSHA256], fingerprint: true) {
            precondition((try? STUNIntegrity.verify(signed, key: fuzzKey)) == .hmacSHA256, "own MAC does not verify")
            precondition(STUNIntegrity.hasValidFingerprint(signed), "own FINGERPRINT does not verify")
            precondition((try? STUNMessage(decoding: signed))?.attributes.filter { !$0.isComputedByEncoder } == kept)
        }
    }

    // ChannelData over UDP: decode, encode both ways, decode again.
    if let channelData = try? ChannelData(decoding: raw) {
        precondition((try? ChannelData(decoding: try! channelData.encode(padded: true))) == channelData)
        precondition((try? ChannelData(decoding: try! channelData.encode(padded: false))) == channelData)
    }

    // TURN over TCP: the same bytes in two chunkings must frame identically.
    let split = size > 0 ? Int(bytes[0]) % (size + 1) : 0
    let whole = frames(of: [bytes])
    let pieces = frames(of: [Array(bytes[0..<split]), Array(bytes[split...])])
    precondition(whole == pieces, "stream framing depends on how the bytes were split")

    // SASLprep on the bytes as text.
    if let text = String(validating: bytes, as: UTF8.self) {
        if let prepared = try? SASLprep.prepare(text) {
            // Prepared text is stable under a second preparation (mapping and NFKC are idempotent).
            precondition((try? SASLprep.prepare(prepared)) == prepared, "SASLprep is not idempotent")
        }
    }
    return 0
}

/// The frames the stream decoder finds in `chunks`, and the error that stopped it, if any.
private func frames(of chunks: [[UInt8]]) -> StreamOutcome {
    var decoder = ChannelDataStreamDecoder()
    var outcome = StreamOutcome()
    for chunk in chunks {
        decoder.append(chunk)
        while true {
            do throws(STUNError) {
                guard case .frame(let frame) = try decoder.parseStep() else { break }
                if case .stunMessage(let m) = frame { _ = try? STUNMessage(decoding: m) }
                outcome.frames.append(frame)
            } catch {
                outcome.error = error.kind
                return outcome
            }
        }
    }
    return outcome
}

/// What a stream decoder made of some bytes.
private struct StreamOutcome: Equatable {
    var frames: [ChannelDataStreamDecoder.Frame] = []
    var error: STUNError.Kind?
}
