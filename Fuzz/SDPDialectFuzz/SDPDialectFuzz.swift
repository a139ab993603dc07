// libFuzzer entry point for the SDP parser and the browsers' dialect: arbitrary bytes as a
// session description, whole and split in two (the same description or the same error either
// way); whatever parses prints back and parses equal; every reader of remote values (codecs,
// RTX apt, H.264 profile-level-id, ssrc and ssrc-group lines, msid, the remote video section)
// runs on it; an offer is answered in both dialects and our answer must parse back equal and
// read as a remote description. A trap here is a bug: hostile SDP must only ever be refused
// with an SDPParseError or SDPNegotiationError.
//
// Built by Fuzz/run-fuzz.sh from the modules listed in `modules`; seeds are the real offers and
// answers of Fixtures/sdp/. libFuzzer supplies `main`.
import ZoneCore

@testable import SDP
@testable import Signaling

/// Our side for the answers: fixed credentials, fingerprint and source identity.
private let fuzzConfiguration: SilentVideoConfiguration = {
    var random = SeededRandom(seed: 1)
    var config = SilentVideoConfiguration(
        sessionID: 1, iceCredentials: .random(using: &random),
        dtls: .init(fingerprint: .sha256(certificateDER: Array("fuzz".utf8))))
    config.dialect = .webRTC
    config.source = .random(using: &random)
    return config
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func sdpDialectFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))

    // Whole and split at a point the input chooses: the same result.
    let whole = parse(bytes, splitAt: nil)
    let split = parse(bytes, splitAt: size > 0 ? Int(bytes[0]) % (size + 1) : 0)
    precondition(whole == split, "the parse depends on how the bytes were split")
    guard case .success(let offer) = whole else { return 0 }

    // Printing and parsing again gives the same description.
    let reparsed = try? SessionDescription(parsing: offer.description, type: .offer)
    precondition(reparsed == offer, "a parsed description does not print back to itself")

    readEverything(offer)
    var asAnswer = offer
    asAnswer.type = .answer
    _ = try? RemoteVideoDescription(asAnswer)

    // Our answers, in both dialects, with and without DTLS: they must be well-formed.
    var plain = fuzzConfiguration
    plain.dialect = .zonertc
    plain.dtls = nil
    for config in [fuzzConfiguration, plain] {
        guard let answer = try? SessionDescription.answer(to: offer, config) else { continue }
        let again = try? SessionDescription(parsing: answer.description, type: .answer)
        precondition(again == answer, "our answer does not parse back to itself")
        let remote: RemoteVideoDescription
        do {
            remote = try RemoteVideoDescription(answer)
        } catch {
            preconditionFailure("our own answer does not read as a remote description: \(error)")
        }
        precondition(remote.security == config.security, "our answer has the wrong protocol")
        for (original, rtx) in remote.retransmissionPayloadTypes {
            precondition(remote.codecs.contains { $0.payloadType == original } && original != rtx)
        }
    }
    return 0
}

private func parse(_ bytes: [UInt8], splitAt split: Int?) -> Result<SessionDescription, SDPParseError> {
    var parser = SDPParser(type: .offer)
    do {
        if let split {
            try parser.feed(bytes[..<split])
            try parser.feed(bytes[split...])
        } else {
            try parser.feed(bytes)
        }
        return .success(try parser.finish())
    } catch {
        return .failure(error)
    }
}

/// Every accessor that reads remote values; none may trap.
private func readEverything(_ description: SessionDescription) {
    _ = try? RemoteVideoDescription(description)
    for section in description.media {
        for codec in section.codecs {
            _ = codec.associatedPayloadType
            if let id = codec.h264ProfileLevelID {
                _ = id.profile
                _ = id.answering(.absentDefault, levelAsymmetryAllowed: false)
                _ = H264ProfileLevelID.absentDefault.answering(id, levelAsymmetryAllowed: true)
            }
            _ = RTPCodec.h264().isCompatible(with: codec)
            _ = RTPCodec.h264().answering(codec)
        }
        _ = section.sourceAttributes
        _ = section.sourceGroups
        _ = section.sendingSources
        _ = section.mediaStreamIdentification
        _ = description.iceCredentials(for: section)
        _ = description.fingerprints(for: section)
    }
}
