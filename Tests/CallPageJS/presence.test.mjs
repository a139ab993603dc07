// Presence records (docs/PROTOCOL.md §11.1) and the roster built from them: every check a reader makes on a
// CallMember another user could have written (run: node --test Tests/CallPageJS).
import { test } from "node:test";
import assert from "node:assert/strict";
import { CLOCK_SKEW_MS, PRESENCE_TTL_MS, checkedMember, isMemberSession, memberRecord, newMemberSession }
    from "../../Sources/StoreServer/CallPage/web/presence.js";
import { Roster } from "../../Sources/StoreServer/CallPage/web/roster.js";
import { MalformedRecord } from "../../Sources/StoreServer/CallPage/web/records.js";
import { compact } from "../../Sources/StoreServer/CallPage/web/names.js";

const ROOM = "room_abcd1234";
const NOW = 1_700_000_000_000;
const SESSION = "0123456789abcdef0123456789abcdef";

/** A CallMember as the store returns it: fields as `memberRecord` writes them, then the server's stamps. */
async function fetched(userId, { joinedAt = NOW, expiresAt = NOW + PRESENCE_TTL_MS, writer = userId,
    created = NOW, modified = NOW, memberSession = SESSION, room = ROOM } = {}) {
    const record = await memberRecord({ room, userId, memberSession, joinedAt, expiresAt });
    return { ...record, recordChangeTag: "t1", created: { timestamp: created, userRecordName: writer },
        modified: { timestamp: modified, userRecordName: writer } };
}

async function refusal(record, pattern) {
    await assert.rejects(checkedMember(record, ROOM), (error) => error instanceof MalformedRecord
        && pattern.test(error.message), `expected ${pattern}`);
}

test("a member's own record, as saved, is taken", async () => {
    const member = await checkedMember(await fetched("alice"), ROOM);
    assert.deepEqual(member, { userId: "alice", memberSession: SESSION, joinedAt: NOW, expiresAt: NOW + 45000,
        recordName: "CM_alice", tag: "t1" });
});

test("a member session is 32 lower-case hex digits, new on every join", () => {
    const a = newMemberSession(), b = newMemberSession();
    assert.ok(isMemberSession(a) && isMemberSession(b));
    assert.notEqual(a, b);
    for (const bad of [SESSION.toUpperCase(), SESSION.slice(1), `${SESSION}0`, 42, null, "g".repeat(32)]) {
        assert.equal(isMemberSession(bad), false, String(bad));
    }
});

test("a record written by another user than the one it names is refused", async () => {
    await refusal(await fetched("alice", { writer: "mallory" }), /last written by mallory; only alice/);
});

test("a record under another user's name is refused", async () => {
    const record = await fetched("alice");
    record.recordName = "CM_bob";
    await refusal(record, /not the user the name is for/);
});

test("hostile fields: another room, a bad user ID, a bad member session, wrong types", async () => {
    await refusal(await fetched("alice", { room: "room_zzzzzzzz" }), /names room room_zzzzzzzz/);
    await refusal(await fetched("al ice"), /printable ASCII/);
    await refusal(await fetched("alice", { memberSession: "not-hex" }), /memberSession/);
    const typed = await fetched("alice");
    typed.fields.joinedAt = { value: String(NOW), type: "STRING" };
    await refusal(typed, /joinedAt is STRING/);
    const unsafe = await fetched("alice");
    unsafe.fields.expiresAt = { value: 2 ** 60, type: "TIMESTAMP" };
    await refusal(unsafe, /expiresAt .* out of range/);
    const missing = await fetched("alice");
    delete missing.fields.memberSession;
    await refusal(missing, /memberSession is missing/);
    const unstamped = await fetched("alice");
    delete unstamped.modified;
    await refusal(unstamped, /no server stamp modified/);
});

