// One call with one remote user over the zone: docs/SIGNALING.md §3–4 on an RTCPeerConnection — a call of two,
// or one pair of a group call (docs/PROTOCOL.md §11). The side making the first offer (in a call of two the
// offer creator, in a group call the later joiner) starts the first epoch; collisions follow the W3C
// perfect-negotiation example (makingOffer, ignoreOffer, isSettingRemoteAnswerPending) with the spec's glare
// rule: the higher epoch wins, on equal epochs the offer creator's (the lower user ID). Records in come from
// the inbox; records out are saved here. The remote's goodbye is in the records too (docs/PROTOCOL.md §7):
// its description of the active epoch deleted.
import { chunkUUID } from "./names.js";
import { encodeCandidates } from "./records.js";
import { MAX_OPERATIONS, StoreError } from "./store.js";

/** Own records older than this are deleted whatever their epoch (spec §3, GC). */
export const GC_TTL_MS = 10 * 60 * 1000;
/** Candidates gathered within this time go out in one chunk. */
const CHUNK_BATCH_MS = 40;
/** How often GC sweeps while a call runs (besides right after an epoch connects). */
const GC_INTERVAL_MS = 60000;
/** Saves of the session record retried after CONFLICT before the epoch is given up. */
const SESSION_RETRIES = 4;

const STRING = (value) => ({ value, type: "STRING" });
const INT64 = (value) => ({ value, type: "INT64" });
const TIMESTAMP = (value) => ({ value, type: "TIMESTAMP" });

/** The first `a=ice-ufrag:` of an SDP (the bundle's). */
export function ufragOf(sdp) {
    const line = sdp.split(/\r?\n/).find((l) => l.startsWith("a=ice-ufrag:"));
    return line ? line.slice(12).trim() : "";
}

function midOf(sdp) {
    const line = sdp.split(/\r?\n/).find((l) => l.startsWith("a=mid:"));
    return line ? line.slice(6).trim() : "0";
}

export class ZoneCall {
    /**
     * `firstOffer`: whether this side makes the call's first offer (a call of two: the offer creator; a group
     * call's pair: the later joiner, docs/PROTOCOL.md §11.2). `describe` turns our SDP into the payload saved
     * (a group call adds the leg's b=AS); `acceptLookup` filters records read by name (a group call drops
     * forged ones, §11.3).
     */
    constructor({ store, scope, zoneID, room, me, remote, key, names, roles, inbox, epochs, localStream, log,
        firstOffer = roles.isOfferCreator, describe = (sdp) => sdp, acceptLookup = () => true }) {
        Object.assign(this, { store, scope, zoneID, room, me, remote, key, names, roles, inbox, epochs, localStream,
            log, firstOffer, describe, acceptLookup });
        this.pc = new RTCPeerConnection({ iceServers: [] });
        /** The active epoch (ours or the remote's), null before the first. */
        this.epoch = null;
        this.makingOffer = false;
        this.ignoreOffer = false;
        this.isSettingRemoteAnswerPending = false;
        this.sessionTag = null;
        this.appliedOffers = new Set();
        this.finishedEpoch = null;
        /** Envelopes and chunks seen or written: name → {epoch, at, own}, for GC. */
        this.catalogue = new Map();
        /** Per epoch: our description is saved, the next seq, candidates waiting to go out. */
        this.local = { epoch: null, saved: false, seq: 0, pending: [], eoc: false, timer: null };
        this.writes = Promise.resolve();
        this.counters = { offersSaved: 0, answersSaved: 0, chunksSaved: 0, candidatesSent: 0, candidatesAdded: 0,
            resets: 0, ignoredOffers: 0, duplicateDescriptions: 0, sessionConflicts: 0, gcDeleted: 0, errors: 0,
            /** Remote signals applied, by what fetched them: lookup, start, push, push-open, poll. */
            appliedVia: {} };
        this.connectedAt = null;
        /** The remote's offer or answer of the active epoch as applied, {epoch, name, kind}: its deletion is the
         * remote's hang-up. Null until one is applied in the epoch. */
        this.remoteEnvelope = null;
        /** Why the call ended, once it has: {by, reason}. Nothing is applied or sent after it. */
        this.ending = null;
        /** Called once with the ending when the remote hangs up. */
        this.onRemoteHangUp = () => {};
        /** Called with (what, error) when applying or saving a signal failed. */
        this.onError = () => {};
        this.pc.onicecandidate = (event) => this.gathered(event.candidate);
        this.pc.onnegotiationneeded = () => this.negotiationNeeded();
        this.pc.onconnectionstatechange = () => this.connectionChanged();
    }

