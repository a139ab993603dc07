// The join order of a group call (docs/PROTOCOL.md §11.2, §11.4): who makes each pair's first offer and who
// stays when more members are present than the room allows (run: node --test Tests/CallPageJS).
import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_MEMBERS, joinOrder, offersFirst, ordinal, rankBeyondLimit, rankOf, ranked }
    from "../../Sources/StoreServer/CallPage/web/ranking.js";

const T = 1_700_000_000_000;
const m = (userId, joinedAt) => ({ userId, joinedAt });

test("members are ordered by joinedAt, then by user ID in UTF-8 bytes", () => {
    assert.ok(joinOrder(m("zed", T), m("amy", T + 1)) < 0);
    assert.ok(joinOrder(m("amy", T), m("zed", T)) < 0);
    // U+FF21 sorts before U+1F600 in UTF-8 bytes (EF… < F0…), after it in UTF-16 units.
    assert.ok(joinOrder(m("\uFF21", T), m("\u{1F600}", T)) < 0);
    assert.equal(joinOrder(m("amy", T), m("amy", T)), 0);
    assert.deepEqual(ranked([m("c", T + 2), m("b", T), m("a", T)]).map((x) => x.userId), ["a", "b", "c"]);
});

test("in every pair exactly one side offers first: the later joiner, on a tie the higher user ID", () => {
    const members = [m("alice", T + 5), m("bob", T), m("carol", T + 5), m("dave", T + 1)];
    for (const a of members) {
        for (const b of members) {
            if (a === b) continue;
            assert.notEqual(offersFirst(a, b), offersFirst(b, a), `${a.userId}/${b.userId}`);
        }
    }
    assert.equal(offersFirst(m("alice", T + 5), m("bob", T)), true, "alice joined later");
    assert.equal(offersFirst(m("carol", T + 5), m("alice", T + 5)), true, "a tie: the higher ID is later");
});

test("a 6th member is beyond the limit of 5; the 5th is not", () => {
    const six = ranked([1, 2, 3, 4, 5, 6].map((i) => m(`u${i}`, T + i)));
    assert.equal(MAX_MEMBERS, 5);
    assert.equal(rankOf(six, "u6"), 6);
    assert.equal(rankOf(six, "nobody"), 0);
    const args = { present: true, rankedMembers: six, legCount: 0, limit: MAX_MEMBERS };
    assert.equal(rankBeyondLimit("u6", args), 6);
    assert.equal(rankBeyondLimit("u5", args), null);
});

test("a caller without presence counts after our legs", () => {
    const args = { present: false, rankedMembers: [], limit: 5 };
    assert.equal(rankBeyondLimit("x", { ...args, legCount: 3 }), null, "us, 3 legs, the caller: 5");
    assert.equal(rankBeyondLimit("x", { ...args, legCount: 4 }), 6);
});

test("ordinals for the messages", () => {
    assert.deepEqual([1, 2, 3, 4, 6, 11, 12, 13, 21, 22, 101].map(ordinal),
        ["1st", "2nd", "3rd", "4th", "6th", "11th", "12th", "13th", "21st", "22nd", "101st"]);
});
