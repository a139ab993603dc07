import Testing

@testable import SDP
@testable import Signaling

/// A minimal valid description's lines: parse errors are made by changing one of them.
private let valid = [
    "v=0",
    "o=- 1 1 IN IP4 127.0.0.1",
    "s=-",
    "t=0 0",
    "a=group:BUNDLE 0",
    "m=video 9 UDP/TLS/RTP/SAVPF 96",
    "c=IN IP4 0.0.0.0",
    "a=mid:0",
    "a=rtpmap:96 VP8/90000",
]

private func text(_ lines: [String]) -> String { lines.map { $0 + "\r\n" }.joined() }

/// `valid` with the line at `index` replaced by `line` (or several lines).
private func replacing(_ index: Int, with lines: String...) -> String {
    var copy = valid
    copy.replaceSubrange(index...index, with: lines)
    return text(copy)
}

/// `valid` with `lines` inserted before the line at `index`.
private func inserting(_ lines: String..., at index: Int) -> String {
    var copy = valid
    copy.insert(contentsOf: lines, at: index)
    return text(copy)
}

private func parseError(_ input: some Collection<UInt8>, maximumLineLength: Int = 16_384) -> SDPParseError? {
    var parser = SDPParser(type: .offer, maximumLineLength: maximumLineLength)
    do {
        try parser.feed(input)
        _ = try parser.finish()
        return nil
    } catch {
        return error
    }
}

private func parseError(_ input: String) -> SDPParseError? { parseError(Array(input.utf8)) }

@Test func validBaseParses() throws {
    #expect(parseError(text(valid)) == nil)
}

