// Call epochs, docs/SIGNALING.md §3: milliseconds since 1970 made strictly increasing on this device,
// max(now, last + 1), surviving clock steps backwards and page reloads (the last one is in localStorage).

export class EpochClock {
    constructor(storageKey, storage = globalThis.localStorage) {
        this.storageKey = storageKey;
        this.storage = storage;
        const stored = Number(storage?.getItem(storageKey) ?? 0);
        this.last = Number.isSafeInteger(stored) && stored > 0 ? stored : 0;
    }

    /** A new epoch: max(now, last + 1). */
    next(nowMs = Date.now()) {
        this.last = Math.max(nowMs, this.last + 1);
        this.storage?.setItem(this.storageKey, String(this.last));
        return this.last;
    }

    /** An epoch known to exist (the session record's, a remote offer's): ours must be higher. */
    observe(epoch) {
        if (epoch <= this.last) return;
        this.last = epoch;
        this.storage?.setItem(this.storageKey, String(this.last));
    }
}