    /** Reads the session record by name (its epoch is the floor); the side making the first offer then offers. */
    async start() {
        const sessionName = await this.names.session();
        const found = await this.lookup([sessionName]);
        const session = found.find((r) => r.recordName === sessionName);
        if (session) {
            this.sessionTag = session.recordChangeTag ?? null;
            const epoch = session.fields?.callEpoch?.value;
            if (Number.isSafeInteger(epoch) && epoch > 0 && epoch <= Date.now() + 86400000) {
                this.epochs.observe(epoch);
                // An epoch whose answer is already in the zone was finished by an earlier page: not ours to join.
                const answer = await this.names.envelope(epoch, "answer");
                const offer = await this.names.envelope(epoch, "offer");
                const both = await this.lookup([offer, answer]);
                const answered = both.some((r) => r.recordName === answer);
                this.inbox.raiseFloor(answered ? epoch + 1 : epoch);
                if (answered) this.finishedEpoch = epoch;
                else await this.received(both, "lookup");
            }
        }
        if (this.firstOffer) await this.offer("first offer");
    }

    /** Offers in a new epoch; the first offer of the call adds the video transceiver. */
    async offer(why) {
        if (this.ending) return;
        if (this.pc.getTransceivers().length === 0) {
            const stream = this.localStream;
            this.pc.addTransceiver(stream?.getVideoTracks()[0] ?? "video",
                { direction: stream ? "sendrecv" : "recvonly", streams: stream ? [stream] : [] });
        }
        await this.startEpoch(why);
    }

    async lookup(recordNames) {
        const result = await this.store.post(this.scope, "records/lookup",
            { zoneID: this.zoneID, records: recordNames.map((recordName) => ({ recordName })) });
        return (result.records ?? []).filter((r) => !r.serverErrorCode && this.acceptLookup(r));
    }

    /** Renegotiation (W3C example): only after the first exchange, the first offer is the creator's. */
    negotiationNeeded() {
        if (this.epoch === null || this.pc.signalingState !== "stable" || this.makingOffer || this.ending) return;
        this.startEpoch("negotiation needed");
    }

    /** A new epoch with our offer: the session record and the offer in one atomic request. */
    async startEpoch(why) {
        const epoch = this.epochs.next();
        this.enterEpoch(epoch);
        this.log("epoch", `${epoch} (${why})`);
        try {
            this.makingOffer = true;
            if (this.appliedOffers.size > 0 || why === "restart") this.pc.restartIce();
            await this.pc.setLocalDescription();
            if (this.epoch !== epoch) return;
            await this.saveOffer(epoch, this.pc.localDescription.sdp);
        } catch (error) {
            this.fail(`offer of epoch ${epoch}`, error);
        } finally {
            this.makingOffer = false;
        }
    }

    enterEpoch(epoch) {
        this.epoch = epoch;
        this.remoteEnvelope = null;
        this.inbox.raiseFloor(epoch);
        clearTimeout(this.local.timer);
        this.local = { epoch, saved: false, seq: 0, pending: [], eoc: false, timer: null };
    }

    async saveOffer(epoch, sdp) {
        const now = Date.now();
        const session = { recordName: await this.names.session(), recordType: "SignalSession", fields: {
            sessionKey: STRING(this.key), roomID: STRING(this.room), userId: STRING(this.me),
            otherUserId: STRING(this.remote), callEpoch: INT64(epoch), updatedAt: TIMESTAMP(now) } };
        const offer = await this.envelope(epoch, "offer", this.describe(sdp));
        for (let attempt = 0; attempt < SESSION_RETRIES; attempt++) {
            if (this.sessionTag) session.recordChangeTag = this.sessionTag;
            // Every field of the session is ours each time: with the server's tag it is replaced (the
            // record becomes exactly ours), without one it is created; the offer's name is new.
            const result = await this.store.post(this.scope, "records/modify", { zoneID: this.zoneID, atomic: true,
                operations: [{ operationType: this.sessionTag ? "replace" : "create", record: session },
                    { operationType: "create", record: offer }] });
            const failed = result.records?.find((r) => r.serverErrorCode && r.serverErrorCode !== "ATOMIC_ERROR");
            if (!failed) {
                const saved = result.records?.find((r) => r.recordName === session.recordName);
                this.sessionTag = saved?.recordChangeTag ?? this.sessionTag;
                this.wrote(offer.recordName, epoch, "offer");
                this.counters.offersSaved += 1;
                this.descriptionSaved(epoch);
                return;
            }
            if (failed.serverErrorCode !== "CONFLICT" || failed.recordName !== session.recordName) {
                throw new StoreError(failed.serverErrorCode, failed.reason ?? "", 200);
            }
            // Someone saved the session meanwhile: merge by the maximum epoch (spec §3).
            this.counters.sessionConflicts += 1;
            const server = failed.serverRecord;
            this.sessionTag = server?.recordChangeTag ?? null;
            const theirs = server?.fields?.callEpoch?.value;
            if (Number.isSafeInteger(theirs) && theirs > epoch) {
                this.epochs.observe(theirs);
                this.log("epoch", `${epoch} given up: the session is at ${theirs}`);
                return;
            }
        }
        throw new Error(`the session record kept changing (${SESSION_RETRIES} conflicts)`);
    }

