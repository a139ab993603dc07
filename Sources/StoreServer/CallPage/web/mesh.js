// A room's group call from the page (docs/PROTOCOL.md §11): a mesh of pairs, one leg per remote member.
// Joining saves our presence and reads the room's records together; the presence records then decide the
// legs (the later joiner of each pair offers first, §11.2), the room's limit and who left or crashed
// (§11.4); one change sync serves every leg, its records routed by session key (§11.3). Leaving deletes
// what we know of our pairs and our presence last; every minute records of dead pairs are collected (§11.5).
import { RecordNames, sessionKey } from "./names.js";
import { MalformedRecord } from "./records.js";
import { MAX_OPERATIONS } from "./store.js";
import { PRESENCE_TTL_MS, REFRESH_MS, checkedMember, memberRecord, newMemberSession } from "./presence.js";
import { Roster } from "./roster.js";
import { MAX_MEMBERS, offersFirst, ordinal, rankBeyondLimit, rankOf, ranked } from "./ranking.js";
import { CALL_OF_TWO_GRACE_MS, OFFER_FALLBACK_MS, UNANSWERED_MS, callOfTwoPeer, callerOffer }
    from "./offerrule.js";
import { sortBatch, writtenByOwner } from "./routing.js";
import { PairCollector } from "./collector.js";
import { legShareKbps } from "./bandwidth.js";
import { MeshLeg } from "./leg.js";

/** How often dead pairs and long-expired members are collected. */
export const SWEEP_MS = 60000;
/** Keepalive requests (sent while the page goes away) carry at most 64 KB, all of them together. */
const KEEPALIVE_BYTES = 60000;
/** Conflicts on our presence record saved over at once before waiting. */
const PRESENCE_CONFLICTS = 3;
/** Ended legs whose figures stay in the report. */
const MAX_ENDED_LEGS = 32;
/** Restarts of one leg after its ICE failed (the lower user ID restarts, §11.2). */
const ICE_RESTARTS = 3;

export class MeshRoom {
    /**
     * `context`: {store, scope, zoneID, room, me, epochs, localStream, log, elapsedMs}; `uplinkKbps`: each leg's
     * b=AS is its share (null: none); `hooks`: {legStarted(leg), legEnded(leg), roster(ranked), left(reason),
     * sampled(leg) (a leg's figures were read while it lets the last frames decode)}.
     */
    constructor({ context, uplinkKbps = null, limit = MAX_MEMBERS, answerMs = UNANSWERED_MS, hooks = {} }) {
        this.context = context;
        Object.assign(this, { room: context.room, me: context.me, store: context.store, scope: context.scope,
            zoneID: context.zoneID, log: context.log, uplinkKbps, limit });
        /** How long a leg waits for what its partner owes, and for the offer it is owed: a fifth of that, as
         * `zonertc peer --answer-timeout` (40 s and OFFER_FALLBACK_MS's 8 s unless the page has `answerTimeout`). */
        this.answerMs = answerMs;
        this.fallbackMs = Math.round(answerMs * OFFER_FALLBACK_MS / UNANSWERED_MS);
        this.hooks = { legStarted() {}, legEnded() {}, roster() {}, left() {}, ...hooks };
        /** idle, joining, joined, leaving, left. */
        this.state = "idle";
        this.roster = new Roster();
        /** remote → MeshLeg. */
        this.legs = new Map();
        /** sessionKey → remote. */
        this.legByKey = new Map();
        /** Legs that ended, in order: their figures stay in the report. */
        this.endedLegs = [];
        this.collector = new PairCollector(this.room);
        /** "user session" of member sessions a leg with ended unanswered or failed: none again unless it offers. */
        this.refusedSessions = new Set();
        /** remote → when our last leg with it ended (ms): older offers belong to that leg. */
        this.legEndedAt = new Map();
        this.reportedBeyondLimit = new Set();
        /** user → {due, checking}: call-of-two peers seen by their RoomMember record (§11.6). */
        this.callOfTwo = new Map();
        this.held = [];
        this.routing = Promise.resolve();
        this.lastRoster = "";
        this.presence = null;
        this.nextSweep = null;
        this.leaveReason = null;
        this.counters = { membersJoined: 0, membersLeft: 0, membersExpired: 0, rejoins: 0, memberRecordsRefused: 0,
            beyondLimit: 0, legsStarted: 0, legsEnded: 0, fallbackOffers: 0, unanswered: 0, failedLegs: 0,
            callersAnswered: 0, callOfTwoCalled: 0, forgedRecords: 0, unkeyedRecords: 0, routedRecords: 0,
            otherPairRecords: 0, iceRestarts: 0, cleanupDeletions: 0, presenceSaves: 0, presenceFailures: 0 };
    }

