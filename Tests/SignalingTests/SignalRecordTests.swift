// The record layer (spec §1–3): identities, deterministic names and their compaction, epochs,
// the field encoding of every record type, and every way a record from the other peer can fail
// to read — down to each SDP and candidate parse error.
import Foundation
import RecordStore
import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

private let room = try! RoomID("room_ab12cd34")
private let zone = ZoneID(zoneName: "room_ab12cd34", ownerName: "_owner")

@Suite("Identities, names and epochs")
struct IdentityTests {
    @Test(arguments: ["room_ab12cd34", "room_00000000", "room_zzzzzzzz"])
    func validRoomIDs(text: String) throws {
        #expect(try RoomID(text).rawValue == text)
    }

    @Test(arguments: ["room_ab12cd3", "room_ab12cd345", "room_AB12CD34", "Room_ab12cd34", "room-ab12cd34",
                      "room_ab1_cd34", ""])
    func invalidRoomIDs(text: String) {
        #expect(throws: SignalRecordError.self) { try RoomID(text) }
        #expect((try? RoomID(text)) == nil)
    }

    @Test func randomRoomIDsAreValidAndReproducible() throws {
        var r1 = SeededRandom(seed: 5)
        var r2 = SeededRandom(seed: 5)
        let ids = (0..<50).map { _ in RoomID.random(using: &r1) }
        #expect(ids == (0..<50).map { _ in RoomID.random(using: &r2) })
        for id in ids { #expect(try RoomID(id.rawValue) == id) }
        #expect(ids[0].zoneID(owner: "_u") == ZoneID(zoneName: ids[0].rawValue, ownerName: "_u"))
    }

    @Test func sessionKeyIsTheSameFromBothSidesAndByteOrdered() throws {
        let ab = try SessionKey(roomID: room, users: "_b0b", "_a11ce")
        let ba = try SessionKey(roomID: room, users: "_a11ce", "_b0b")
        #expect(ab == ba && ab.rawValue == "room_ab12cd34#_a11ce#_b0b")
        // Byte order, not a locale's: upper case (0x41…) sorts before '_' (0x5F) and lower case.
        let upper = try SessionKey(roomID: room, users: "_x", "Zed")
        #expect(upper.lowerUserID == "Zed" && upper.otherUser(than: "Zed") == "_x")
        #expect(SessionKey.precedes("_a", "_b") && !SessionKey.precedes("_b", "_a") && SessionKey.precedes("_a", "_a0"))
    }

    @Test(arguments: ["", "has space", "tab\there", "émile", "new\nline"])
    func invalidUserIDs(user: String) {
        #expect(throws: SignalRecordError.self) { try SessionKey(roomID: room, users: user, "_ok") }
    }

    @Test func sameUserTwiceIsRefused() {
        #expect(throws: SignalRecordError.self) { try SessionKey(roomID: room, users: "_me", "_me") }
    }

    @Test func rolesFollowTheUserIDOrder() {
        let low = PeerRoles(myUserID: "_a11ce", remoteUserID: "_b0b")
        let high = PeerRoles(myUserID: "_b0b", remoteUserID: "_a11ce")
        #expect(low.isOfferCreator && !low.isPolite)
        #expect(!high.isOfferCreator && high.isPolite)
    }

    @Test func namesAreDeterministic() throws {
        let names = SignalRecordNames(sessionKey: try SessionKey(roomID: room, users: "_b0b", "_a11ce"))
        let epoch = CallEpoch(milliseconds: 1_700_000_000_123)
        #expect(names.session == "SS_room_ab12cd34#_a11ce#_b0b")
        #expect(names.envelope(epoch: epoch, type: .offer) == "SS_room_ab12cd34#_a11ce#_b0b".replacingOccurrences(
            of: "SS_", with: "SE_") + "_1700000000123_offer")
        #expect(names.envelope(epoch: epoch, type: .answer).hasSuffix("_1700000000123_answer"))
        #expect(names.iceChunk(epoch: epoch, owner: "_b0b", uuid: "u1")
                == "IC_room_ab12cd34#_a11ce#_b0b_1700000000123__b0b_u1")
        #expect(SignalRecordNames.member("_b0b") == "RM__b0b")
        #expect(SignalRecordNames.compact("x") == "h2d711642b726b04401627ca9fbac32f5")
    }

    /// User IDs long enough that `SS_<sessionKey>` passes 255 characters (concern G).
    @Test func longUserIDsCompactTheSessionKeyInNamesOnly() throws {
        let a = "_" + String(repeating: "a", count: 119)
        let b = "_" + String(repeating: "b", count: 119)
        let key = try SessionKey(roomID: room, users: a, b)
        #expect(key.rawValue.utf8.count == 255)
        let names = SignalRecordNames(sessionKey: key)
        let other = SignalRecordNames(sessionKey: try SessionKey(roomID: room, users: b, a))
        let epoch = CallEpoch(milliseconds: 1_700_000_000_000)
        let compact = SignalRecordNames.compact(key.rawValue)
        #expect(compact.utf8.count == 33)
        let all = [names.session, names.envelope(epoch: epoch, type: .offer),
                   names.envelope(epoch: epoch, type: .answer),
                   names.iceChunk(epoch: epoch, owner: a, uuid: String(repeating: "f", count: 32))]
        #expect(all == [other.session, other.envelope(epoch: epoch, type: .offer),
                        other.envelope(epoch: epoch, type: .answer),
                        other.iceChunk(epoch: epoch, owner: a, uuid: String(repeating: "f", count: 32))])
        for name in all {
            #expect(name.utf8.count <= 255 && NameRules.recordNameProblem(name) == nil, "\(name)")
            #expect(name.contains(compact) && !name.contains(key.rawValue))
        }
        // The fields keep the whole key.
        let session = SignalSession(sessionKey: key.rawValue, roomID: room.rawValue, userID: a, otherUserID: b,
                                    callEpoch: epoch, updatedAtMs: 0)
        #expect(try SignalSession(decoding: session.record(over: nil, name: names.session, in: zone)).sessionKey
                == key.rawValue)
    }

    @Test func namesAtTheLimitAreNotCompacted() throws {
        // SS_ + 252 characters = 255: fits.
        let a = "_a"
        let b = "_" + String(repeating: "b", count: 252 - "room_ab12cd34#_a#".count - 1)
        let key = try SessionKey(roomID: room, users: a, b)
        #expect(key.rawValue.utf8.count == 252)
        #expect(SignalRecordNames(sessionKey: key).session == "SS_" + key.rawValue)
        let longer = try SessionKey(roomID: room, users: a, b + "c")
        #expect(SignalRecordNames(sessionKey: longer).session == "SS_" + SignalRecordNames.compact(longer.rawValue))
    }

    @Test func aHugeOwnerIDIsCompactedInChunkNamesToo() throws {
        let owner = "_" + String(repeating: "o", count: 239)
        let names = SignalRecordNames(sessionKey: try SessionKey(roomID: room, users: "_a", owner))
        let name = names.iceChunk(epoch: CallEpoch(milliseconds: 1), owner: owner, uuid: "u")
        #expect(name.utf8.count <= 255 && name.contains(SignalRecordNames.compact(owner)))
        #expect(SignalRecordNames.member(owner) == "RM_" + owner)
        let huge = owner + String(repeating: "o", count: 13)
        #expect(SignalRecordNames.member(huge) == "RM_" + SignalRecordNames.compact(huge))
    }

    /// Epochs grow strictly, whatever the clock does: `max(now_ms, last + 1)` (spec §3).
    @Test func epochsIncreaseAcrossABackwardClockStep() {
        var clock = EpochClock()
        let t = Instant.seconds(1_700_000_000)
        let e1 = clock.next(now: t)
        let e2 = clock.next(now: t)                        // same millisecond
        let e3 = clock.next(now: t - .seconds(3600))       // an hour back
        let e4 = clock.next(now: t + .milliseconds(10))    // later, but not past e3 + 1? it is
        #expect(e1.milliseconds == 1_700_000_000_000)
        #expect(e2.milliseconds == e1.milliseconds + 1 && e3.milliseconds == e2.milliseconds + 1)
        #expect(e4.milliseconds == 1_700_000_000_010)
        clock.observe(CallEpoch(milliseconds: 1_800_000_000_000))
        #expect(clock.next(now: t).milliseconds == 1_800_000_000_001)
        clock.observe(CallEpoch(milliseconds: 5))          // a lower epoch changes nothing
        #expect(clock.last == CallEpoch(milliseconds: 1_800_000_000_001))
    }
}

