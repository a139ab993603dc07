// Keys, roles and deterministic record names: docs/SIGNALING.md §1–2, docs/PROTOCOL.md §3–4.
// Both peers compute every name but a chunk's uuid, so nothing needs a query (the shared database has none).

/** CloudKit's longest record name, in bytes of ASCII. */
export const MAX_NAME = 255;

const utf8 = new TextEncoder();

/** Byte-wise comparison of the UTF-8 forms (not UTF-16 code units: the spec orders bytes). */
export function compareBytes(a, b) {
    const x = utf8.encode(a), y = utf8.encode(b);
    const n = Math.min(x.length, y.length);
    for (let i = 0; i < n; i++) {
        if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
    }
    return x.length === y.length ? 0 : (x.length < y.length ? -1 : 1);
}

/** `<roomID>#<lo>#<hi>`, the two user IDs in byte order. */
export function sessionKey(roomID, me, remote) {
    const [lo, hi] = compareBytes(me, remote) <= 0 ? [me, remote] : [remote, me];
    return `${roomID}#${lo}#${hi}`;
}

/** Fixed per pair: the lower ID makes the first offer, the higher one is polite (yields in glare). */
export function roles(me, remote) {
    const order = compareBytes(me, remote);
    return { isOfferCreator: order < 0, isPolite: order > 0 };
}

/** A user ID as group calls take it (docs/PROTOCOL.md §3): 1 or more printable ASCII characters, no spaces. */
export function isUserID(text) {
    return typeof text === "string" && /^[\x21-\x7e]+$/.test(text);
}

/** A room ID is `room_` and 8 characters of [a-z0-9]. */
export function isRoomID(text) {
    return /^room_[a-z0-9]{8}$/.test(text);
}

/** `h` + the hex of the first 16 bytes of SHA-256(text): 33 characters (WebCrypto). */
export async function compact(text) {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(text)));
    let hex = "h";
    for (const byte of digest.subarray(0, 16)) hex += byte.toString(16).padStart(2, "0");
    return hex;
}

/** `build(part)`, or `build(compact(part))` when the whole would exceed 255 bytes. */
async function fit(part, build) {
    const full = build(part);
    return utf8.encode(full).length <= MAX_NAME ? full : build(await compact(part));
}

/** The names of one session's records; the `sessionKey` part is compacted only in names, never in fields. */
export class RecordNames {
    constructor(key) {
        this.key = key;
    }

    /** `SS_<sessionKey>`. */
    session() {
        return fit(this.key, (key) => `SS_${key}`);
    }

    /** `SE_<sessionKey>_<callEpoch>_<offer|answer>`. */
    envelope(epoch, type) {
        return fit(this.key, (key) => `SE_${key}_${epoch}_${type}`);
    }

    /** `IC_<sessionKey>_<callEpoch>_<ownerUserId>_<uuid>`; a very long owner ID is compacted too. */
    async chunk(epoch, owner, uuid) {
        const name = await fit(this.key, (key) => `IC_${key}_${epoch}_${owner}_${uuid}`);
        if (utf8.encode(name).length <= MAX_NAME) return name;
        return `IC_${await compact(this.key)}_${epoch}_${await compact(owner)}_${uuid}`;
    }

    /** `RM_<userId>`, compacted the same way. */
    static member(userID) {
        return fit(userID, (id) => `RM_${id}`);
    }

    /** `CM_<userId>`, a member's presence in a group call (§11.1), compacted like `RM_`. */
    static callMember(userID) {
        return fit(userID, (id) => `CM_${id}`);
    }
}

/** A chunk's uuid: 32 lower-case hex digits. */
export function chunkUUID() {
    return crypto.randomUUID().replaceAll("-", "");
}