@Test(
    arguments: [
        // (name, input, kind, line number, line text)
        ("empty", "", SDPParseError.Kind.empty, 1, ""),
        ("only blank lines", "\r\n\n", .empty, 3, ""),
        ("first line not v=", text(Array(valid.dropFirst())), .missingVersion, 1, "o=- 1 1 IN IP4 127.0.0.1"),
        ("version 1", replacing(0, with: "v=1"), .unsupportedVersion, 1, "v=1"),
        ("no x= form", replacing(4, with: "hello world"), .malformedLine, 5, "hello world"),
        ("space before type", replacing(4, with: " a=mid:0"), .malformedLine, 5, " a=mid:0"),
        ("space before =", replacing(4, with: "a =mid:0"), .malformedLine, 5, "a =mid:0"),
        ("digit as type", replacing(4, with: "1=one"), .malformedLine, 5, "1=one"),
        ("type only", replacing(4, with: "a"), .malformedLine, 5, "a"),
        ("blank line inside", inserting("", at: 4), .malformedLine, 5, ""),
        ("NUL", replacing(4, with: "a=x\u{0}y"), .invalidCharacter, 5, "a=x\u{0}y"),
        ("lone CR", replacing(4, with: "a=x\ry"), .invalidCharacter, 5, "a=x\ry"),
        ("missing o=", replacing(1, with: "s=-"), .missingLine, 2, "s=-"),
        ("missing s=", replacing(2, with: "t=0 0"), .missingLine, 3, "t=0 0"),
        ("ends after v=", "v=0\r\n", .missingLine, 2, ""),
        ("ends after o=", "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\n", .missingLine, 3, ""),
        ("no t= before m=", replacing(3, with: "b=AS:30"), .missingLine, 6, valid[5]),
        ("no t= at all", text(Array(valid.prefix(3))), .missingLine, 4, ""),
        ("second v=", inserting("v=0", at: 4), .duplicateLine, 5, "v=0"),
        ("second o=", inserting("o=- 2 2 IN IP4 127.0.0.1", at: 4), .duplicateLine, 5, "o=- 2 2 IN IP4 127.0.0.1"),
        ("second s=", inserting("s=again", at: 4), .duplicateLine, 5, "s=again"),
        (
            "second session c=", inserting("c=IN IP4 0.0.0.0", "c=IN IP4 0.0.0.0", at: 4), .duplicateLine, 6,
            "c=IN IP4 0.0.0.0"
        ),
        ("second media c=", inserting("c=IN IP4 1.2.3.4", at: 7), .duplicateLine, 8, "c=IN IP4 1.2.3.4"),
        ("v= in media", inserting("v=0", at: 7), .duplicateLine, 8, "v=0"),
        ("t= in media", inserting("t=0 0", at: 7), .misplacedLine, 8, "t=0 0"),
        ("o= in media", inserting("o=- 1 1 IN IP4 127.0.0.1", at: 7), .misplacedLine, 8, "o=- 1 1 IN IP4 127.0.0.1"),
        ("origin with 5 fields", replacing(1, with: "o=- 1 1 IN IP4"), .invalidOrigin, 2, "o=- 1 1 IN IP4"),
        (
            "origin id not numeric", replacing(1, with: "o=- abc 1 IN IP4 0.0.0.0"), .invalidOrigin, 2,
            "o=- abc 1 IN IP4 0.0.0.0"
        ),
        (
            "origin version overflows", replacing(1, with: "o=- 1 18446744073709551616 IN IP4 0.0.0.0"), .invalidOrigin,
            2,
            "o=- 1 18446744073709551616 IN IP4 0.0.0.0"
        ),
        ("connection with 2 fields", replacing(6, with: "c=IN IP4"), .invalidConnection, 7, "c=IN IP4"),
        ("bandwidth without value", inserting("b=AS", at: 7), .invalidBandwidth, 8, "b=AS"),
        ("bandwidth not numeric", inserting("b=AS:fast", at: 7), .invalidBandwidth, 8, "b=AS:fast"),
        ("timing with one field", replacing(3, with: "t=0"), .invalidTiming, 4, "t=0"),
        ("timing not numeric", replacing(3, with: "t=now later"), .invalidTiming, 4, "t=now later"),
        (
            "m= without formats", replacing(5, with: "m=video 9 UDP/TLS/RTP/SAVPF"), .invalidMediaLine, 6,
            "m=video 9 UDP/TLS/RTP/SAVPF"
        ),
        (
            "m= media not a token", replacing(5, with: "m=vid(eo 9 RTP/AVPF 96"), .invalidMediaLine, 6,
            "m=vid(eo 9 RTP/AVPF 96"
        ),
        (
            "m= protocol empty part", replacing(5, with: "m=video 9 RTP//AVPF 96"), .invalidMediaLine, 6,
            "m=video 9 RTP//AVPF 96"
        ),
        (
            "port too large", replacing(5, with: "m=video 65536 RTP/AVPF 96"), .invalidPort, 6,
            "m=video 65536 RTP/AVPF 96"
        ),
        (
            "port not numeric", replacing(5, with: "m=video nine RTP/AVPF 96"), .invalidPort, 6,
            "m=video nine RTP/AVPF 96"
        ),
        ("port negative", replacing(5, with: "m=video -9 RTP/AVPF 96"), .invalidPort, 6, "m=video -9 RTP/AVPF 96"),
        ("port count zero", replacing(5, with: "m=video 9/0 RTP/AVPF 96"), .invalidPort, 6, "m=video 9/0 RTP/AVPF 96"),
        (
            "payload type not numeric", replacing(5, with: "m=video 9 UDP/TLS/RTP/SAVPF 96 vp8"), .invalidPayloadType,
            6,
            "m=video 9 UDP/TLS/RTP/SAVPF 96 vp8"
        ),
        (
            "payload type above 127", replacing(5, with: "m=video 9 RTP/AVPF 128"), .invalidPayloadType, 6,
            "m=video 9 RTP/AVPF 128"
        ),
        (
            "rtpmap payload type", replacing(8, with: "a=rtpmap:x VP8/90000"), .invalidPayloadType, 9,
            "a=rtpmap:x VP8/90000"
        ),
        ("rtcp-fb payload type", inserting("a=rtcp-fb:200 nack", at: 9), .invalidPayloadType, 10, "a=rtcp-fb:200 nack"),
        (
            "rtpmap at session level", inserting("a=rtpmap:96 VP8/90000", at: 4), .misplacedAttribute, 5,
            "a=rtpmap:96 VP8/90000"
        ),
        ("mid at session level", inserting("a=mid:0", at: 4), .misplacedAttribute, 5, "a=mid:0"),
        (
            "candidate at session level", inserting("a=candidate:1 1 udp 1 10.0.0.1 9 typ host", at: 4),
            .misplacedAttribute, 5,
            "a=candidate:1 1 udp 1 10.0.0.1 9 typ host"
        ),
        ("ssrc at session level", inserting("a=ssrc:1 cname:x", at: 4), .misplacedAttribute, 5, "a=ssrc:1 cname:x"),
        ("group in media", inserting("a=group:BUNDLE 0", at: 7), .misplacedAttribute, 8, "a=group:BUNDLE 0"),
        ("ice-lite in media", inserting("a=ice-lite", at: 7), .misplacedAttribute, 8, "a=ice-lite"),
        (
            "bad candidate", inserting("a=candidate:1 1 udp 1 10.0.0.1 99999 typ host", at: 7), .invalidCandidate, 8,
            "a=candidate:1 1 udp 1 10.0.0.1 99999 typ host"
        ),
        ("empty candidate", inserting("a=candidate:", at: 7), .invalidAttribute, 8, "a=candidate:"),
    ] as [(String, String, SDPParseError.Kind, Int, String)])