    /** Our presence as a member: {userId, memberSession, joinedAt, expiresAt}. */
    get self() {
        const p = this.presence;
        return { userId: this.me, memberSession: p.memberSession, joinedAt: p.joinedAt, expiresAt: p.expiresAt };
    }

    /** The members present, this page included once joined, in join order. */
    members(nowMs) {
        const all = this.roster.present(nowMs);
        if (this.state === "joined") all.push(this.self);
        return ranked(all);
    }

    /** Saves our presence and reads the room through `sync` together; legs start once both are done. */
    async join(sync) {
        if (this.state !== "idle") return;
        this.state = "joining";
        this.sync = sync;
        const now = Date.now();
        this.presence = { memberSession: newMemberSession(), joinedAt: now, expiresAt: now + PRESENCE_TTL_MS,
            recordName: await RecordNames.callMember(this.me), tag: null, saving: false, present: false,
            nextSaveAt: null, failures: 0, lastError: null };
        this.log("room", `joining as member session ${this.presence.memberSession}`);
        await Promise.all([this.savePresence(), sync.start()]);
        if (this.state !== "joining") return;
        if (!this.presence.present) {
            this.leave(`could not save our presence record (${this.presence.lastError ?? "no answer"})`);
            return;
        }
        this.state = "joined";
        this.nextSweep = Date.now() + SWEEP_MS;
        const early = this.held.flat();
        this.held = [];
        this.routing = this.routing.then(() => this.route(early, "start"))
            .catch((error) => this.log("error", `routing: ${error.message}`));
        await this.routing;
        const members = this.members(Date.now());
        if (this.state === "joined") this.log("room", `joined: rank ${rankOf(members, this.me)} of ${members.length}`);
    }

    /** Records from the change sync: held while joining, routed in order once joined. */
    received(records, via) {
        if (this.state === "joining") {
            this.held.push(records);
            return undefined;
        }
        if (this.state !== "joined") return undefined;
        this.routing = this.routing.then(() => this.route(records, via))
            .catch((error) => this.log("error", `routing: ${error.message}`));
        return this.routing;
    }