    async envelope(epoch, type, sdp) {
        return { recordName: await this.names.envelope(epoch, type), recordType: "SignalEnvelope", fields: {
            sessionKey: STRING(this.key), roomID: STRING(this.room), callEpoch: INT64(epoch),
            ownerUserId: STRING(this.me), envelopeType: STRING(type), payload: STRING(sdp),
            updatedAt: TIMESTAMP(Date.now()) } };
    }

    wrote(name, epoch, kind) {
        this.catalogue.set(name, { epoch, at: Date.now(), own: true });
        this.log("out", `${kind} epoch ${epoch}`, { name, kind, epoch });
    }

    /** Records from the store, whatever fetched them: through the inbox, then applied in order. */
    async received(records, via) {
        for (const record of records) {
            if (this.ending) return;
            this.catalogued(record);
            if (record.deleted) {
                this.deleted(record.recordName);
                continue;
            }
            const signals = this.inbox.take(record, Date.now());
            for (const signal of signals) await this.apply(signal, via);
        }
    }

    /** GC's catalogue: every envelope and chunk of the zone, its epoch, when it last changed, whose it is. */
    catalogued(record) {
        if (record.deleted) {
            this.catalogue.delete(record.recordName);
            return;
        }
        if (record.recordType !== "SignalEnvelope" && record.recordType !== "SignalIceChunk") return;
        const epoch = record.fields?.callEpoch?.value, at = record.modified?.timestamp;
        if (!Number.isSafeInteger(epoch)) return;
        this.catalogue.set(record.recordName, { epoch, at: Number.isSafeInteger(at) ? at : Date.now(),
            own: record.fields?.ownerUserId?.value === this.me });
    }

    /** A record left the zone. The remote's description of the active epoch leaves only with its goodbye: GC
     * never deletes the active epoch's records (docs/PROTOCOL.md §7). */
    deleted(recordName) {
        const envelope = this.remoteEnvelope;
        if (!envelope || envelope.name !== recordName || envelope.epoch !== this.epoch) return;
        this.end({ by: this.remote, reason: `${this.remote} hung up (its ${envelope.kind} of epoch ${envelope.epoch} `
            + `was deleted from the zone)` });
        Promise.resolve(this.onRemoteHangUp(this.ending)).catch((error) => this.fail("ending the call", error));
    }

    /** The call is over: nothing more is applied or saved; the connection and the local media stay up until
     * `close` (the page lets frames already received decode first). */
    end(ending) {
        if (this.ending) return;
        this.ending = ending;
        clearTimeout(this.local.timer);
        clearInterval(this.gcTimer);
        this.log("end", ending.reason, { kind: "end", by: ending.by, epoch: this.epoch });
    }

    async apply(signal, via) {
        if (this.ending) return;
        if (signal.own || (signal.kind === "session" && signal.owner === this.me)) return;
        this.counters.appliedVia[via] = (this.counters.appliedVia[via] ?? 0) + 1;
        this.log("in", `${signal.kind} epoch ${signal.epoch}${signal.kind === "chunk" ? ` seq ${signal.seq}` : ""}`
            + ` via ${via}`, { name: signal.name, kind: signal.kind, epoch: signal.epoch, seq: signal.seq });
        try {
            switch (signal.kind) {
            case "session":
                if (signal.owner === this.me || signal.name !== await this.names.session()) return;
                this.sessionTag = signal.tag || this.sessionTag;
                this.epochs.observe(signal.epoch);
                return;
            case "offer": return await this.remoteOffer(signal);
            case "answer": return await this.remoteAnswer(signal);
            case "chunk": return await this.addCandidates(signal);
            }
        } catch (error) {
            this.fail(`${signal.kind} of epoch ${signal.epoch}`, error);
        }
    }

