// The page's one inbox against docs/SIGNALING.md §4–5 and §7's stale-epoch scenarios (node --test).
import { test } from "node:test";
import assert from "node:assert/strict";
import { SignalInbox, MAX_HELD_PER_EPOCH } from "../../Sources/StoreServer/CallPage/web/inbox.js";

const KEY = "room_abcd1234#alice#bob";
const NOW = 1_700_000_000_000;
let tags = 0;

function envelope(type, epoch, owner = "alice", extra = {}) {
    return { recordName: `SE_${KEY}_${epoch}_${type}`, recordType: "SignalEnvelope", recordChangeTag: `t${++tags}`,
        fields: { sessionKey: { value: KEY, type: "STRING" }, roomID: { value: "room_abcd1234", type: "STRING" },
            callEpoch: { value: epoch, type: "INT64" }, ownerUserId: { value: owner, type: "STRING" },
            envelopeType: { value: type, type: "STRING" }, payload: { value: "v=0", type: "STRING" },
            updatedAt: { value: NOW, type: "TIMESTAMP" }, ...extra } };
}

function chunk(epoch, seq, { candidates = [`candidate:${seq} 1 udp 1 127.0.0.1 ${1000 + seq} typ host`], eoc = false,
    ufrag = "uf", owner = "alice", single } = {}) {
    const value = single ?? JSON.stringify({ v: 1, candidates, eoc });
    return { recordName: `IC_${KEY}_${epoch}_${owner}_${seq}`, recordType: "SignalIceChunk",
        recordChangeTag: `t${++tags}`,
        fields: { sessionKey: { value: KEY, type: "STRING" }, roomID: { value: "room_abcd1234", type: "STRING" },
            callEpoch: { value: epoch, type: "INT64" }, ownerUserId: { value: owner, type: "STRING" },
            candidateType: { value: single === undefined ? "batch-v1" : "single", type: "STRING" },
            candidate: { value, type: "STRING" }, chunkCreatedAt: { value: NOW, type: "TIMESTAMP" },
            seq: { value: seq, type: "INT64" }, ufrag: { value: ufrag, type: "STRING" } } };
}

const bob = () => new SignalInbox({ sessionKey: KEY, me: "bob" });

test("the same record by push, poll and scan is applied once", () => {
    const inbox = bob();
    const offer = envelope("offer", 10);
    assert.equal(inbox.take(offer, NOW).length, 1);
    assert.equal(inbox.take(offer, NOW).length, 0);
    assert.equal(inbox.take(structuredClone(offer), NOW).length, 0);
    assert.equal(inbox.counters.duplicates, 2);
});

test("old epochs below the floor are dropped and counted", () => {
    const inbox = bob();
    inbox.raiseFloor(40);
    for (const epoch of [10, 20, 30]) {
        assert.deepEqual(inbox.take(envelope("offer", epoch), NOW), []);
        assert.deepEqual(inbox.take(chunk(epoch, 0), NOW), []);
    }
    assert.equal(inbox.counters.staleDrops, 6);
    assert.equal(inbox.take(envelope("offer", 40), NOW).length, 1);
});

test("candidates before their description are held, then released in seq order", () => {
    const inbox = bob();
    assert.deepEqual(inbox.take(chunk(10, 1), NOW), []);
    assert.deepEqual(inbox.take(chunk(10, 0), NOW), []);
    assert.equal(inbox.counters.held, 2);
    const released = inbox.descriptionSet(10, "uf");
    assert.deepEqual(released.map((c) => c.seq), [0, 1]);
    assert.deepEqual(inbox.take(chunk(10, 3), NOW), [], "seq 3 waits for seq 2");
    assert.deepEqual(inbox.take(chunk(10, 2), NOW).map((c) => c.seq), [2, 3]);
});

test("nothing after end-of-candidates, nothing with another ufrag", () => {
    const inbox = bob();
    inbox.descriptionSet(10, "uf");
    assert.equal(inbox.take(chunk(10, 0, { eoc: true }), NOW)[0].eoc, true);
    assert.deepEqual(inbox.take(chunk(10, 1), NOW), []);
    assert.equal(inbox.counters.afterEndOfCandidates, 1);
    inbox.descriptionSet(20, "uf2");
    assert.deepEqual(inbox.take(chunk(20, 0, { ufrag: "other" }), NOW), []);
    assert.equal(inbox.counters.ufragMismatches, 1);
});