    /** Saves our presence: the join (forceReplace), a refresh (update with our last change tag), or anew. */
    async savePresence() {
        const p = this.presence;
        if (p.saving || this.state === "leaving" || this.state === "left") return;
        p.saving = true;
        try {
            for (let conflicts = 0; ;) {
                const now = Date.now();
                const expiresAt = now + PRESENCE_TTL_MS;
                const record = await memberRecord({ room: this.room, userId: this.me,
                    memberSession: p.memberSession, joinedAt: p.joinedAt, expiresAt });
                if (p.tag) record.recordChangeTag = p.tag;
                this.counters.presenceSaves += 1;
                let item;
                try {
                    const answer = await this.store.post(this.scope, "records/modify", { zoneID: this.zoneID,
                        operations: [{ operationType: p.tag ? "update" : "forceReplace", record }] });
                    item = answer.records?.[0]
                        ?? { serverErrorCode: "BAD_RESPONSE", reason: "no record in the answer" };
                } catch (error) {
                    item = { serverErrorCode: error.code ?? "NETWORK", reason: error.message,
                        retryAfter: error.retryAfter };
                }
                if (this.state === "leaving" || this.state === "left") return;
                if (!item.serverErrorCode) {
                    Object.assign(p, { tag: item.recordChangeTag ?? null, expiresAt, present: true,
                        nextSaveAt: now + REFRESH_MS, failures: 0 });
                    return;
                }
                this.counters.presenceFailures += 1;
                if (item.serverErrorCode === "CONFLICT" && item.serverRecord && conflicts < PRESENCE_CONFLICTS) {
                    // Someone wrote under our name (readers refuse that version), or a save of ours landed
                    // unanswered: ours goes over the server's version.
                    conflicts += 1;
                    p.tag = item.serverRecord.recordChangeTag ?? null;
                    continue;
                }
                if (item.serverErrorCode === "NOT_FOUND" && p.present) {
                    if (p.expiresAt > now) {
                        this.leave("removed from the call (our CallMember record was deleted)");
                        return;
                    }
                    this.collected(now);
                    continue;
                }
                p.failures += 1;
                p.lastError = `${item.serverErrorCode}: ${item.reason ?? ""}`;
                const permanent = ["ACCESS_DENIED", "BAD_REQUEST", "AUTHENTICATION_FAILED", "AUTHENTICATION_REQUIRED",
                    "ZONE_NOT_FOUND"].includes(item.serverErrorCode);
                this.log("error", `presence save failed: ${item.serverErrorCode}: ${item.reason ?? ""}`);
                if (permanent || (!p.present && p.failures > 4)) return;
                const wait = Number.isFinite(item.retryAfter) ? Math.min(item.retryAfter * 1000, 8000)
                    : Math.min(1000 * 2 ** (p.failures - 1), 8000);
                if (p.present) {
                    p.nextSaveAt = now + wait;
                    return;
                }
                await new Promise((resolve) => setTimeout(resolve, wait));
            }
        } finally {
            p.saving = false;
        }
    }

    /** Our record was collected after our presence ran out (§11.5): saved anew, same member session. The
     * record is created again, so `joinedAt` moves to now (readers check it against `created`). */
    collected(nowMs) {
        this.log("room", "our presence record was collected after it expired: saving it anew");
        Object.assign(this.presence, { tag: null, joinedAt: nowMs });
    }

    /** Timers, every few hundred ms: presence refresh, the legs' bounds, expiries, calls of two, collection. */
    tick() {
        if (this.state !== "joined") return;
        const now = Date.now();
        const p = this.presence;
        if (!p.saving && p.nextSaveAt !== null && now >= p.nextSaveAt) this.savePresence();
        for (const leg of [...this.legs.values()]) this.legTimers(leg, now);
        for (const member of this.roster.newlyExpired(now)) {
            this.counters.membersExpired += 1;
            const leg = this.legs.get(member.userId);
            this.log("room", `${member.userId}'s presence expired`);
            if (leg && leg.memberSession === member.memberSession && (!leg.connected || leg.iceFailed !== null)) {
                this.endLeg(member.userId, `${member.userId}'s presence expired`);
            }
        }
        this.applyRoster(now);
        this.callOfTwoTimers(now);
        if (this.nextSweep !== null && now >= this.nextSweep) this.sweep(now);
        this.sync?.setNegotiating([...this.legs.values()].some((leg) => !leg.connected));
    }

    /** §11.2: a member leg waiting for the offer it is owed offers after `fallbackMs`; a leg whose lookup,
     * offer or answer has not come within `answerMs` ends unanswered. */
    legTimers(leg, now) {
        leg.noteState(now);
        const since = leg.waitingSince;
        if (since === null) return;
        if (leg.memberSession !== null && !leg.fellBack && leg.waitingForOffer) {
            if (now < since + this.fallbackMs) return;
            leg.fellBack = true;
            this.counters.fallbackOffers += 1;
            leg.log("epoch", `no offer from ${leg.remote} within ${this.fallbackMs / 1000} s: offering`);
            leg.call.offer("fallback").catch((error) => leg.log("error", `fallback offer: ${error.message}`));
            leg.waitingSince = now;
        } else if (now >= since + this.answerMs) {
            if (leg.memberSession !== null) this.refusedSessions.add(`${leg.remote} ${leg.memberSession}`);
            this.counters.unanswered += 1;
            this.endLeg(leg.remote, `${leg.remote} did not answer within ${this.answerMs / 1000} s`);
        }
    }

