// What one fetch brings to a group call, sorted before anything of it is read (docs/PROTOCOL.md §11.3):
// presence records and their deletions, `RoomMember` records (calls of two), and signal records by their
// `sessionKey` field — the pair they belong to — so that records of pairs without us are never parsed. A
// signal record whose last writer is not the user it names as its writer is forged. No I/O: unit-tested
// with node (Tests/CallPageJS).
import { sessionKey } from "./names.js";

const SIGNAL_TYPES = new Set(["SignalSession", "SignalEnvelope", "SignalIceChunk"]);

/** A record's `sessionKey` field when it is a non-empty STRING, else null. */
export function sessionKeyOf(record) {
    const f = record.fields?.sessionKey;
    return f && f.type === "STRING" && typeof f.value === "string" && f.value !== "" ? f.value : null;
}

/** The user a signal record names as its writer: a session's `userId`, an envelope's or chunk's `ownerUserId`. */
export function claimedWriter(record) {
    const f = record.fields?.[record.recordType === "SignalSession" ? "userId" : "ownerUserId"];
    return f && f.type === "STRING" && typeof f.value === "string" ? f.value : null;
}

/** Whether the store's stamp of the last writer names the user the record claims as its writer. */
export function writtenByOwner(record) {
    const writer = record.modified?.userRecordName;
    return typeof writer === "string" && writer === claimedWriter(record);
}

/**
 * The other user of session key `key` in `room` when `user` is one of its two, else null. User IDs may hold
 * `#`: each reading is checked by forming the key again.
 */
export function otherUser(key, room, user) {
    const head = `${room}#`;
    if (typeof key !== "string" || !key.startsWith(head)) return null;
    const pair = key.slice(head.length);
    const candidates = [];
    if (pair.startsWith(`${user}#`)) candidates.push(pair.slice(user.length + 1));
    if (pair.endsWith(`#${user}`)) candidates.push(pair.slice(0, pair.length - user.length - 1));
    return candidates.find((other) => other !== "" && other !== user && sessionKey(room, user, other) === key) ?? null;
}

/** Whether a deletion (`{recordName, recordType, deleted: true}`) is of a presence record. */
export function isMemberDeletion(deletion) {
    return deletion.recordType === "CallMember" || (!deletion.recordType && deletion.recordName?.startsWith("CM_"));
}

/**
 * One batch of fetched records, sorted: {members, memberDeletions, roomMembers, signals: [{record, key}],
 * unkeyed (signal records without a session key), deletions (of everything but presence records)}.
 */
export function sortBatch(records) {
    const batch = { members: [], memberDeletions: [], roomMembers: [], signals: [], unkeyed: [], deletions: [] };
    for (const record of records) {
        if (!record || typeof record !== "object" || typeof record.recordName !== "string") continue;
        if (record.deleted) {
            (isMemberDeletion(record) ? batch.memberDeletions : batch.deletions).push(record);
        } else if (record.recordType === "CallMember") {
            batch.members.push(record);
        } else if (record.recordType === "RoomMember") {
            batch.roomMembers.push(record);
        } else if (SIGNAL_TYPES.has(record.recordType)) {
            const key = sessionKeyOf(record);
            if (key === null) batch.unkeyed.push(record);
            else batch.signals.push({ record, key });
        }
    }
    return batch;
}
