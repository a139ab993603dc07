// Who starts a pair in a group call besides the join order (docs/PROTOCOL.md §11.2, §11.6): an offer from
// a user we have no leg with starts one (the offer proves presence) when it is recent, to us, and written by
// its owner; a fresh `RoomMember` record of a user without presence, whose client makes calls of two only,
// is called after a grace period. And how long a leg may wait for what its partner owes. No I/O:
// unit-tested with node (Tests/CallPageJS).
import { RecordNames, compareBytes, isUserID } from "./names.js";
import { claimedWriter, otherUser, writtenByOwner } from "./routing.js";

/** A member waiting this long for the offer its partner owes offers itself. */
export const OFFER_FALLBACK_MS = 8000;
/** A leg whose lookup, expected offer (after the fallback) or answer has not come within this ends unanswered. */
export const UNANSWERED_MS = 40000;
/** Offers and `RoomMember` records older than this are leftovers of earlier calls. */
export const CALL_OF_TWO_WINDOW_MS = 120000;
/** How long after seeing a call-of-two peer's `RoomMember` record we fetch once more before calling it. */
export const CALL_OF_TWO_GRACE_MS = 3000;

/**
 * Whether a signal record of a pair without a leg here starts one: {caller} when it is an offer naming us in
 * its session key, written by its owner (the server's stamp), saved within the window and after our last leg
 * with that user ended (`legEndedAt`: userId → ms); {forged: reason} when its stamp names another writer;
 * null otherwise.
 */
export function callerOffer(record, key, { room, me, nowMs, legEndedAt }) {
    if (record.recordType !== "SignalEnvelope") return null;
    const type = record.fields?.envelopeType;
    if (type?.type !== "STRING" || type.value !== "offer") return null;
    const owner = claimedWriter(record);
    if (owner === null || owner === me || otherUser(key, room, me) !== owner) return null;
    const modifiedAt = record.modified?.timestamp;
    if (!Number.isSafeInteger(modifiedAt)) return null;
    const since = Math.max(nowMs - CALL_OF_TWO_WINDOW_MS, legEndedAt.get(owner) ?? -Infinity);
    if (modifiedAt < since) return null;
    if (!writtenByOwner(record)) {
        return { forged: `${record.recordName}: names ${owner.slice(0, 40)} but was written by `
            + `${String(record.modified?.userRecordName).slice(0, 40)}` };
    }
    return { caller: owner };
}

/**
 * The user of a `RoomMember` record to call as a call-of-two peer (§11.6), or null: the record has no
 * `groupCallVersion`, is named for its `userId` and was last written by that user within the window; we
 * have the lower ID (by the roles of two we offer); the user has no presence record and no leg here.
 */
export async function callOfTwoPeer(record, { me, nowMs, isMember, hasLeg }) {
    if (record.recordType !== "RoomMember") return null;
    const version = record.fields?.groupCallVersion;
    if (version && version.type === "INT64" && Number.isSafeInteger(version.value) && version.value > 0) return null;
    const user = record.fields?.userId;
    if (user?.type !== "STRING" || !isUserID(user.value)) return null;
    const id = user.value;
    const modified = record.modified;
    if (id === me || compareBytes(me, id) >= 0 || modified?.userRecordName !== id) return null;
    if (!Number.isSafeInteger(modified.timestamp) || modified.timestamp < nowMs - CALL_OF_TWO_WINDOW_MS) return null;
    if (isMember(id) || hasLeg(id)) return null;
    if (record.recordName !== await RecordNames.member(id)) return null;
    return id;
}
