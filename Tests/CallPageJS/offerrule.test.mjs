// Who starts a pair besides the join order (docs/PROTOCOL.md §11.2, §11.6): an offer from a user we have no
// leg with, and a call-of-two peer's RoomMember record (run: node --test Tests/CallPageJS).
import { test } from "node:test";
import assert from "node:assert/strict";
import { CALL_OF_TWO_WINDOW_MS, callOfTwoPeer, callerOffer }
    from "../../Sources/StoreServer/CallPage/web/offerrule.js";
import { compact, sessionKey } from "../../Sources/StoreServer/CallPage/web/names.js";

const ROOM = "room_abcd1234";
const NOW = 1_700_000_000_000;
const S = (value) => ({ value, type: "STRING" });

function offer(owner, other, { writer = owner, at = NOW, type = "offer" } = {}) {
    const key = sessionKey(ROOM, owner, other);
    return { key, record: { recordName: `SE_${key}_1_${type}`, recordType: "SignalEnvelope",
        fields: { sessionKey: S(key), ownerUserId: S(owner), envelopeType: S(type) },
        modified: { timestamp: at, userRecordName: writer } } };
}

const rule = (legEndedAt = new Map()) => ({ room: ROOM, me: "alice", nowMs: NOW, legEndedAt });

test("a recent offer to us, written by its owner, starts a leg with it", () => {
    const { record, key } = offer("mallory", "alice");
    assert.deepEqual(callerOffer(record, key, rule()), { caller: "mallory" });
});

test("answers, our own offers, other pairs' offers and offers of other rooms start nothing", () => {
    const answer = offer("bob", "alice", { type: "answer" });
    assert.equal(callerOffer(answer.record, answer.key, rule()), null);
    const own = offer("alice", "bob");
    assert.equal(callerOffer(own.record, own.key, rule()), null);
    const others = offer("bob", "carol");
    assert.equal(callerOffer(others.record, others.key, rule()), null);
    const elsewhere = offer("bob", "alice");
    assert.equal(callerOffer(elsewhere.record, elsewhere.key.replace(ROOM, "room_zzzzzzzz"), rule()), null);
});

test("an offer whose owner is not the other user of its session key starts nothing", () => {
    const { record, key } = offer("bob", "alice");
    record.fields.ownerUserId = S("carol");
    assert.equal(callerOffer(record, key, rule()), null);
});

test("an offer older than the window, or than our last leg with its owner, is a leftover", () => {
    const old = offer("bob", "alice", { at: NOW - CALL_OF_TWO_WINDOW_MS - 1 });
    assert.equal(callerOffer(old.record, old.key, rule()), null);
    const before = offer("bob", "alice", { at: NOW - 5000 });
    assert.equal(callerOffer(before.record, before.key, rule(new Map([["bob", NOW - 4000]]))), null);
    assert.deepEqual(callerOffer(before.record, before.key, rule(new Map([["bob", NOW - 6000]]))), { caller: "bob" });
});

test("an offer in bob's name written by mallory is forged", () => {
    const { record, key } = offer("bob", "alice", { writer: "mallory" });
    assert.match(callerOffer(record, key, rule()).forged, /names bob but was written by mallory/);
});

test("user IDs holding # still name the right pair", () => {
    const { record, key } = offer("b#x", "alice");
    const verdict = callerOffer(record, key, { ...rule(), me: "alice" });
    assert.deepEqual(verdict, { caller: "b#x" });
});

function roomMember(userId, { writer = userId, at = NOW, version, name = `RM_${userId}` } = {}) {
    const fields = { userId: S(userId), displayName: S(userId) };
    if (version !== undefined) fields.groupCallVersion = { value: version, type: "INT64" };
    return { recordName: name, recordType: "RoomMember", fields, modified: { timestamp: at, userRecordName: writer } };
}

const peerRule = { me: "amy", nowMs: NOW, isMember: () => false, hasLeg: () => false };

test("a fresh RoomMember of a call-of-two client with a higher ID is a peer to call", async () => {
    assert.equal(await callOfTwoPeer(roomMember("zed"), peerRule), "zed");
});

test("group-call clients, lower IDs, old or forged records, members and legs are not called", async () => {
    assert.equal(await callOfTwoPeer(roomMember("zed", { version: 1 }), peerRule), null);
    assert.equal(await callOfTwoPeer(roomMember("zed", { version: 0 }), peerRule), "zed", "0 is not a version");
    assert.equal(await callOfTwoPeer(roomMember("abe"), peerRule), null, "abe offers by the roles of two");
    assert.equal(await callOfTwoPeer(roomMember("amy"), peerRule), null);
    assert.equal(await callOfTwoPeer(roomMember("zed", { at: NOW - CALL_OF_TWO_WINDOW_MS - 1 }), peerRule), null);
    assert.equal(await callOfTwoPeer(roomMember("zed", { writer: "mallory" }), peerRule), null);
    assert.equal(await callOfTwoPeer(roomMember("zed", { name: "RM_other" }), peerRule), null);
    assert.equal(await callOfTwoPeer(roomMember("zed"), { ...peerRule, isMember: () => true }), null);
    assert.equal(await callOfTwoPeer(roomMember("zed"), { ...peerRule, hasLeg: () => true }), null);
    assert.equal(await callOfTwoPeer(roomMember("z d"), peerRule), null);
});

test("a long user ID's RoomMember name is compacted", async () => {
    const long = "z".repeat(300);
    assert.equal(await callOfTwoPeer(roomMember(long, { name: `RM_${await compact(long)}` }), peerRule), long);
});
