// Routing a group call's fetches (docs/PROTOCOL.md §11.3), the collection of dead pairs (§11.5) and each
// leg's share of the uplink (run: node --test Tests/CallPageJS).
import { test } from "node:test";
import assert from "node:assert/strict";
import { isMemberDeletion, otherUser, sessionKeyOf, sortBatch, writtenByOwner }
    from "../../Sources/StoreServer/CallPage/web/routing.js";
import { PairCollector } from "../../Sources/StoreServer/CallPage/web/collector.js";
import { legShareKbps, withBandwidth } from "../../Sources/StoreServer/CallPage/web/bandwidth.js";

const ROOM = "room_abcd1234";
const S = (value) => ({ value, type: "STRING" });

test("a batch is sorted into presence, its deletions, RoomMembers, signals by key, unkeyed, other deletions", () => {
    const batch = sortBatch([
        { recordName: "CM_bob", recordType: "CallMember", fields: {} },
        { recordName: "CM_cy", recordType: "CallMember", deleted: true },
        { recordName: "CM_dan", deleted: true },
        { recordName: "RM_bob", recordType: "RoomMember", fields: {} },
        { recordName: "SS_k", recordType: "SignalSession", fields: { sessionKey: S("k1") } },
        { recordName: "SE_k", recordType: "SignalEnvelope", fields: { sessionKey: { value: 7, type: "INT64" } } },
        { recordName: "SE_x", recordType: "SignalEnvelope", deleted: true },
        { recordName: "Room", recordType: "Room", fields: {} },
        null, { recordType: "SignalIceChunk" },
    ]);
    assert.deepEqual(batch.members.map((r) => r.recordName), ["CM_bob"]);
    assert.deepEqual(batch.memberDeletions.map((r) => r.recordName), ["CM_cy", "CM_dan"]);
    assert.deepEqual(batch.roomMembers.map((r) => r.recordName), ["RM_bob"]);
    assert.deepEqual(batch.signals.map((s) => [s.record.recordName, s.key]), [["SS_k", "k1"]]);
    assert.deepEqual(batch.unkeyed.map((r) => r.recordName), ["SE_k"]);
    assert.deepEqual(batch.deletions.map((r) => r.recordName), ["SE_x"]);
    assert.equal(isMemberDeletion({ recordName: "SE_CM_", recordType: "SignalEnvelope", deleted: true }), false);
});

test("a session key field must be a non-empty STRING", () => {
    assert.equal(sessionKeyOf({ fields: { sessionKey: S("") } }), null);
    assert.equal(sessionKeyOf({ fields: { sessionKey: { value: "k", type: "BYTES" } } }), null);
    assert.equal(sessionKeyOf({ fields: {} }), null);
});

test("the writer stamp must be the owner (envelopes, chunks) or the userId (sessions)", () => {
    const envelope = (owner, writer) => ({ recordType: "SignalEnvelope", fields: { ownerUserId: S(owner) },
        modified: { timestamp: 1, userRecordName: writer } });
    assert.equal(writtenByOwner(envelope("bob", "bob")), true);
    assert.equal(writtenByOwner(envelope("bob", "mallory")), false);
    assert.equal(writtenByOwner({ recordType: "SignalSession", fields: { userId: S("bob") },
        modified: { userRecordName: "bob" } }), true);
    assert.equal(writtenByOwner({ recordType: "SignalSession", fields: { ownerUserId: S("bob") },
        modified: { userRecordName: "bob" } }), false, "a session names its writer in userId");
    assert.equal(writtenByOwner({ recordType: "SignalEnvelope", fields: { ownerUserId: S("bob") } }), false);
});

test("the other user of a session key, with # inside user IDs", () => {
    assert.equal(otherUser(`${ROOM}#alice#bob`, ROOM, "alice"), "bob");
    assert.equal(otherUser(`${ROOM}#alice#bob`, ROOM, "bob"), "alice");
    assert.equal(otherUser(`${ROOM}#alice#bob`, ROOM, "carol"), null);
    assert.equal(otherUser(`${ROOM}#a#b#c`, ROOM, "a"), "b#c");
    assert.equal(otherUser(`${ROOM}#a#b#c`, ROOM, "c"), "a#b");
    assert.equal(otherUser(`${ROOM}#a#b#c`, ROOM, "b"), null);
    assert.equal(otherUser(`room_zzzzzzzz#alice#bob`, ROOM, "alice"), null);
    assert.equal(otherUser(`${ROOM}#bob#alice`, ROOM, "alice"), null, "not in byte order: not a key");
});

test("the collector hands out a pair's records once both its users are gone, bounded", () => {
    const collector = new PairCollector(ROOM);
    const key = `${ROOM}#bob#cy`;
    collector.observe({ recordName: "SE_1", fields: { ownerUserId: S("bob") } }, key);
    collector.observe({ recordName: "SE_2", fields: { ownerUserId: S("cy") } }, key);
    collector.observe({ recordName: "SS_1", fields: { userId: S("bob"), otherUserId: S("cy") } }, key);
    collector.note(`${ROOM}#x#y`, ["mallory"], ["SE_9"]);
    assert.deepEqual(collector.take(10, (users) => users.has("bob") && !users.has("cy")), []);
    assert.deepEqual(collector.take(2, (users) => users.has("bob") && users.has("cy")), ["SE_1", "SE_2"]);
    collector.forget(["SS_1"]);
    assert.deepEqual(collector.take(10, () => true), [], "SS_1 was deleted; x#y has no known users");
});

test("a leg takes its pair over; the collector's capacity is bounded", () => {
    const collector = new PairCollector(ROOM, 2);
    const key = `${ROOM}#alice#bob`;
    collector.note(key, ["alice"], ["SE_1", "SE_2", "SE_3"]);
    assert.equal(collector.overflow, 1);
    collector.release(key);
    assert.deepEqual(collector.take(10, () => true), []);
    collector.note(key, ["alice", "bob"], ["SE_4"]);
    assert.deepEqual(collector.take(10, () => true), ["SE_4"]);
});

test("each leg asks for the uplink divided by the other members", () => {
    assert.equal(legShareKbps(3000, 4), 1000);
    assert.equal(legShareKbps(1000, 2), 1000);
    assert.equal(legShareKbps(1000, 1), 1000);
    assert.equal(legShareKbps(2, 5), 1);
});

test("b=AS goes into the video section after c=, replacing one there, nowhere else", () => {
    const sdp = ["v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
        "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=mid:1",
        "m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "b=AS:9999", "a=mid:0", "a=rtpmap:96 VP8/90000", ""]
        .join("\r\n");
    const out = withBandwidth(sdp, 750).split("\r\n");
    assert.deepEqual(out.slice(8, 12), ["m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "b=AS:750", "a=mid:0"]);
    assert.equal(out.filter((l) => l.startsWith("b=")).length, 1);
    assert.equal(out.at(-1), "", "the SDP still ends with CRLF");
});