test("the single form: one candidate, or the empty string for end-of-candidates", () => {
    const inbox = bob();
    inbox.descriptionSet(10, "uf");
    const [one] = inbox.take(chunk(10, 0, { single: "candidate:1 1 udp 1 127.0.0.1 9 typ host" }), NOW);
    assert.deepEqual([one.candidates.length, one.eoc], [1, false]);
    const [end] = inbox.take(chunk(10, 1, { single: "" }), NOW);
    assert.deepEqual([end.candidates.length, end.eoc], [0, true]);
});

test("a raised floor drops held chunks of older epochs as stale", () => {
    const inbox = bob();
    inbox.take(chunk(10, 0), NOW);
    inbox.take(chunk(10, 1), NOW);
    inbox.raiseFloor(11);
    assert.equal(inbox.counters.staleDrops, 2);
    assert.deepEqual(inbox.descriptionSet(10, "uf"), []);
});

test("chunks of an ignored offer are dropped silently", () => {
    const inbox = bob();
    inbox.take(chunk(10, 0), NOW);
    inbox.ignoreEpoch(10);
    assert.deepEqual(inbox.take(chunk(10, 1), NOW), []);
    assert.equal(inbox.counters.ignoredOfferChunks, 2);
    assert.equal(inbox.counters.staleDrops, 0);
});

test("hostile records are dropped and counted, never applied", () => {
    const inbox = bob();
    const bad = [
        envelope("offer", NOW + 2 * 86_400_000),
        envelope("offer", -1),
        envelope("offer", 2 ** 63),
        envelope("offer", "12", "alice"),
        { ...envelope("offer", 12),
            fields: { ...envelope("offer", 12).fields, callEpoch: { value: 12, type: "STRING" } } },
        envelope("rollback", 12),
        chunk(12, -1),
        chunk(12, 0, { single: undefined, candidates: [7] }),
        { ...chunk(12, 0), fields: { ...chunk(12, 0).fields, candidate: { value: "{", type: "STRING" } } },
        { recordName: "x", recordType: "SignalEnvelope", recordChangeTag: "z", fields: null },
    ];
    for (const record of bad) assert.deepEqual(inbox.take(record, NOW), [], record.recordName);
    assert.equal(inbox.counters.malformed, bad.length);
});

test("own records and other sessions are not signals to apply", () => {
    const inbox = bob();
    assert.equal(inbox.take(envelope("answer", 10, "bob"), NOW)[0].own, true);
    const other = envelope("offer", 10);
    other.fields.sessionKey.value = "room_abcd1234#alice#carol";
    assert.deepEqual(inbox.take(other, NOW), []);
    assert.equal(inbox.counters.otherSessions, 1);
});

test("at most MAX_HELD_PER_EPOCH chunks wait", () => {
    const inbox = bob();
    for (let seq = 0; seq < MAX_HELD_PER_EPOCH + 5; seq++) inbox.take(chunk(10, seq), NOW);
    assert.equal(inbox.counters.held, MAX_HELD_PER_EPOCH);
    assert.equal(inbox.counters.malformed, 5);
});

test("an INT64 where a TIMESTAMP is expected is read (docs/PROTOCOL.md §4); another type is not", () => {
    const inbox = bob();
    const offer = envelope("offer", 10, "alice", { updatedAt: { value: NOW, type: "INT64" } });
    assert.equal(inbox.take(offer, NOW)[0].updatedAt, NOW);
    inbox.descriptionSet(10, "uf");
    const early = chunk(10, 0);
    early.fields.chunkCreatedAt.type = "INT64";
    assert.equal(inbox.take(early, NOW).length, 1);
    const text = envelope("answer", 10, "alice", { updatedAt: { value: String(NOW), type: "STRING" } });
    assert.deepEqual(inbox.take(text, NOW), []);
    assert.equal(inbox.counters.malformed, 1);
});
