// Reading fetched records into typed signals: docs/SIGNALING.md §2 (field types) and docs/PROTOCOL.md
// "Records". Everything here comes from the other user: check type and range, throw a reason, never guess.

/** How far ahead of our clock a remote epoch may be (spec §2: more than a day ahead is invalid). */
export const MAX_EPOCH_LEAD_MS = 24 * 60 * 60 * 1000;

/** A record that cannot be used, with the reason a person can act on. */
export class MalformedRecord extends Error {}

function field(record, name, type) {
    const f = record.fields?.[name];
    if (f === undefined || f === null || typeof f !== "object") {
        throw new MalformedRecord(`${record.recordName}: ${name} is missing`);
    }
    if (f.type !== type) throw new MalformedRecord(`${record.recordName}: ${name} is ${f.type}, expected ${type}`);
    return f.value;
}

/** A STRING field (non-empty unless `empty`). */
export function text(record, name, { empty = false } = {}) {
    const v = field(record, name, "STRING");
    if (typeof v !== "string") throw new MalformedRecord(`${record.recordName}: ${name} is not a string`);
    if (!empty && v.length === 0) throw new MalformedRecord(`${record.recordName}: ${name} is empty`);
    return v;
}

/** A non-negative INT64 that a JavaScript number holds exactly. */
function count(record, name) {
    const v = field(record, name, "INT64");
    if (!Number.isSafeInteger(v) || v < 0) {
        throw new MalformedRecord(`${record.recordName}: ${name} ${String(v).slice(0, 24)} is out of range`);
    }
    return v;
}

/** Milliseconds since 1970: a TIMESTAMP, or an INT64 (docs/PROTOCOL.md §4, **Decided**), a safe integer. */
export function milliseconds(record, name) {
    const f = record.fields?.[name];
    if (f === undefined || f === null || typeof f !== "object") {
        throw new MalformedRecord(`${record.recordName}: ${name} is missing`);
    }
    if (f.type !== "TIMESTAMP" && f.type !== "INT64") {
        throw new MalformedRecord(`${record.recordName}: ${name} is ${f.type}, expected TIMESTAMP`);
    }
    if (!Number.isSafeInteger(f.value)) {
        throw new MalformedRecord(`${record.recordName}: ${name} ${String(f.value).slice(0, 24)} is out of range`);
    }
    return f.value;
}

function epochOf(record, nowMs) {
    const epoch = count(record, "callEpoch");
    if (epoch > nowMs + MAX_EPOCH_LEAD_MS) {
        throw new MalformedRecord(`${record.recordName}: callEpoch ${epoch} is more than a day ahead`);
    }
    return epoch;
}

/** The `candidate` field of a chunk: `batch-v1` JSON or a `single` candidate ("" = end of candidates). */
export function decodeCandidates(candidateType, value, name) {
    if (candidateType === "single") {
        return { candidates: value === "" ? [] : [value], eoc: value === "" };
    }
    if (candidateType !== "batch-v1") throw new MalformedRecord(`${name}: candidateType ${candidateType} is unknown`);
    let batch;
    try {
        batch = JSON.parse(value);
    } catch {
        throw new MalformedRecord(`${name}: candidate is not JSON`);
    }
    if (batch === null || typeof batch !== "object" || batch.v !== 1 || !Array.isArray(batch.candidates)
        || !batch.candidates.every((c) => typeof c === "string")
        || (batch.eoc !== undefined && typeof batch.eoc !== "boolean")) {
        throw new MalformedRecord(`${name}: candidate is not {"v":1,"candidates":[strings],"eoc":bool}`);
    }
    return { candidates: batch.candidates, eoc: batch.eoc === true };
}

/** The batch-v1 JSON, keys in the spec's order. */
export function encodeCandidates(candidates, eoc) {
    return JSON.stringify({ v: 1, candidates, eoc });
}

/**
 * A fetched record as a signal: {kind: "session"|"offer"|"answer"|"chunk", name, tag, epoch, owner, …};
 * null for record types signaling does not read (Room, RoomMember); throws MalformedRecord.
 */
export function decodeSignal(record, nowMs) {
    const base = { name: record.recordName, tag: record.recordChangeTag ?? "" };
    switch (record.recordType) {
    case "SignalSession":
        return { ...base, kind: "session", sessionKey: text(record, "sessionKey"), epoch: epochOf(record, nowMs),
            owner: text(record, "userId") };
    case "SignalEnvelope": {
        const type = text(record, "envelopeType");
        if (type !== "offer" && type !== "answer") {
            throw new MalformedRecord(`${record.recordName}: envelopeType ${type.slice(0, 20)} is not offer/answer`);
        }
        return { ...base, kind: type, sessionKey: text(record, "sessionKey"), epoch: epochOf(record, nowMs),
            owner: text(record, "ownerUserId"), sdp: text(record, "payload"),
            updatedAt: milliseconds(record, "updatedAt") };
    }
    case "SignalIceChunk": {
        const decoded = decodeCandidates(text(record, "candidateType"), text(record, "candidate", { empty: true }),
            record.recordName);
        return { ...base, kind: "chunk", sessionKey: text(record, "sessionKey"), epoch: epochOf(record, nowMs),
            owner: text(record, "ownerUserId"), seq: count(record, "seq"), ufrag: text(record, "ufrag"),
            createdAt: milliseconds(record, "chunkCreatedAt"), ...decoded };
    }
    default:
        return null;
    }
}