@Suite("Record fields")
struct RecordFieldTests {
    private let names = SignalRecordNames(sessionKey: try! SessionKey(roomID: room, users: "_a11ce", "_b0b"))
    private let epoch = CallEpoch(milliseconds: 1_700_000_000_000)

    private func offer() -> SignalEnvelope {
        SignalEnvelope(sessionKey: names.sessionKey.rawValue, roomID: room.rawValue, callEpoch: epoch,
                       ownerUserID: "_a11ce", envelopeType: .offer,
                       description: SignalFixtures.offerDescription(ufrag: "ufA1"), updatedAtMs: 42)
    }

    private func chunk(_ encoding: CandidateEncoding = .batch, eoc: Bool = false) -> SignalIceChunk {
        SignalIceChunk(sessionKey: names.sessionKey.rawValue, roomID: room.rawValue, callEpoch: epoch,
                       ownerUserID: "_a11ce", encoding: encoding,
                       candidates: eoc && encoding == .single
                           ? [] : [SignalFixtures.candidate(octet: 1, ufrag: "ufA1")],
                       endOfCandidates: eoc, chunkCreatedAtMs: 43, seq: 3, ufrag: "ufA1")
    }

    @Test func everyRecordTypeRoundTrips() throws {
        let r = Room(roomID: room, name: "Marin")
        #expect(try Room(decoding: r.record(in: zone)) == r)
        #expect(r.record(in: zone).id.recordName == room.rawValue)
        let m = RoomMember(userID: "_a11ce", displayName: "Alice")
        #expect(try RoomMember(decoding: m.record(in: zone)) == m)
        let s = SignalSession(sessionKey: names.sessionKey.rawValue, roomID: room.rawValue, userID: "_a11ce",
                              otherUserID: "_b0b", callEpoch: epoch, updatedAtMs: 9)
        #expect(try SignalSession(decoding: s.record(over: nil, name: names.session, in: zone)) == s)
        let o = offer()
        let record = o.record(name: names.envelope(epoch: epoch, type: .offer), in: zone)
        #expect(try SignalEnvelope(decoding: record) == o)
        #expect(record.fields[SignalField.payload]?.stringValue == o.description.description)
        for c in [chunk(), chunk(eoc: true), chunk(.single), chunk(.single, eoc: true)] {
            #expect(try SignalIceChunk(decoding: c.record(name: "IC_x", in: zone)) == c)
        }
        #expect(try SignalRecord.decode(Record(recordType: "Message", id: RecordID(recordName: "m"))) == nil)
    }

