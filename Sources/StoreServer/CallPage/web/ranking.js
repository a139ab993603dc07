// The order of a group call's members, docs/PROTOCOL.md §11.2 and §11.4: by `joinedAt`, ties by user ID
// in UTF-8 byte order. It decides who makes each pair's first offer — the later of the two, who on joining
// found the other's record already there — and who stays when more members are present than the room
// allows: the earliest ones. No I/O: unit-tested with node (Tests/CallPageJS).
import { compareBytes } from "./names.js";

/** Members of a call at most, this page included. */
export const MAX_MEMBERS = 5;

/** Negative when `a` joined before `b` (members are {userId, joinedAt}). */
export function joinOrder(a, b) {
    if (a.joinedAt !== b.joinedAt) return a.joinedAt < b.joinedAt ? -1 : 1;
    return compareBytes(a.userId, b.userId);
}

/** The members in join order (a new array). */
export function ranked(members) {
    return [...members].sort(joinOrder);
}

/** Whether `me` makes the first offer to `other`: it joined later. */
export function offersFirst(me, other) {
    return joinOrder(other, me) < 0;
}

/** The 1-based place of `userId` among `rankedMembers`, 0 when absent. */
export function rankOf(rankedMembers, userId) {
    return rankedMembers.findIndex((m) => m.userId === userId) + 1;
}

/** `1st`, `2nd`, `3rd`, `6th` … for messages. */
export function ordinal(n) {
    const tens = n % 100;
    if (tens >= 11 && tens <= 13) return `${n}th`;
    return `${n}${["th", "st", "nd", "rd"][n % 10] ?? "th"}`;
}

/**
 * The rank a user without a leg would have beyond the room's limit, or null when it may have a leg: a
 * present member by its place in the join order (`rankedMembers` includes us), anyone else after the legs
 * already there.
 */
export function rankBeyondLimit(user, { present, rankedMembers, legCount, limit }) {
    if (present) {
        const rank = rankedMembers.findIndex((m) => m.userId === user) + 1;
        return rank > limit ? rank : null;
    }
    return legCount + 2 > limit ? legCount + 2 : null;
}
