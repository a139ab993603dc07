// The side panel: what an engineer debugging zone signaling wants to see live — every record in and out
// (type, epoch, seq), drops (stale, duplicate, malformed), resets, ICE state and the selected pair, media.

const MAX_ROWS = 400;

/** Fills the definition list `list` with `entries`, [term, value] pairs. */
export function showFigures(list, entries) {
    const document = list.ownerDocument;
    list.replaceChildren(...entries.flatMap(([k, v]) => {
        const dt = document.createElement("dt"), dd = document.createElement("dd");
        dt.textContent = k;
        dd.textContent = String(v);
        return [dt, dd];
    }));
}

export class SidePanel {
    constructor(document) {
        this.document = document;
        this.rows = document.getElementById("records");
        this.figures = document.getElementById("figures");
        this.status = document.getElementById("status");
    }

    /** One line of the record log; `what` is in, out, drop, epoch, ice, gc, push, sync, end, error. */
    line(what, text) {
        if (!this.rows) return;
        const row = this.document.createElement("li");
        row.className = `row-${what}`;
        const time = new Date().toISOString().slice(11, 23);
        row.textContent = `${time} ${what.padEnd(5)} ${text}`;
        this.rows.prepend(row);
        while (this.rows.childElementCount > MAX_ROWS) this.rows.lastElementChild.remove();
    }

    setStatus(text, ok) {
        if (!this.status) return;
        this.status.textContent = text;
        this.status.className = ok === undefined ? "" : (ok ? "ok" : "bad");
    }

    /** The figures, as a definition list (the same ones as window.zonertcResult). */
    show(result) {
        if (!this.figures) return;
        const entries = [
            ["call", result.ended ? `ended: ${result.ended.reason}` : (result.ok === null ? "live" : "live, done")],
            ["role", `${result.me} → ${result.remote} (${result.offerCreator ? "offer creator" : "answerer"}, `
                + `${result.scope})`],
            ["epoch", result.epoch ?? "—"],
            ["signaling", result.signalingState], ["ICE", `${result.iceState} / ${result.connectionState}`],
            ["pair", result.selectedPair ? `${result.selectedPair.local} ⇄ ${result.selectedPair.remote}` : "—"],
            ["records in/out", `${result.inbox.received} / ${result.recordsOut}`],
            ["stale drops", result.inbox.staleDrops], ["duplicates", result.inbox.duplicates],
            ["held early", result.inbox.held], ["malformed", result.inbox.malformed], ["resets", result.call.resets],
            ["push / polls", `${result.sync.pushes} / ${result.sync.polls}`],
            ["frames decoded", result.media.framesDecoded], ["frames sent", result.media.framesSent],
            ["bitrate in/out", `${result.media.bitrateInKbps} / ${result.media.bitrateOutKbps} kbit/s`],
            ["loss", `${result.media.lossPercent} %`],
            ["RTT", result.media.rttMs === null ? "—" : `${result.media.rttMs} ms`],
        ];
        showFigures(this.figures, entries);
    }
}