    @Test func batchJSONHasTheSpecShape() throws {
        let batch = CandidateBatch(candidates: ["candidate:1 1 udp 1 192.0.2.1 9 typ host", "quote\"back\\slash\n"],
                                   endOfCandidates: false)
        #expect(batch.json.hasPrefix("{\"v\":1,\"candidates\":[\"candidate:1 1 udp 1 192.0.2.1 9 typ host\","))
        #expect(batch.json.hasSuffix("],\"eoc\":false}"))
        #expect(try CandidateBatch(json: batch.json) == batch)
        #expect(try CandidateBatch(json: #"{"v":1,"candidates":[]}"#).endOfCandidates == false)
        #expect(try CandidateBatch(json: #"{"v":1,"candidates":[],"eoc":true,"later":"ignored"}"#).endOfCandidates)
    }

    @Test(arguments: [
        "", "not json", "[1,2]", "\"text\"", #"{"candidates":[]}"#, #"{"v":2,"candidates":[]}"#,
        #"{"v":"1","candidates":[]}"#,
        #"{"v":1}"#, #"{"v":1,"candidates":"candidate:1"}"#, #"{"v":1,"candidates":[1]}"#,
        #"{"v":1,"candidates":[],"eoc":"yes"}"#, #"{"v":true,"candidates":[]}"#,
    ])
    func malformedBatches(json: String) throws {
        let error = try #require(throws: SignalRecordError.self) { try CandidateBatch(json: json) }
        #expect(error.kind == .malformedCandidateBatch && error.field == SignalField.candidate, "\(error)")
        var record = chunk().record(name: "IC_bad", in: zone)
        record.fields[SignalField.candidate] = .string(json)
        let located = try #require(throws: SignalRecordError.self) { try SignalIceChunk(decoding: record) }
        #expect(located.kind == .malformedCandidateBatch && located.recordName == "IC_bad")
        #expect(located.description.contains("IC_bad"))
    }

    /// Every structural problem of a record's fields, each its own error kind.
    @Test(arguments: [
        (SignalField.sessionKey, nil, SignalRecordError.Kind.missingField),
        (SignalField.callEpoch, FieldValue.string("12"), .wrongFieldType),
        (SignalField.callEpoch, .int64(-1), .invalidFieldValue),
        (SignalField.ownerUserId, .string(""), .invalidFieldValue),
        (SignalField.envelopeType, .string("pranswer"), .unknownEnvelopeType),
        (SignalField.updatedAt, .string("yesterday"), .wrongFieldType),
        (SignalField.payload, .int64(1), .wrongFieldType),
    ] as [(String, FieldValue?, SignalRecordError.Kind)])
    func envelopeFieldErrors(field: String, value: FieldValue?, kind: SignalRecordError.Kind) throws {
        var record = offer().record(name: "SE_x", in: zone)
        record.fields[field] = value
        let error = try #require(throws: SignalRecordError.self) { try SignalEnvelope(decoding: record) }
        #expect(error.kind == kind && error.recordName == "SE_x", "\(error)")
        #expect(error.kind == .unknownEnvelopeType || error.field == field)
    }