    async remoteOffer(offer) {
        if (this.appliedOffers.has(offer.epoch) || offer.epoch === this.finishedEpoch) {
            this.counters.duplicateDescriptions += 1;
            return;
        }
        const readyForOffer = !this.makingOffer
            && (this.pc.signalingState === "stable" || this.isSettingRemoteAnswerPending);
        const offerCollision = !readyForOffer;
        // Glare: the higher epoch wins; on equal epochs the offer creator's (spec §3).
        const remoteWins = this.epoch === null || offer.epoch > this.epoch
            || (offer.epoch === this.epoch && !this.roles.isOfferCreator);
        this.ignoreOffer = offerCollision && !remoteWins;
        if (this.ignoreOffer || (this.epoch !== null && offer.epoch < this.epoch)) {
            this.counters.ignoredOffers += 1;
            this.inbox.ignoreEpoch(offer.epoch);
            this.log("drop", `offer of epoch ${offer.epoch} ignored (ours ${this.epoch} wins)`);
            return;
        }
        if (this.pc.remoteDescription) this.counters.resets += 1;
        this.enterEpoch(offer.epoch);
        this.epochs.observe(offer.epoch);
        this.appliedOffers.add(offer.epoch);
        await this.pc.setRemoteDescription({ type: "offer", sdp: offer.sdp });
        if (this.epoch === offer.epoch) this.remoteEnvelope = { epoch: offer.epoch, name: offer.name, kind: "offer" };
        this.attachCamera();
        await this.pc.setLocalDescription();
        if (this.epoch !== offer.epoch) return;
        const answer = await this.envelope(offer.epoch, "answer", this.describe(this.pc.localDescription.sdp));
        await this.save([{ operationType: "create", record: answer }]);
        this.wrote(answer.recordName, offer.epoch, "answer");
        this.counters.answersSaved += 1;
        this.descriptionSaved(offer.epoch);
        await this.released(offer.epoch, offer.sdp);
    }

    /** The answerer sends its camera on the transceiver the offer's section is on (receive-only without one). */
    attachCamera() {
        const all = this.pc.getTransceivers();
        const transceiver = all.find((t) => t.mid !== null) ?? all[0];
        if (!transceiver) return;
        const track = this.localStream?.getVideoTracks()[0];
        if (track && !transceiver.sender.track) {
            transceiver.sender.replaceTrack(track);
            transceiver.sender.setStreams?.(this.localStream);
        }
        transceiver.direction = track ? "sendrecv" : "recvonly";
    }

    async remoteAnswer(answer) {
        if (answer.epoch !== this.epoch || this.pc.signalingState !== "have-local-offer") {
            this.counters.duplicateDescriptions += 1;
            return;
        }
        this.isSettingRemoteAnswerPending = true;
        try {
            await this.pc.setRemoteDescription({ type: "answer", sdp: answer.sdp });
        } finally {
            this.isSettingRemoteAnswerPending = false;
        }
        if (this.epoch === answer.epoch) {
            this.remoteEnvelope = { epoch: answer.epoch, name: answer.name, kind: "answer" };
        }
        await this.released(answer.epoch, answer.sdp);
    }

    /** The epoch's remote description is set: candidates held for it go in now. */
    async released(epoch, sdp) {
        for (const chunk of this.inbox.descriptionSet(epoch, ufragOf(sdp))) await this.addCandidates(chunk);
    }

    async addCandidates(chunk) {
        if (chunk.epoch !== this.epoch) return;
        const mid = midOf(this.pc.remoteDescription?.sdp ?? "");
        for (const candidate of chunk.candidates) {
            try {
                await this.pc.addIceCandidate({ candidate, sdpMid: mid, sdpMLineIndex: 0 });
                this.counters.candidatesAdded += 1;
            } catch (error) {
                if (!this.ignoreOffer) this.log("drop", `candidate refused: ${error.message}`);
            }
        }
    }

    /** Our candidates (RFC 8838 trickle): batched, numbered by seq, after our description of the epoch. */
    gathered(candidate) {
        const local = this.local;
        if (candidate && candidate.candidate) local.pending.push(candidate.candidate);
        else if (!candidate) local.eoc = true;
        else return;
        clearTimeout(local.timer);
        local.timer = setTimeout(() => this.flush(local), local.eoc ? 0 : CHUNK_BATCH_MS);
    }

