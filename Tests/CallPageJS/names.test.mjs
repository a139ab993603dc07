// The page's names, keys and epochs against docs/SIGNALING.md §1–3 (run: node --test Tests/CallPageJS).
import { test } from "node:test";
import assert from "node:assert/strict";
import { RecordNames, compact, compareBytes, roles, sessionKey } from "../../Sources/StoreServer/CallPage/web/names.js";
import { EpochClock } from "../../Sources/StoreServer/CallPage/web/epoch.js";

test("session key orders the user IDs by bytes, not UTF-16 units", () => {
    assert.equal(sessionKey("room_abcd1234", "bob", "alice"), "room_abcd1234#alice#bob");
    // U+FF21 (UTF-8 EF BC A1) sorts after U+1F600 (F0 9F 98 80) in UTF-16 units but before it in bytes.
    assert.equal(compareBytes("\uFF21", "\u{1F600}"), -1);
    assert.deepEqual(roles("alice", "bob"), { isOfferCreator: true, isPolite: false });
    assert.deepEqual(roles("bob", "alice"), { isOfferCreator: false, isPolite: true });
});

test("short names are spelled out", async () => {
    const names = new RecordNames("room_abcd1234#alice#bob");
    assert.equal(await names.session(), "SS_room_abcd1234#alice#bob");
    assert.equal(await names.envelope(1700000000000, "offer"), "SE_room_abcd1234#alice#bob_1700000000000_offer");
    assert.equal(await names.chunk(17, "alice", "ab"), "IC_room_abcd1234#alice#bob_17_alice_ab");
});

test("compaction is h + hex of the first 16 bytes of SHA-256 (FIPS 180 'abc' vector)", async () => {
    assert.equal(await compact("abc"), "hba7816bf8f01cfea414140de5dae2223");
});

test("names over 255 bytes compact the session key part only", async () => {
    const long = "u".repeat(130);
    const key = sessionKey("room_abcd1234", long, "v" + long);
    const names = new RecordNames(key);
    const hashed = await compact(key);
    assert.equal(await names.session(), `SS_${hashed}`);
    assert.equal(await names.envelope(5, "answer"), `SE_${hashed}_5_answer`);
    const owner = "w".repeat(300);
    const chunk = await names.chunk(5, owner, "c".repeat(32));
    assert.equal(chunk, `IC_${hashed}_5_${await compact(owner)}_${"c".repeat(32)}`);
    assert.ok(chunk.length <= 255);
    // A key just short enough stays as it is.
    const fits = "x".repeat(255 - "SS_".length);
    assert.equal(await new RecordNames(fits).session(), `SS_${fits}`);
    assert.equal(await new RecordNames(fits + "x").session(), `SS_${await compact(fits + "x")}`);
    assert.equal(await RecordNames.member("alice"), "RM_alice");
});

test("epochs are max(now, last + 1) and survive a clock step back", () => {
    const storage = new Map();
    const store = { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => storage.set(k, v) };
    const clock = new EpochClock("e", store);
    assert.equal(clock.next(1000), 1000);
    assert.equal(clock.next(1000), 1001);
    assert.equal(clock.next(10), 1002);
    clock.observe(5000);
    assert.equal(clock.next(10), 5001);
    assert.equal(new EpochClock("e", store).next(10), 5002, "a reload keeps the last epoch");
});