    /** The legs in line with the members present: we leave when ranked beyond the limit; a member within it
     * gets a leg (the later joiner of the two offers first), one beyond it none. */
    applyRoster(now) {
        if (this.state !== "joined") return;
        const members = this.members(now);
        const text = members.map((m) => `${m.userId} ${m.memberSession}`).join(",");
        if (text !== this.lastRoster) {
            this.lastRoster = text;
            this.hooks.roster(members);
        }
        const mine = rankOf(members, this.me);
        if (mine > this.limit) {
            this.leave(`the room is full: we are ranked ${ordinal(mine)} of ${members.length} members present `
                + `and a call has at most ${this.limit}`, { full: { rank: mine, members: members.length } });
            return;
        }
        members.forEach((member, index) => {
            const user = member.userId;
            if (user === this.me) return;
            if (index + 1 > this.limit) {
                this.endLeg(user, `${user} is beyond the room's limit`);
                this.beyondLimit(user, member.memberSession, index + 1);
                return;
            }
            const leg = this.legs.get(user);
            if (leg) {
                leg.memberSession ??= member.memberSession;
                return;
            }
            if (this.refusedSessions.has(`${user} ${member.memberSession}`)) return;
            this.startLeg(user, member.memberSession, offersFirst(this.self, member), now);
        });
    }

    beyondLimit(user, session, rank) {
        const key = `${user} ${session}`;
        if (this.reportedBeyondLimit.has(key)) return;
        this.reportedBeyondLimit.add(key);
        this.counters.beyondLimit += 1;
        this.log("room", `${user} is ranked ${ordinal(rank)}, beyond the room's limit of ${this.limit}: no leg`);
    }

    startLeg(remote, memberSession, firstOffer, now) {
        if (this.legs.has(remote) || remote === this.me || this.state !== "joined") return;
        const present = this.roster.present(now).length + 1;
        const members = this.roster.isPresent(remote, now) ? present : present + 1;
        const key = sessionKey(this.room, this.me, remote);
        const leg = new MeshLeg({ context: this.context, remote, key, memberSession, firstOffer,
            bandwidthKbps: this.uplinkKbps === null ? null : legShareKbps(this.uplinkKbps, members) });
        this.legs.set(remote, leg);
        this.legByKey.set(key, remote);
        this.collector.release(key);
        this.counters.legsStarted += 1;
        leg.log("room", `leg starts (${firstOffer ? "we offer first" : "we wait for the offer"}`
            + `${memberSession ? `, member session ${memberSession}` : ", no presence record"})`);
        // What the remote sent before its goodbye is decoded first; a leg ended meanwhile (its member left, say)
        // stays ended as it was.
        leg.call.onRemoteHangUp = async (ending) => {
            await leg.settle(async () => this.hooks.sampled?.(leg));
            this.endLeg(remote, ending.reason, { leg });
        };
        leg.call.onError = (what) => {
            // An offer that cannot be applied (or ours that cannot be saved) before anything was negotiated:
            // the leg is over, and that member session gets no new one unless it offers.
            if (leg.call.pc.currentRemoteDescription || leg.ended) return;
            if (leg.memberSession !== null) this.refusedSessions.add(`${remote} ${leg.memberSession}`);
            this.counters.failedLegs += 1;
            this.endLeg(remote, `failed before connecting (${what})`, { leg });
        };
        leg.call.pc.addEventListener("connectionstatechange", () => this.connectionChanged(leg));
        this.hooks.legStarted(leg);
        leg.start();
    }