    @Test(arguments: [
        (SignalField.seq, nil, SignalRecordError.Kind.missingField),
        (SignalField.seq, FieldValue.int64(-2), .invalidFieldValue),
        (SignalField.ufrag, .string(""), .invalidFieldValue),
        (SignalField.ufrag, nil, .missingField),
        (SignalField.candidateType, .string("batch-v2"), .unknownCandidateType),
        (SignalField.candidate, .bytes([1]), .wrongFieldType),
        (SignalField.chunkCreatedAt, nil, .missingField),
    ] as [(String, FieldValue?, SignalRecordError.Kind)])
    func chunkFieldErrors(field: String, value: FieldValue?, kind: SignalRecordError.Kind) throws {
        var record = chunk().record(name: "IC_x", in: zone)
        record.fields[field] = value
        let error = try #require(throws: SignalRecordError.self) { try SignalIceChunk(decoding: record) }
        #expect(error.kind == kind, "\(error)")
    }

    @Test func aRecordOfAnotherTypeIsRefused() throws {
        let record = offer().record(name: "SE_x", in: zone)
        let error = try #require(throws: SignalRecordError.self) { try SignalIceChunk(decoding: record) }
        #expect(error.kind == .wrongRecordType)
        #expect(throws: SignalRecordError.self) { try SignalSession(decoding: record) }
        #expect(throws: SignalRecordError.self) { try Room(decoding: record) }
        #expect(throws: SignalRecordError.self) { try RoomMember(decoding: record) }
    }
}

/// Every SDP parse error kind and every candidate parse error kind, as they reach signaling:
/// inside an envelope's payload or a chunk's candidates, through the inbox, which reports each
/// with its kind and hands the negotiator nothing from it.
@Suite("Parse errors through the inbox")
struct ParseErrorPathTests {
    private static let valid = [
        "v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0", "m=video 9 RTP/AVPF 96",
        "c=IN IP4 0.0.0.0", "a=mid:0", "a=ice-ufrag:ufA1", "a=ice-pwd:fixturepasswordfixturepw",
        "a=rtpmap:96 VP8/90000",
    ]

    private static func sdp(replacing index: Int? = nil, with line: String? = nil, inserting extra: String? = nil,
                            at position: Int = 4) -> String {
        var lines = valid
        if let index {
            if let line { lines[index] = line } else { lines.remove(at: index) }
        }
        if let extra { lines.insert(extra, at: position) }
        return lines.map { $0 + "\r\n" }.joined()
    }

    static let sdpCases: [(SDPParseError.Kind, String)] = [
        (.empty, ""),
        (.missingVersion, sdp(replacing: 0, with: nil)),
        (.unsupportedVersion, sdp(replacing: 0, with: "v=1")),
        (.malformedLine, sdp(replacing: 4, with: "hello world")),
        (.invalidCharacter, sdp(replacing: 4, with: "a=x\u{0}y")),
        (.lineTooLong, sdp(inserting: "a=x-long:" + String(repeating: "y", count: 20_000))),
        (.missingLine, sdp(replacing: 2, with: "t=0 0")),
        (.duplicateLine, sdp(inserting: "s=again")),
        (.misplacedLine, sdp(inserting: "t=0 0", at: 7)),
        (.invalidOrigin, sdp(replacing: 1, with: "o=- abc 1 IN IP4 0.0.0.0")),
        (.invalidConnection, sdp(replacing: 6, with: "c=IN IP4")),
        (.invalidBandwidth, sdp(inserting: "b=AS:fast", at: 7)),
        (.invalidTiming, sdp(replacing: 3, with: "t=0")),
        (.invalidMediaLine, sdp(replacing: 5, with: "m=video 9 RTP/AVPF")),
        (.invalidPort, sdp(replacing: 5, with: "m=video 65536 RTP/AVPF 96")),
        (.invalidPayloadType, sdp(replacing: 5, with: "m=video 9 RTP/AVPF 128")),
        (.misplacedAttribute, sdp(inserting: "a=mid:0")),
        (.invalidAttribute, sdp(inserting: "a=rtpmap:96", at: 11)),
        (.invalidCandidate, sdp(inserting: "a=candidate:1 1 udp 1 10.0.0.1 9 typ hots", at: 8)),
    ]

