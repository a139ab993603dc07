// libFuzzer entry point for SDP (RFC 8866) and ICE candidate lines (RFC 8839 §5.1): arbitrary
// bytes as a description (offer or answer, chosen by the first byte), whole and in two pieces,
// and every line as a candidate. A description that parses prints to text that parses to the same
// description; a candidate that parses prints to a line that parses to the same candidate. A trap
// here is a bug: a remote's SDP must only ever produce a thrown SDPParseError.
//
// Built by Fuzz/run-fuzz.sh against the modules listed in `modules`; libFuzzer supplies `main`.

@testable import SDP
@testable import Signaling

@_cdecl("LLVMFuzzerTestOneInput")
public func sdpFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let type: SDPType = size > 0 && bytes[0] & 1 == 1 ? .answer : .offer

    let whole = Result { () throws(SDPParseError) in try SessionDescription(parsing: bytes, type: type) }
    // Fed in two pieces, the parser must reach the same result.
    let split = size > 0 ? Int(bytes[size - 1]) % (size + 1) : 0
    var parser = SDPParser(type: type)
    let pieces = Result { () throws(SDPParseError) in
        try parser.feed(bytes[0..<split])
        try parser.feed(bytes[split...])
        return try parser.finish()
    }
    precondition((try? whole.get()) == (try? pieces.get()), "the description depends on how the bytes were split")
    if case .success(let description) = whole {
        let text = description.description
        let again = try? SessionDescription(parsing: text, type: type)
        precondition(again?.description == text, "a printed description does not parse to itself")
        for section in description.media {
            _ = description.iceCredentials(for: section)
            _ = section.candidates.map(\.description)
            // Each fmtp pair read once is found again by its name (the first of that name).
            for codec in section.codecs {
                guard let parameters = codec.formatParameters else { continue }
                for (name, _) in parameters.parameters {
                    precondition(parameters.value(of: name) != nil, "an fmtp parameter is not found by its name")
                }
            }
        }
    }

    // Every line as a candidate attribute value.
    if let text = String(validating: bytes, as: UTF8.self) {
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).prefix(64) {
            var value = String(line)
            if value.hasPrefix("a=") { value.removeFirst(2) }
            if let candidate = try? ICECandidate(parsing: value) {
                let printed = candidate.description
                precondition((try? ICECandidate(parsing: printed))?.description == printed,
                             "a printed candidate does not parse to itself")
            }
        }
    }
    return 0
}