    /** ICE failed on a leg: over when its member's presence ran out (it crashed); else the lower user ID
     * restarts (bounded). */
    connectionChanged(leg) {
        const state = leg.call.pc.connectionState;
        if (state === "connected") leg.iceFailed = null;
        if (state !== "failed" || leg.ended || this.legs.get(leg.remote) !== leg) return;
        leg.iceFailed = leg.call.epoch;
        if (leg.memberSession !== null && !this.roster.isPresent(leg.remote, Date.now())) {
            this.endLeg(leg.remote, `ICE failed and ${leg.remote}'s presence has expired`);
            return;
        }
        if (leg.call.roles.isOfferCreator && leg.restarts < ICE_RESTARTS) {
            leg.restarts += 1;
            this.counters.iceRestarts += 1;
            leg.call.startEpoch("restart");
        }
    }

    /** Ends the leg with `remote`: its goodbye (our records of the pair) goes at once unless we are leaving;
     * the pair's other records are kept for collection. */
    endLeg(remote, reason, { leg = this.legs.get(remote), leaving = false } = {}) {
        if (!leg || this.legs.get(remote) !== leg) return [];
        this.legs.delete(remote);
        this.legByKey.delete(leg.key);
        const goodbye = leg.end(reason, leaving ? this.me : remote);
        const others = leg.call.recordNames({ own: false }).filter((name) => !goodbye.includes(name));
        this.collector.note(leg.key, [this.me, remote], [...(leg.sessionName ? [leg.sessionName] : []), ...others]);
        this.counters.legsEnded += 1;
        this.legEndedAt.set(remote, Date.now());
        this.endedLegs.push(leg);
        if (this.endedLegs.length > MAX_ENDED_LEGS) this.endedLegs.shift();
        this.hooks.legEnded(leg);
        if (!leaving) this.deleteRecords(goodbye, "goodbye");
        return goodbye;
    }

    /** One fetch's records: presence first (it decides the legs), then calls of two, then signal records by
     * pair; a pair without a leg gets one from a recent offer to us. */
    async route(records, via) {
        const now = Date.now();
        const batch = sortBatch(records);
        for (const record of batch.unkeyed) {
            this.counters.unkeyedRecords += 1;
            this.log("drop", `${record.recordName}: sessionKey missing or not a STRING: the record belongs to no pair`);
        }
        for (const record of batch.members) await this.memberRecord(record, now);
        for (const deletion of batch.memberDeletions) this.memberDeleted(deletion.recordName, now);
        this.applyRoster(now);
        if (this.state !== "joined") return;
        for (const record of batch.roomMembers) {
            const user = await callOfTwoPeer(record, { me: this.me, nowMs: now,
                isMember: (u) => this.roster.isMember(u), hasLeg: (u) => this.legs.has(u) });
            if (user !== null && !this.callOfTwo.has(user)) {
                this.callOfTwo.set(user, { due: now + CALL_OF_TWO_GRACE_MS, checking: false });
                this.log("room", `${user} makes calls of two only (its RoomMember): calling it in `
                    + `${CALL_OF_TWO_GRACE_MS / 1000} s unless it joins the group call`);
            }
        }
        for (const { record, key } of batch.signals) {
            if (!this.legByKey.has(key)) this.callerOffer(record, key, now);
        }
        const perLeg = new Map();
        for (const { record, key } of batch.signals) {
            const remote = this.legByKey.get(key);
            if (remote === undefined) {
                this.counters.otherPairRecords += 1;
                this.collector.observe(record, key);
                continue;
            }
            if (!writtenByOwner(record)) {
                this.forged(record, `${record.recordName}: names ${String(record.fields?.ownerUserId?.value
                    ?? record.fields?.userId?.value).slice(0, 40)} but was written by `
                    + `${String(record.modified?.userRecordName).slice(0, 40)}`);
                continue;
            }
            this.counters.routedRecords += 1;
            perLeg.set(remote, [...(perLeg.get(remote) ?? []), record]);
        }
        this.collector.forget(batch.deletions.map((d) => d.recordName));
        for (const [remote, leg] of this.legs) {
            const mine = [...(perLeg.get(remote) ?? []), ...batch.deletions];
            if (mine.length > 0) leg.deliver(mine, via);
        }
    }

