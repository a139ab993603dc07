// When the remote hangs up, frames it sent may have arrived but not yet been decoded: the browser decodes each
// at its playout time, which lags arrival more on a loaded machine. A call of two (main.js) and each leg of a
// group call (leg.js) let them decode before closing the connection, so the figures they report count them.

/** Received frames get at most this long to be decoded after the goodbye. */
export const SETTLE_MS = 3000;
/** …and at least this long, so the figures are read afresh after the goodbye (Chromium serves getStats() from
 * a cache for a few tens of ms): a page that only sends otherwise judges by a count from before its last
 * frames. */
export const SETTLE_MIN_MS = 200;
/** How often the figures are read meanwhile. */
const SAMPLE_MS = 100;

/**
 * Reads the figures (`sample()` resolves to {framesDecoded, framesDropped, framesReceived}) until every frame
 * received was decoded or dropped and SETTLE_MIN_MS passed, SETTLE_MS passed, or `done()` holds; resolves to
 * the milliseconds it took.
 */
export async function settle(sample, { done = () => false } = {}) {
    const from = performance.now();
    for (;;) {
        const media = await sample().catch(() => null);
        const elapsed = performance.now() - from;
        const allDecoded = media !== null
            && media.framesDecoded + media.framesDropped >= media.framesReceived;
        if ((allDecoded && elapsed >= SETTLE_MIN_MS) || elapsed >= SETTLE_MS || done()) return Math.round(elapsed);
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
}
