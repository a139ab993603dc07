// The one inbox, docs/SIGNALING.md §4–5: every record the page learns — by push-triggered fetch, token poll
// or lookup by name — enters here. It removes duplicates (record name, change tag), drops records of other
// sessions and of epochs below the floor (the active epoch), holds candidates that arrive before their
// epoch's description, and hands over each chunk once, in seq order, with the description's ufrag, nothing
// after end-of-candidates. No I/O: records in, signals out — unit-tested with node (Tests/CallPageJS).
import { MalformedRecord, decodeSignal } from "./records.js";

/** At most this many chunks wait per epoch (a hostile writer cannot grow the page without bound). */
export const MAX_HELD_PER_EPOCH = 256;

export class SignalInbox {
    constructor({ sessionKey, me }) {
        this.sessionKey = sessionKey;
        this.me = me;
        /** The active epoch: records below it are stale. */
        this.floor = null;
        this.seen = new Map();
        this.ignored = new Set();
        /** epoch → chunks waiting for that epoch's remote description. */
        this.held = new Map();
        /** epoch → {ufrag, next, pending: Map(seq → chunk), ended}. */
        this.order = new Map();
        this.counters = { received: 0, duplicates: 0, staleDrops: 0, malformed: 0, ownRecords: 0,
            otherSessions: 0, held: 0, afterEndOfCandidates: 0, ufragMismatches: 0, ignoredOfferChunks: 0 };
        /** Called with (what, detail) for every record dropped, so the panel can show it. */
        this.onDrop = () => {};
    }

    isStale(epoch) {
        return this.floor !== null && epoch < this.floor;
    }

    /** The active epoch rose: held chunks below it are stale now. */
    raiseFloor(epoch) {
        if (this.floor !== null && epoch <= this.floor) return;
        this.floor = epoch;
        for (const [held, chunks] of this.held) {
            if (held >= epoch) continue;
            this.counters.staleDrops += chunks.length;
            this.held.delete(held);
            this.onDrop("stale", `${chunks.length} held chunk(s) of epoch ${held}`);
        }
    }

    /** The offer of `epoch` was ignored (perfect negotiation): its candidates are dropped silently. */
    ignoreEpoch(epoch) {
        this.ignored.add(epoch);
        const held = this.held.get(epoch) ?? [];
        this.counters.ignoredOfferChunks += held.length;
        this.held.delete(epoch);
    }

    /** The remote description of `epoch` is set: its held chunks are released, in seq order. */
    descriptionSet(epoch, ufrag) {
        if (!this.order.has(epoch)) this.order.set(epoch, { ufrag, next: 0, pending: new Map(), ended: false });
        const held = this.held.get(epoch) ?? [];
        this.held.delete(epoch);
        const out = [];
        for (const chunk of held) out.push(...this.ordered(chunk));
        return out;
    }

    /** One fetched record (a wire object) in; the signals it yields out, in order. */
    take(record, nowMs) {
        if (record.deleted) return [];
        const tag = record.recordChangeTag ?? "";
        if (this.seen.get(record.recordName) === tag) {
            this.counters.duplicates += 1;
            this.onDrop("duplicate", record.recordName);
            return [];
        }
        this.seen.set(record.recordName, tag);
        let signal;
        try {
            signal = decodeSignal(record, nowMs);
        } catch (error) {
            if (!(error instanceof MalformedRecord)) throw error;
            this.counters.malformed += 1;
            this.onDrop("malformed", error.message);
            return [];
        }
        if (signal === null) return [];
        this.counters.received += 1;
        if (signal.sessionKey !== this.sessionKey) {
            this.counters.otherSessions += 1;
            return [];
        }
        if (signal.kind !== "session" && signal.owner === this.me) {
            this.counters.ownRecords += 1;
            return [{ ...signal, own: true }];
        }
        if (this.isStale(signal.epoch)) {
            this.counters.staleDrops += 1;
            this.onDrop("stale", `${signal.kind} of epoch ${signal.epoch} (active ${this.floor})`);
            return [];
        }
        if (signal.kind !== "chunk") return [signal];
        if (this.ignored.has(signal.epoch)) {
            this.counters.ignoredOfferChunks += 1;
            return [];
        }
        if (!this.order.has(signal.epoch)) return this.hold(signal);
        return this.ordered(signal);
    }

    hold(chunk) {
        const held = this.held.get(chunk.epoch) ?? [];
        if (held.length >= MAX_HELD_PER_EPOCH) {
            this.counters.malformed += 1;
            this.onDrop("malformed", `more than ${MAX_HELD_PER_EPOCH} chunks held for epoch ${chunk.epoch}`);
            return [];
        }
        held.push(chunk);
        this.held.set(chunk.epoch, held);
        this.counters.held += 1;
        return [];
    }

    /** Chunks of one epoch, applied exactly once and in seq order; nothing after end-of-candidates. */
    ordered(chunk) {
        const state = this.order.get(chunk.epoch);
        if (chunk.ufrag !== state.ufrag) {
            this.counters.ufragMismatches += 1;
            this.onDrop("ufrag", `${chunk.name}: ${chunk.ufrag} is not ${state.ufrag}`);
            return [];
        }
        if (state.ended) {
            this.counters.afterEndOfCandidates += 1;
            this.onDrop("after-eoc", chunk.name);
            return [];
        }
        if (chunk.seq < state.next || state.pending.has(chunk.seq)) {
            this.counters.duplicates += 1;
            this.onDrop("duplicate", `seq ${chunk.seq} of epoch ${chunk.epoch}`);
            return [];
        }
        if (state.pending.size >= MAX_HELD_PER_EPOCH) {
            this.counters.malformed += 1;
            this.onDrop("malformed", `more than ${MAX_HELD_PER_EPOCH} chunks out of order in epoch ${chunk.epoch}`);
            return [];
        }
        state.pending.set(chunk.seq, chunk);
        const out = [];
        while (state.pending.has(state.next) && !state.ended) {
            const next = state.pending.get(state.next);
            state.pending.delete(state.next);
            state.next += 1;
            out.push(next);
            if (next.eoc) {
                state.ended = true;
                this.counters.afterEndOfCandidates += state.pending.size;
                state.pending.clear();
            }
        }
        return out;
    }
}