    forged(record, detail) {
        this.counters.forgedRecords += 1;
        this.log("drop", `forged: ${detail}`);
    }

    /** A signal record of a pair without a leg: a recent offer to us, written by its owner, starts one. */
    callerOffer(record, key, now) {
        const verdict = callerOffer(record, key, { room: this.room, me: this.me, nowMs: now,
            legEndedAt: this.legEndedAt });
        if (verdict === null) return;
        if (verdict.forged) {
            this.forged(record, verdict.forged);
            return;
        }
        const caller = verdict.caller;
        const rank = rankBeyondLimit(caller, { present: this.roster.isPresent(caller, now),
            rankedMembers: this.members(now), legCount: this.legs.size, limit: this.limit });
        if (rank !== null) {
            this.beyondLimit(caller, this.roster.members.get(caller)?.memberSession ?? "caller", rank);
            return;
        }
        this.counters.callersAnswered += 1;
        this.log("room", `${caller} offers without a presence record we know: answering (the offer proves presence)`);
        this.startLeg(caller, this.roster.members.get(caller)?.memberSession ?? null, false, now);
    }

    /** A presence record: checked, then taken into the roster (a new member session ends the old leg). */
    async memberRecord(record, now) {
        let member;
        try {
            member = await checkedMember(record, this.room);
        } catch (error) {
            if (!(error instanceof MalformedRecord)) throw error;
            this.counters.memberRecordsRefused += 1;
            this.log("drop", `presence refused: ${error.message}`);
            return;
        }
        if (member.userId === this.me) return;
        const { change, previous } = this.roster.take(member);
        if (change === "joined" || change === "rejoined") {
            this.counters.membersJoined += 1;
            this.log("room", `${member.userId} ${change} (member session ${member.memberSession}, joined `
                + `${new Date(member.joinedAt).toISOString()})`);
        }
        if (change !== "rejoined") return;
        this.counters.rejoins += 1;
        const leg = this.legs.get(member.userId);
        if (leg && (leg.memberSession === null || leg.memberSession === previous.memberSession)) {
            this.endLeg(member.userId, `${member.userId} rejoined with a new member session`);
        }
    }

    /** A presence record was deleted: ours (someone removed us, or collected it after it expired) or a
     * member's (it left). */
    memberDeleted(recordName, now) {
        const p = this.presence;
        if (recordName === p?.recordName) {
            if (this.state !== "joined" || !p.present || p.saving) return;
            if (p.expiresAt > now) {
                this.leave("removed from the call (our CallMember record was deleted)");
            } else {
                this.collected(now);
                this.savePresence();
            }
            return;
        }
        const member = this.roster.remove(recordName);
        if (!member) return;
        this.counters.membersLeft += 1;
        this.endLeg(member.userId, `${member.userId} left (its CallMember record was deleted)`);
    }

    /** §11.6: a call-of-two peer's grace is over: one more fetch, then a call by the roles of two unless its
     * presence record appeared. */
    callOfTwoTimers(now) {
        for (const [user, candidate] of this.callOfTwo) {
            if (this.legs.has(user) || this.roster.isMember(user)) {
                this.callOfTwo.delete(user);
                continue;
            }
            if (candidate.checking || now < candidate.due) continue;
            candidate.checking = true;
            // A fetch begun after this moment has ended (and its records were routed) once this resolves.
            Promise.resolve(this.sync?.fetch("call-of-two")).then(() => {
                this.callOfTwo.delete(user);
                if (this.state !== "joined" || this.legs.has(user) || this.roster.isMember(user)) return;
                const at = Date.now();
                const rank = rankBeyondLimit(user, { present: false, rankedMembers: this.members(at),
                    legCount: this.legs.size, limit: this.limit });
                if (rank !== null) {
                    this.beyondLimit(user, "call-of-two", rank);
                    return;
                }
                this.counters.callOfTwoCalled += 1;
                this.startLeg(user, null, true, at);
            });
        }
    }