test("joinedAt must lie within the record's lifetime, widened by the clock skew", async () => {
    await refusal(await fetched("alice", { joinedAt: NOW - CLOCK_SKEW_MS - 1, expiresAt: NOW + 1000 }),
        /joinedAt .* outside/);
    await refusal(await fetched("alice", { joinedAt: NOW + CLOCK_SKEW_MS + 1, expiresAt: NOW + 20000 }),
        /joinedAt .* outside/);
    const edge = await checkedMember(await fetched("alice", { joinedAt: NOW - CLOCK_SKEW_MS }), ROOM);
    assert.equal(edge.joinedAt, NOW - CLOCK_SKEW_MS);
});

test("expiresAt cannot pin a member in the room: at most a TTL (plus skew) after the last change", async () => {
    await refusal(await fetched("alice", { expiresAt: 253402300799000 }), /expiresAt .* more than the TTL/);
    await refusal(await fetched("alice", { expiresAt: NOW + CLOCK_SKEW_MS + PRESENCE_TTL_MS + 1 }), /expiresAt/);
    await refusal(await fetched("alice", { joinedAt: NOW, expiresAt: NOW - 1 }), /before joinedAt/);
    const edge = await checkedMember(await fetched("alice", { expiresAt: NOW + CLOCK_SKEW_MS + PRESENCE_TTL_MS }),
        ROOM);
    assert.equal(edge.expiresAt, NOW + 55000);
});

test("an INT64 where a TIMESTAMP is expected is read too", async () => {
    const record = await fetched("alice");
    record.fields.joinedAt.type = "INT64";
    assert.equal((await checkedMember(record, ROOM)).joinedAt, NOW);
});

test("a user ID too long for CM_<id> is compacted in the name only", async () => {
    const long = "u".repeat(300);
    const record = await fetched(long);
    assert.equal(record.recordName, `CM_${await compact(long)}`);
    assert.equal((await checkedMember(record, ROOM)).userId, long);
});

test("the roster: joined, refreshed, rejoined with a new session, unchanged", () => {
    const roster = new Roster();
    const bob = { userId: "bob", memberSession: SESSION, joinedAt: NOW, expiresAt: NOW + 45000, recordName: "CM_bob" };
    assert.equal(roster.take(bob).change, "joined");
    assert.equal(roster.take(bob).change, "unchanged");
    assert.equal(roster.take({ ...bob, expiresAt: NOW + 65000 }).change, "refreshed");
    assert.equal(roster.take({ ...bob, expiresAt: NOW + 50000 }).change, "unchanged", "an older version");
    const again = roster.take({ ...bob, memberSession: "f".repeat(32), joinedAt: NOW + 70000,
        expiresAt: NOW + 115000 });
    assert.equal(again.change, "rejoined");
    assert.equal(again.previous.memberSession, SESSION);
});

test("the roster: present until expiresAt, each expiry reported once, deletions make members departed", () => {
    const roster = new Roster();
    roster.take({ userId: "bob", memberSession: SESSION, joinedAt: NOW, expiresAt: NOW + 45000, recordName: "CM_bob" });
    roster.take({ userId: "cy", memberSession: SESSION, joinedAt: NOW, expiresAt: NOW + 20000, recordName: "CM_cy" });
    assert.deepEqual(roster.present(NOW + 30000).map((m) => m.userId), ["bob"]);
    assert.ok(roster.isPresent("bob", NOW + 44999) && !roster.isPresent("bob", NOW + 45000));
    assert.deepEqual(roster.newlyExpired(NOW + 30000).map((m) => m.userId), ["cy"]);
    assert.deepEqual(roster.newlyExpired(NOW + 31000), []);
    assert.ok(roster.departed.has("cy") && roster.isMember("cy"));
    assert.deepEqual(roster.longExpired(NOW + 65000, 45000).map((m) => m.userId), ["cy"]);
    assert.equal(roster.remove("CM_bob").userId, "bob");
    assert.equal(roster.remove("CM_bob"), null);
    assert.ok(roster.departed.has("bob") && !roster.isMember("bob"));
});
