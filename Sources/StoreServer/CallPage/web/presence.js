// Presence in a room's group call, docs/PROTOCOL.md §11.1: the `CallMember` record `CM_<userId>`, which
// only its user writes — a member session new on every join, when it joined, until when it counts as
// present. Readers check a fetched version against the server's stamps (`created`, `modified`), which no
// client writes, and drop what another user could have forged or what would pin a member in the room.
// No I/O: unit-tested with node (Tests/CallPageJS).
import { RecordNames, isUserID } from "./names.js";
import { MalformedRecord, milliseconds, text } from "./records.js";

/** How long a member counts as present after a save. */
export const PRESENCE_TTL_MS = 45000;
/** How often a member saves its record again. */
export const REFRESH_MS = 20000;
/** How far a writer's clock may be off the store's: it widens the checks against the server's stamps. */
export const CLOCK_SKEW_MS = 10000;

/** Whether `value` is a member session: 32 lower-case hex digits. */
export function isMemberSession(value) {
    return typeof value === "string" && /^[0-9a-f]{32}$/.test(value);
}

/** A new member session, drawn at random. */
export function newMemberSession() {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Our record as saved: `member` is {room, userId, memberSession, joinedAt, expiresAt}. */
export async function memberRecord(member) {
    return { recordName: await RecordNames.callMember(member.userId), recordType: "CallMember", fields: {
        roomID: { value: member.room, type: "STRING" }, userId: { value: member.userId, type: "STRING" },
        memberSession: { value: member.memberSession, type: "STRING" },
        joinedAt: { value: member.joinedAt, type: "TIMESTAMP" },
        expiresAt: { value: member.expiresAt, type: "TIMESTAMP" } } };
}

function stamp(record, which) {
    const s = record[which];
    if (!s || typeof s !== "object" || !Number.isSafeInteger(s.timestamp) || typeof s.userRecordName !== "string") {
        throw new MalformedRecord(`${record.recordName}: has no server stamp ${which}`);
    }
    return s;
}

/**
 * A fetched `CallMember` as presence in `room`: {userId, memberSession, joinedAt, expiresAt, recordName, tag};
 * throws MalformedRecord with the reason when a check fails (docs/PROTOCOL.md §11.1).
 */
export async function checkedMember(record, room) {
    if (record?.recordType !== "CallMember") throw new MalformedRecord(`${record?.recordName}: not a CallMember`);
    const name = record.recordName;
    const roomID = text(record, "roomID");
    const userId = text(record, "userId");
    const memberSession = text(record, "memberSession", { empty: true });
    const joinedAt = milliseconds(record, "joinedAt");
    const expiresAt = milliseconds(record, "expiresAt");
    if (roomID !== room) throw new MalformedRecord(`${name}: roomID names room ${roomID.slice(0, 40)}, not ${room}`);
    if (!isUserID(userId)) {
        throw new MalformedRecord(`${name}: userId is not printable ASCII without spaces`);
    }
    if (name !== await RecordNames.callMember(userId)) {
        throw new MalformedRecord(`${name}: userId ${userId.slice(0, 40)} is not the user the name is for`);
    }
    const created = stamp(record, "created"), modified = stamp(record, "modified");
    if (modified.userRecordName !== userId) {
        throw new MalformedRecord(`${name}: last written by ${modified.userRecordName.slice(0, 40)}; only `
            + `${userId.slice(0, 40)} may write it`);
    }
    if (!isMemberSession(memberSession)) throw new MalformedRecord(`${name}: memberSession is not 32 lower-case hex`);
    const earliest = created.timestamp - CLOCK_SKEW_MS, latest = modified.timestamp + CLOCK_SKEW_MS;
    if (joinedAt < earliest || joinedAt > latest) {
        throw new MalformedRecord(`${name}: joinedAt ${joinedAt} is outside the record's lifetime [${earliest}, `
            + `${latest}] ms`);
    }
    const lastExpiry = latest + PRESENCE_TTL_MS;
    if (expiresAt < joinedAt || expiresAt > lastExpiry) {
        throw new MalformedRecord(`${name}: expiresAt ${expiresAt} is before joinedAt or more than the TTL after `
            + `the record's last change (at most ${lastExpiry} ms)`);
    }
    return { userId, memberSession, joinedAt, expiresAt, recordName: name, tag: record.recordChangeTag ?? "" };
}
