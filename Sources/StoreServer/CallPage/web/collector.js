// Collection of whole pairs in a room's group call (docs/PROTOCOL.md §11.5). Each leg cleans its own pair
// while it lasts (§7); the records of pairs nobody has a leg for — left by members who crashed, left at the
// same moment as their partner, or were removed — stay in the zone. This keeps their names (learned from
// the change feed; of each record only the user IDs it names are read) and hands them out for deletion once
// both users of the pair are gone, a bounded number at a time. Pairs of users never seen as group-call
// members (calls of two) are never handed out: the caller decides who is gone. No I/O: unit-tested with node.
import { otherUser } from "./routing.js";

/** Record names kept at most. */
export const COLLECTOR_CAPACITY = 4096;

export class PairCollector {
    constructor(room, capacity = COLLECTOR_CAPACITY) {
        this.room = room;
        this.capacity = capacity;
        /** sessionKey → {users: Set, names: Set}. */
        this.pairs = new Map();
        /** recordName → sessionKey. */
        this.pairOf = new Map();
        /** Names not kept for want of room. */
        this.overflow = 0;
    }

    /** A signal record of the pair `key` (the fields naming users are read, nothing else). */
    observe(record, key) {
        const users = [];
        for (const name of ["userId", "otherUserId", "ownerUserId"]) {
            const f = record.fields?.[name];
            if (f?.type === "STRING" && typeof f.value === "string") users.push(f.value);
        }
        this.note(key, users, [record.recordName]);
    }

    /** Names of records of the pair `key`, and users of it (those the key does not name are ignored). */
    note(key, users, names) {
        const pair = this.pairs.get(key) ?? { users: new Set(), names: new Set() };
        for (const user of users) {
            if (pair.users.size < 2 && otherUser(key, this.room, user) !== null) pair.users.add(user);
        }
        if (pair.users.size === 1) {
            const other = otherUser(key, this.room, [...pair.users][0]);
            if (other !== null) pair.users.add(other);
        }
        for (const name of names) {
            if (this.pairOf.has(name)) continue;
            if (this.pairOf.size >= this.capacity) {
                this.overflow += 1;
                continue;
            }
            pair.names.add(name);
            this.pairOf.set(name, key);
        }
        this.pairs.set(key, pair);
    }

    /** The change feed reported these names deleted. */
    forget(names) {
        for (const name of names) {
            const key = this.pairOf.get(name);
            if (key === undefined) continue;
            this.pairOf.delete(name);
            const pair = this.pairs.get(key);
            pair?.names.delete(name);
            if (pair && pair.names.size === 0) this.pairs.delete(key);
        }
    }

    /** A leg took the pair `key` over: its records are the leg's now. */
    release(key) {
        const pair = this.pairs.get(key);
        if (!pair) return;
        for (const name of pair.names) this.pairOf.delete(name);
        this.pairs.delete(key);
    }

    /** Up to `limit` names of pairs whose two users are known and `dead(users)` says are done, taken out. */
    take(limit, dead) {
        const doomed = [];
        for (const key of [...this.pairs.keys()].sort()) {
            if (doomed.length >= limit) break;
            const pair = this.pairs.get(key);
            if (pair.users.size !== 2 || !dead(pair.users)) continue;
            for (const name of [...pair.names].sort().slice(0, limit - doomed.length)) {
                doomed.push(name);
                pair.names.delete(name);
                this.pairOf.delete(name);
            }
            if (pair.names.size === 0) this.pairs.delete(key);
        }
        return doomed;
    }
}