    static let candidateCases: [(CandidateParseError.Kind, String)] = [
        (.missingPrefix, "1 1 udp 100 192.0.2.1 5000 typ host"),
        (.missingField, "candidate:1 1 udp 100 192.0.2.1"),
        (.invalidField, "candidate:1 1 udp 100 192.0.2.1 70000 typ host"),
        (.missingExtensionValue, "candidate:1 1 udp 100 192.0.2.1 5000 typ host ufrag"),
        (.duplicateExtension, "candidate:1 1 udp 100 192.0.2.1 5000 typ host generation 0 generation 1"),
    ]

    private func inbox() -> SignalInbox {
        SignalInbox(myUserID: "_b0b", remoteUserID: "_a11ce", sessionKey: "room_ab12cd34#_a11ce#_b0b")
    }

    private func envelope(payload: String) -> Record {
        Record(recordType: SignalRecordType.envelope, id: RecordID(recordName: "SE_bad", zoneID: zone),
               fields: [SignalField.sessionKey: .string("room_ab12cd34#_a11ce#_b0b"),
                        SignalField.roomID: .string(room.rawValue),
                        SignalField.callEpoch: .int64(5), SignalField.ownerUserId: .string("_a11ce"),
                        SignalField.envelopeType: .string("offer"), SignalField.payload: .string(payload),
                        SignalField.updatedAt: .timestamp(5)], recordChangeTag: "1")
    }

    @Test func theCasesCoverEveryKind() throws {
        // A new error kind must get a case here: keep the lists in step with the parsers.
        #expect(Set(Self.sdpCases.map { "\($0.0)" }).count == 19)
        #expect(Set(Self.candidateCases.map { "\($0.0)" }).count == 5)
        #expect(try SessionDescription(parsing: Self.sdp(), type: .offer).media.count == 1)
    }

    @Test(arguments: sdpCases)
    func sdpErrorInAnEnvelope(kind: SDPParseError.Kind, payload: String) throws {
        var inbox = inbox()
        let output = inbox.ingest([envelope(payload: payload)])
        #expect(output.deliveries.isEmpty)
        #expect(inbox.counters.malformed == 1)
        guard case .record(let error)? = output.problems.first else {
            Issue.record("no problem reported for \(kind)")
            return
        }
        #expect(error.kind == .invalidSessionDescription && error.field == SignalField.payload)
        #expect(error.sdpError?.kind == kind, "\(error)")
    }

    @Test(arguments: candidateCases)
    func candidateErrorInAChunk(kind: CandidateParseError.Kind, text: String) throws {
        for encoding in CandidateEncoding.allCases {
            var inbox = inbox()
            let good = SignalFixtures.candidate(octet: 3, ufrag: "ufA1")
            var fields: RecordFields = [
                SignalField.sessionKey: .string("room_ab12cd34#_a11ce#_b0b"),
                SignalField.roomID: .string(room.rawValue),
                SignalField.callEpoch: .int64(5), SignalField.ownerUserId: .string("_a11ce"),
                SignalField.candidateType: .string(encoding.rawValue), SignalField.chunkCreatedAt: .timestamp(5),
                SignalField.seq: .int64(0), SignalField.ufrag: .string("ufA1"),
            ]
            fields[SignalField.candidate] = .string(encoding == .batch
                ? CandidateBatch(candidates: [text, good.description], endOfCandidates: false).json : text)
            let record = Record(recordType: SignalRecordType.iceChunk, id: RecordID(recordName: "IC_bad", zoneID: zone),
                                fields: fields, recordChangeTag: "1")
            let chunk = try SignalIceChunk(decoding: record)
            #expect(chunk.rejectedCandidates.map(\.kind) == [kind])
            #expect(chunk.candidates == (encoding == .batch ? [good] : []))
            let output = inbox.ingest([record])
            #expect(output.problems == [.candidate(recordName: "IC_bad", chunk.rejectedCandidates[0])])
            #expect(inbox.counters.invalidCandidates == 1 && inbox.counters.malformed == 0)
            // The rest of the chunk still counts once its description is applied.
            let released = inbox.remoteDescriptionApplied(epoch: CallEpoch(milliseconds: 5), ufrag: "ufA1")
            #expect(released == [.candidates(epoch: CallEpoch(milliseconds: 5), owner: "_a11ce",
                                             encoding == .batch ? [good] : [], endOfCandidates: false)])
        }
    }
}
