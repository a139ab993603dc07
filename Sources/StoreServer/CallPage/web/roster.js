// The other members of a room's group call, as their presence records say (docs/PROTOCOL.md §11.1): the
// latest checked version of each user's `CallMember`, who is present now, who joined anew (a new member
// session: its earlier pairs are over), and who is gone. Versions that fail the checks never get here (the
// last good one stands). No I/O: unit-tested with node (Tests/CallPageJS).

export class Roster {
    constructor() {
        /** userId → the latest version taken. */
        this.members = new Map();
        /** Users whose record was deleted or expired and who have not come back: their pairs may be collected. */
        this.departed = new Set();
        /** Users whose expiry was reported, so it is acted on once. */
        this.expired = new Set();
    }

    /**
     * Takes a checked version in: {change: "joined"|"refreshed"|"rejoined"|"unchanged", previous} — "rejoined"
     * when the user comes with a new member session (`previous` is the one it replaces).
     */
    take(member) {
        const known = this.members.get(member.userId);
        let change;
        if (!known) {
            change = "joined";
        } else if (known.memberSession !== member.memberSession) {
            change = "rejoined";
        } else if (member.expiresAt > known.expiresAt) {
            change = "refreshed";
        } else {
            return { change: "unchanged", previous: known };
        }
        this.members.set(member.userId, member);
        this.expired.delete(member.userId);
        this.departed.delete(member.userId);
        return { change, previous: known ?? null };
    }

    /** The member whose record `recordName` was deleted, now gone; null if none was known. */
    remove(recordName) {
        for (const [user, member] of this.members) {
            if (member.recordName !== recordName) continue;
            this.members.delete(user);
            this.expired.delete(user);
            this.departed.add(user);
            return member;
        }
        return null;
    }

    isPresent(user, nowMs) {
        return (this.members.get(user)?.expiresAt ?? 0) > nowMs;
    }

    /** Whether `user` has a presence record here, present or expired. */
    isMember(user) {
        return this.members.has(user);
    }

    present(nowMs) {
        return [...this.members.values()].filter((m) => m.expiresAt > nowMs);
    }

    /** Members whose presence ran out by `nowMs` and were not reported yet; each is reported once. */
    newlyExpired(nowMs) {
        const out = [];
        for (const member of this.members.values()) {
            if (member.expiresAt > nowMs || this.expired.has(member.userId)) continue;
            this.expired.add(member.userId);
            this.departed.add(member.userId);
            out.push(member);
        }
        return out;
    }

    /** Members expired for longer than `graceMs`: anyone may delete their records. */
    longExpired(nowMs, graceMs) {
        return [...this.members.values()].filter((m) => m.expiresAt <= nowMs - graceMs);
    }
}
