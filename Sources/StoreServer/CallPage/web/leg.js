// One leg of a group call: our side of one pair (docs/PROTOCOL.md §11) — a ZoneCall of its own (its own
// RTCPeerConnection, inbox, epochs, ICE and media) plus what the room keeps about it: the remote's member
// session, since when it has waited for an offer or an answer, whether it fell back to offering, whether ICE
// failed, and how it ended. Records come in already routed to it by session key (routing.js).
import { RecordNames, roles } from "./names.js";
import { SignalInbox } from "./inbox.js";
import { ZoneCall } from "./call.js";
import { MediaFigures } from "./stats.js";
import { withBandwidth } from "./bandwidth.js";
import { writtenByOwner } from "./routing.js";
import { settle } from "./settle.js";

export class MeshLeg {
    /**
     * `context`: {store, scope, zoneID, room, me, epochs, localStream, log(what, text, record), elapsedMs() (the
     * page's clock, for the figures)}; `firstOffer`: whether we offer first; `bandwidthKbps`: the b=AS of our
     * descriptions (null: none).
     */
    constructor({ context, remote, key, memberSession, firstOffer, bandwidthKbps }) {
        const { store, scope, zoneID, room, me, epochs, localStream } = context;
        this.elapsedMs = context.elapsedMs ?? (() => performance.now());
        this.remote = remote;
        this.key = key;
        this.memberSession = memberSession;
        this.bandwidthKbps = bandwidthKbps;
        this.log = (what, text, record) => context.log(what, `[${remote}] ${text}`,
            record ? { pair: remote, ...record } : undefined);
        this.inbox = new SignalInbox({ sessionKey: key, me });
        this.inbox.onDrop = (what, detail) => this.log("drop", `${what}: ${detail}`);
        this.names = new RecordNames(key);
        this.call = new ZoneCall({ store, scope, zoneID, room, me, remote, key, names: this.names,
            roles: roles(me, remote), inbox: this.inbox, epochs, localStream, log: this.log, firstOffer,
            describe: bandwidthKbps === null ? undefined : (sdp) => withBandwidth(sdp, bandwidthKbps),
            acceptLookup: writtenByOwner });
        // A track added before any description can be taken up by the remote's offer (JSEP §5.10), so the
        // same transceiver serves whichever side's offer wins.
        for (const track of localStream?.getVideoTracks() ?? []) this.call.pc.addTrack(track, localStream);
        this.figures = new MediaFigures(this.call.pc);
        this.startedAt = Date.now();
        /** When the leg began waiting for an offer, a lookup or an answer (null: not waiting). */
        this.waitingSince = this.startedAt;
        this.fellBack = false;
        /** The epoch ICE last failed on, until a later one connects. */
        this.iceFailed = null;
        this.restarts = 0;
        this.connectedAt = null;
        /** {reason, atMs} once ended. */
        this.ended = null;
        this.queue = Promise.resolve();
        this.sessionName = null;
    }

    /** Reads the pair's session record (the floor) and offers if it is ours to; records wait for it. */
    start() {
        const started = (async () => {
            this.sessionName = await this.names.session();
            await this.call.start();
        })();
        this.queue = started.catch((error) => this.log("error", `starting: ${error.message}`));
        return this.queue;
    }

    /** Records of this pair (and deletions, which the call matches by name), applied in order. */
    deliver(records, via) {
        this.queue = this.queue.then(() => this.call.received(records, via))
            .catch((error) => this.log("error", `records: ${error.message}`));
    }

    get connected() {
        return this.call.pc.connectionState === "connected";
    }

    /** Neither offered nor offered to yet. */
    get waitingForOffer() {
        return this.call.epoch === null;
    }

    /** Waiting starts while the active epoch's descriptions are not both set, and stops once they are. */
    noteState(nowMs) {
        const pc = this.call.pc;
        const negotiated = this.call.epoch !== null && pc.signalingState === "stable" && pc.currentRemoteDescription
            && pc.currentLocalDescription;
        if (negotiated) this.waitingSince = null;
        else this.waitingSince ??= nowMs;
        if (this.connected) this.connectedAt ??= nowMs;
    }

    /** The remote hung up: frames that arrived get to be decoded before the leg ends (settle.js), the figures read
     * afresh, `sampled()` awaited after each reading (the page judges by them). Resolves to the milliseconds it
     * took. */
    settle(sampled = async () => {}) {
        return settle(async () => {
            const figures = await this.figures.sample(this.elapsedMs());
            await sampled();
            return figures;
        }, { done: () => this.ended !== null });
    }

    /** Ends the leg: nothing more is applied or saved, the connection closes (our camera goes on for the other
     * legs). The names of our records of the pair, for the goodbye (§7). */
    end(reason, by) {
        if (!this.ended) this.ended = { reason, by, atMs: Date.now() };
        this.call.end({ by, reason });
        this.call.close({ keepLocalMedia: true });
        return this.call.recordNames({ own: true });
    }
}