func sdpStructureErrors(name: String, input: String, kind: SDPParseError.Kind, lineNumber: Int, line: String) throws {
    let error = try #require(parseError(input), "\(name) parsed")
    #expect(error.kind == kind, "\(name): \(error)")
    #expect(error.lineNumber == lineNumber, "\(name): \(error)")
    #expect(error.line == line, "\(name): \(error)")
    #expect(error.description.contains("line \(lineNumber)"))
}

@Test(arguments: [
    "a=",
    "a=:value",
    "a=na(me",
    "a=rtcp-mux:1",
    "a=sendrecv:",
    "a=end-of-candidates:yes",
    "a=ice-ufrag:abc",
    "a=ice-ufrag:ab!d",
    "a=ice-pwd:tooshort",
    "a=ice-options:",
    "a=ice-options:tr!ckle",
    "a=mid:",
    "a=mid:a,b",
    "a=group:",
    "a=setup:maybe",
    "a=fingerprint:sha-256",
    "a=fingerprint:sha-256 ZZ:00",
    "a=fingerprint:sha-256 AB:CD",
    "a=fingerprint:sha-256 A:BC",
    "a=fingerprint:sh(a AB:CD",
    "a=rtpmap:96",
    "a=rtpmap:96 VP8",
    "a=rtpmap:96 VP8/fast",
    "a=rtpmap:96 VP8/0",
    "a=rtpmap:111 opus/48000/0",
    "a=rtpmap:96 VP8/90000/1/2",
    "a=fmtp:96",
    "a=fmtp:9(6 x=1",
    "a=rtcp-fb:96",
])
func sdpInvalidAttribute(line: String) throws {
    let error = try #require(parseError(inserting(line, at: 9)), "\(line) parsed")
    #expect(error.kind == .invalidAttribute, "\(error)")
    #expect(error.lineNumber == 10)
    #expect(error.line == line)
}

@Test func invalidUTF8IsAnError() throws {
    var bytes = Array(text(Array(valid.prefix(4))).utf8)
    bytes += Array("a=tool:".utf8) + [0xC3, 0x28] + Array("\r\n".utf8)
    let error = try #require(parseError(bytes))
    #expect(error.kind == .invalidCharacter && error.lineNumber == 5)
    #expect(error.line.hasPrefix("a=tool:"))
}

@Test func lineTooLongIsAnError() throws {
    let input = inserting("a=x-long:" + String(repeating: "y", count: 300), at: 4)
    let error = try #require(parseError(Array(input.utf8), maximumLineLength: 256))
    #expect(error.kind == .lineTooLong && error.lineNumber == 5)
    // The same text parses with the default limit.
    #expect(parseError(input) == nil)
}

@Test func badCandidateCarriesTheCandidateError() throws {
    let error = try #require(parseError(inserting("a=candidate:1 1 udp 1 10.0.0.1 9 typ hots", at: 8)))
    #expect(error.kind == .invalidCandidate)
    let candidate = try #require(error.candidateError)
    #expect(candidate.kind == .invalidField && candidate.field == .candidateType && candidate.token == "hots")
    #expect(candidate.input == "a=candidate:1 1 udp 1 10.0.0.1 9 typ hots")
    #expect(
        error.description
            == #"invalid session description, line 9 "a=candidate:1 1 udp 1 10.0.0.1 9 typ hots": bad ICE candidate: "#
            + #"candidate type "hots" must be host, srflx, prflx or relay"#
    )
}

@Test func errorMessagesNameLineAndProblem() throws {
    let port = try #require(parseError(replacing(5, with: "m=video 70000 RTP/AVPF 96")))
    #expect(
        port.description
            == #"invalid session description, line 6 "m=video 70000 RTP/AVPF 96": the port "70000" is not a number "#
            + #"from 0 to 65535"#
    )
    let empty = try #require(parseError(""))
    #expect(empty.description == "invalid session description, line 1: the description is empty")
    let session = try #require(parseError(inserting("a=rtpmap:96 VP8/90000", at: 4)))
    #expect(session.detail == "a=rtpmap belongs in a media section, but no m= line came before it")
}

@Test func parserStaysFailed() throws {
    var parser = SDPParser(type: .offer)
    #expect(throws: SDPParseError.self) { try parser.feed(Array("x=0\r\n".utf8)) }
    #expect(throws: SDPParseError.self) { try parser.feed(Array("v=0\r\n".utf8)) }
    #expect(throws: SDPParseError.self) { _ = try parser.finish() }
}

@Test func finishIsIdempotent() throws {
    var parser = SDPParser(type: .answer)
    try parser.feed(Array(text(valid).utf8))
    let first = try parser.finish()
    #expect(try parser.finish() == first)
    #expect(first.type == .answer)
}