    descriptionSaved(epoch) {
        if (this.local.epoch !== epoch) return;
        this.local.saved = true;
        this.flush(this.local);
    }

    flush(local) {
        if (!local.saved || local !== this.local || this.ending) return;
        if (local.pending.length === 0 && !local.eoc) return;
        if (local.sentEoc) return;
        const candidates = local.pending;
        local.pending = [];
        const eoc = local.eoc;
        if (eoc) local.sentEoc = true;
        const seq = local.seq++;
        const ufrag = ufragOf(this.pc.localDescription?.sdp ?? "");
        this.writes = this.writes.then(async () => {
            const uuid = chunkUUID();
            const record = { recordName: await this.names.chunk(local.epoch, this.me, uuid),
                recordType: "SignalIceChunk", fields: {
                    sessionKey: STRING(this.key), roomID: STRING(this.room), callEpoch: INT64(local.epoch),
                    ownerUserId: STRING(this.me), candidateType: STRING("batch-v1"),
                    candidate: STRING(encodeCandidates(candidates, eoc)), chunkCreatedAt: TIMESTAMP(Date.now()),
                    seq: INT64(seq), ufrag: STRING(ufrag) } };
            await this.save([{ operationType: "create", record }]);
            this.counters.chunksSaved += 1;
            this.counters.candidatesSent += candidates.length;
            this.catalogue.set(record.recordName, { epoch: local.epoch, at: Date.now(), own: true });
            this.log("out", `chunk epoch ${local.epoch} seq ${seq} (${candidates.length}${eoc ? ", eoc" : ""})`,
                { name: record.recordName, kind: "chunk", epoch: local.epoch, seq });
        }).catch((error) => this.fail("saving a chunk", error));
    }

    async save(operations) {
        const result = await this.store.post(this.scope, "records/modify", { zoneID: this.zoneID, operations });
        const failed = result.records?.find((r) => r.serverErrorCode);
        if (failed) throw new StoreError(failed.serverErrorCode, `${failed.recordName}: ${failed.reason ?? ""}`, 200);
        return result;
    }

    connectionChanged() {
        const state = this.pc.connectionState;
        this.log("ice", `connection ${state}`);
        if (state === "connected" && this.connectedAt === null) this.connectedAt = performance.now();
        if (state === "connected") {
            this.collectGarbage();
            clearInterval(this.gcTimer);
            this.gcTimer = setInterval(() => this.collectGarbage(), GC_INTERVAL_MS);
        }
    }

    /** GC (spec §3): our records of epochs older than the connected one, and anyone's past the TTL; never
     * the active epoch's (or a newer one's), never the session record, never blocking the call. */
    async collectGarbage() {
        const now = Date.now();
        const doomed = [...this.catalogue].filter(([, r]) => r.epoch < this.epoch
            && (r.own || now - r.at > GC_TTL_MS)).map(([name]) => name);
        if (doomed.length === 0) return;
        try {
            // Not atomic: a record someone else deleted first (NOT_FOUND) must not keep the others.
            const result = await this.store.post(this.scope, "records/modify", { zoneID: this.zoneID, atomic: false,
                operations: doomed.slice(0, MAX_OPERATIONS).map((recordName) => ({ operationType: "forceDelete",
                    record: { recordName } })) });
            for (const r of result.records ?? []) {
                if (r.deleted || r.serverErrorCode === "NOT_FOUND") this.catalogue.delete(r.recordName);
                if (r.deleted) this.counters.gcDeleted += 1;
            }
            this.log("gc", `${doomed.length} own record(s) of older epochs deleted`);
        } catch (error) {
            this.log("gc", `failed (the call goes on): ${error.message}`);
        }
    }

    fail(what, error) {
        this.counters.errors += 1;
        this.log("error", `${what}: ${error.message}`);
        this.onError(what, error);
    }

    /** Names of the envelopes and chunks of this pair seen or written, ours only with `own`. */
    recordNames({ own }) {
        return [...this.catalogue].filter(([, r]) => !own || r.own).map(([name]) => name);
    }

    /**
     * Closes the connection and stops the local media (camera or file): the tracks end, the device is free —
     * unless `keepLocalMedia` (a group call's other legs still send it).
     */
    close({ keepLocalMedia = false } = {}) {
        clearInterval(this.gcTimer);
        clearTimeout(this.local.timer);
        this.pc.close();
        if (keepLocalMedia) return;
        for (const track of this.localStream?.getTracks() ?? []) track.stop();
    }
}
