// When the page fetches, docs/SIGNALING.md §5 `hybrid`: the push stream (a hint, never data: late, coalesced
// or lost) triggers fetch-database-changes then fetch-zone-changes; a token poll every 30 s is the safety
// net for lost pushes, every 2 s while a call is negotiating. Change tokens live in localStorage, per user,
// database and zone, so a reload fetches only what changed; CHANGE_TOKEN_EXPIRED resets to a full fetch once.
import { StoreError } from "./store.js";

export const SLOW_POLL_MS = 30000;
export const FAST_POLL_MS = 2000;
/** Pages of one fetch (moreComing) before the rest waits for the next trigger. */
const MAX_PAGES = 50;

export class HybridSync {
    constructor({ store, scope, zoneID, storageKey, onRecords, log }) {
        this.store = store;
        this.scope = scope;
        this.zoneID = zoneID;
        this.zoneKey = `${storageKey}.zone`;
        this.databaseKey = `${storageKey}.database`;
        this.onRecords = onRecords;
        this.log = log;
        this.negotiating = true;
        this.running = null;
        this.again = false;
        this.stopped = false;
        this.counters = { pushes: 0, pushStreams: 0, polls: 0, fetches: 0, records: 0, expiredTokens: 0,
            retries: 0, errors: 0 };
        this.pushUp = false;
    }

    start() {
        this.schedulePoll();
        this.openPush(1000);
        return this.fetch("start");
    }

    stop() {
        this.stopped = true;
        clearTimeout(this.pollTimer);
        this.pushAbort?.abort();
    }

    /** While negotiating the poll is fast; once connected, slow. */
    setNegotiating(negotiating) {
        if (this.negotiating === negotiating) return;
        this.negotiating = negotiating;
        this.schedulePoll();
    }

    schedulePoll() {
        clearTimeout(this.pollTimer);
        if (this.stopped) return;
        this.pollTimer = setTimeout(() => {
            this.counters.polls += 1;
            this.fetch("poll").finally(() => this.schedulePoll());
        }, this.negotiating ? FAST_POLL_MS : SLOW_POLL_MS);
    }

    /** The push stream, reopened after a failure with a doubling delay (at most 30 s). */
    openPush(delayMs) {
        if (this.stopped) return;
        this.pushAbort = new AbortController();
        this.store.readPush((name) => {
            if (name !== "notification") return;
            this.counters.pushes += 1;
            this.fetch("push");
        }, () => {
            this.counters.pushStreams += 1;
            this.pushUp = true;
            delayMs = 1000;
            // Anything written before the stream opened sent no notification to us: fetch once.
            this.fetch("push-open").then(() => this.log("push", "stream open, caught up"));
        }, this.pushAbort.signal).catch((error) => {
            this.log("push", `stream failed: ${error.message}`);
        }).finally(() => {
            this.pushUp = false;
            if (!this.stopped) setTimeout(() => this.openPush(Math.min(delayMs * 2, 30000)), delayMs);
        });
    }

    /** One fetch at a time; a trigger during a fetch runs one more after it. */
    fetch(reason) {
        if (this.running) {
            this.again = true;
            return this.running;
        }
        this.running = (async () => {
            do {
                this.again = false;
                try {
                    await this.fetchOnce(reason);
                } catch (error) {
                    this.counters.errors += 1;
                    this.log("sync", `${reason}: ${error.message}`);
                    if (error instanceof StoreError && error.retryAfter) {
                        this.counters.retries += 1;
                        await new Promise((resolve) => setTimeout(resolve, Math.min(error.retryAfter, 60) * 1000));
                    }
                }
            } while (this.again && !this.stopped);
            this.running = null;
        })();
        return this.running;
    }

    async fetchOnce(reason) {
        this.counters.fetches += 1;
        if (reason === "push") await this.fetchDatabase();
        for (let page = 0; page < MAX_PAGES; page++) {
            const token = localStorage.getItem(this.zoneKey);
            const zone = { zoneID: this.zoneID };
            if (token) zone.syncToken = token;
            let result;
            try {
                result = await this.store.post(this.scope, "changes/zone", { zones: [zone] });
            } catch (error) {
                if (error instanceof StoreError && error.code === "CHANGE_TOKEN_EXPIRED" && token) {
                    this.counters.expiredTokens += 1;
                    localStorage.removeItem(this.zoneKey);
                    continue;
                }
                throw error;
            }
            const answer = result.zones?.[0];
            if (!answer || !Array.isArray(answer.records)) throw new StoreError("BAD_RESPONSE", "changes/zone", 200);
            this.counters.records += answer.records.length;
            await this.onRecords(answer.records, reason);
            if (typeof answer.syncToken === "string") localStorage.setItem(this.zoneKey, answer.syncToken);
            if (answer.moreComing !== true) return;
        }
    }

    /** Database changes: which zones changed (here only ours matters, but the token moves on). */
    async fetchDatabase() {
        const token = localStorage.getItem(this.databaseKey);
        try {
            const result = await this.store.post(this.scope, "changes/database", token ? { syncToken: token } : {});
            if (typeof result.syncToken === "string") localStorage.setItem(this.databaseKey, result.syncToken);
        } catch (error) {
            if (error instanceof StoreError && error.code === "CHANGE_TOKEN_EXPIRED") {
                this.counters.expiredTokens += 1;
                localStorage.removeItem(this.databaseKey);
                return;
            }
            throw error;
        }
    }
}