    /** Members' users that left (presence deleted or expired) and have no leg here. */
    goneUsers() {
        return new Set([...this.roster.departed].filter((user) => !this.legs.has(user)));
    }

    /** §11.5: records of members expired for longer than a TTL without a leg here, and of pairs whose users are
     * all gone, at most MAX_OPERATIONS a pass. */
    sweep(now) {
        this.nextSweep = now + SWEEP_MS;
        const doomed = [];
        for (const member of this.roster.longExpired(now, PRESENCE_TTL_MS)) {
            if (this.legs.has(member.userId)) continue;
            this.roster.remove(member.recordName);
            doomed.push(member.recordName);
        }
        const gone = this.goneUsers();
        gone.add(this.me);
        doomed.push(...this.collector.take(MAX_OPERATIONS - doomed.length, (users) => [...users].every((u) =>
            gone.has(u))));
        if (doomed.length > 0) this.deleteRecords(doomed, "collection");
    }

    /** The body of a request deleting `names` (forceDelete, not atomic: one already gone keeps no other). */
    deletion(names) {
        return { zoneID: this.zoneID, atomic: false, operations: names.map((recordName) => ({
            operationType: "forceDelete", record: { recordName } })) };
    }

    /** Deletes `names` in requests of at most MAX_OPERATIONS, one after the other (the last name goes last);
     * nothing but leaving waits on them. */
    async deleteRecords(names, why, { keepalive = false } = {}) {
        for (let start = 0; start < names.length; start += MAX_OPERATIONS) {
            try {
                const answer = await this.store.post(this.scope, "records/modify",
                    this.deletion(names.slice(start, start + MAX_OPERATIONS)), { keepalive });
                const part = answer.records ?? [];
                const deleted = part.filter((r) => r.deleted).length;
                this.counters.cleanupDeletions += deleted;
                this.log("gc", `${why}: ${deleted} of ${part.length} record(s) deleted`);
            } catch (error) {
                this.log("gc", `${why} failed: ${error.message}`);
            }
        }
    }

    /**
     * Leaves the call (§11.4): every leg ends; every record we know of our pairs — ours, the other side's,
     * the session records — goes, then our presence record, last. Synchronous up to sending, so that it works
     * while the page goes away (`keepalive`: the request outlives the page, within 64 KB). Resolves when the
     * deletions were answered.
     */
    leave(reason, { keepalive = false, full = null } = {}) {
        if (this.state === "leaving" || this.state === "left") return Promise.resolve();
        const wasJoined = this.state === "joined" || this.state === "joining";
        this.state = "leaving";
        this.leaveReason = { reason, full, atMs: Date.now() };
        this.log("end", `leaving: ${reason}`, { kind: "leave" });
        const ours = [];
        for (const remote of [...this.legs.keys()]) {
            ours.push(...this.endLeg(remote, `we left: ${reason}`, { leaving: true }));
        }
        this.callOfTwo.clear();
        const doomed = this.collector.take(Infinity, (users) => users.has(this.me));
        const gone = this.goneUsers();
        doomed.push(...this.collector.take(Math.max(0, MAX_OPERATIONS - doomed.length - ours.length - 1), (users) =>
            [...users].every((u) => gone.has(u))));
        doomed.push(...ours);
        if (wasJoined && this.presence?.recordName) doomed.push(this.presence.recordName);
        if (keepalive) {
            // One request under the keepalive budget, our presence record last: others' records give way first
            // (the collection of whoever stays deletes them), then ours.
            while (doomed.length > 1 && (doomed.length > MAX_OPERATIONS
                || JSON.stringify(this.deletion(doomed)).length > KEEPALIVE_BYTES)) doomed.shift();
        }
        const done = doomed.length > 0 ? this.deleteRecords(doomed, "leaving", { keepalive }) : Promise.resolve();
        return done.then(() => {
            this.state = "left";
            this.hooks.left(this.leaveReason);
        });
    }
}
