// What the group-call page shows besides the record log: one video per member (its caption the pair's state),
// the roster — members in join order with their member sessions, when each joined and until when it counts
// as present, its leg — the figures of each pair, and the hang-up button.
import { showFigures } from "./panel.js";

export class MeshPanel {
    constructor(document) {
        this.document = document;
        this.grid = document.getElementById("grid");
        this.table = document.getElementById("roster");
        this.figureList = document.getElementById("figures");
        this.button = document.getElementById("hangup");
        /** remote → {figure, video, caption}. */
        this.tiles = new Map();
    }

    /** Swaps the call-of-two video for the grid, shows the roster and the button. */
    show() {
        this.document.getElementById("remote")?.closest("figure")?.setAttribute("hidden", "");
        for (const id of ["grid", "roster", "roster-title", "hangup"]) {
            this.document.getElementById(id)?.removeAttribute("hidden");
        }
    }

    onHangUp(action) {
        this.button?.addEventListener("click", () => {
            this.button.disabled = true;
            action();
        });
    }

    legStarted(leg) {
        if (!this.grid) return;
        this.tiles.get(leg.remote)?.figure.remove();
        const figure = this.document.createElement("figure");
        const video = this.document.createElement("video");
        Object.assign(video, { autoplay: true, playsInline: true, muted: true });
        const caption = this.document.createElement("figcaption");
        caption.textContent = `${leg.remote} · starting`;
        figure.append(video, caption);
        this.grid.append(figure);
        this.tiles.set(leg.remote, { figure, video, caption, leg });
    }

    attach(leg, stream) {
        const tile = this.tiles.get(leg.remote);
        if (tile?.leg === leg) tile.video.srcObject = stream;
    }

    legEnded(leg) {
        const tile = this.tiles.get(leg.remote);
        if (tile?.leg !== leg) return;
        tile.video.srcObject = null;
        tile.figure.classList.add("ended");
        tile.caption.textContent = `${leg.remote} · ended: ${leg.ended?.reason ?? ""}`;
    }

    /** The roster table: rank, user, member session, joined, expires in, leg. */
    roster(rows, mesh, me, nowMs) {
        if (!this.table) return;
        const cells = (tag, values) => {
            const tr = this.document.createElement("tr");
            for (const value of values) {
                const cell = this.document.createElement(tag);
                cell.textContent = String(value);
                tr.append(cell);
            }
            return tr;
        };
        const time = (ms) => new Date(ms).toISOString().slice(11, 23);
        this.table.replaceChildren(cells("th", ["#", "member", "session", "joined", "expires in", "leg"]),
            ...rows.map((row) => {
                const leg = mesh.legs.get(row.userId);
                const state = row.userId === me ? "(this page)"
                    : leg ? `${leg.call.pc.connectionState} · epoch ${leg.call.epoch ?? "—"}` : "none";
                return cells("td", [row.rank, row.userId, row.memberSession, time(row.joinedAt),
                    `${Math.max(0, Math.round((row.expiresAt - nowMs) / 1000))} s`, state]);
            }));
        for (const [remote, tile] of this.tiles) {
            const leg = tile.leg;
            if (leg.ended) continue;
            tile.caption.textContent = `${remote} · ${leg.call.pc.connectionState} · epoch ${leg.call.epoch ?? "—"} · `
                + `${leg.figures.figures.framesDecoded} frames decoded`;
        }
    }

    /** The room's figures and each pair's, as a definition list. */
    figures(result) {
        if (!this.figureList) return;
        const m = result.mesh;
        const entries = [
            ["call", result.left ? `left: ${result.left.reason}` : `${result.state ?? "starting"}, `
                + `${result.ok === null ? "live" : "live, done"}`],
            ["me", `${result.me}, rank ${result.rank ?? "—"}, session ${result.memberSession ?? "—"}`],
            ["members seen", `${m.membersJoined} joined, ${m.membersLeft} left, ${m.membersExpired} expired`],
            ["legs", `${m.legsStarted} started, ${m.legsEnded} ended (${m.unanswered} unanswered, `
                + `${m.failedLegs} failed)`],
            ["refused", `${m.memberRecordsRefused} presence, ${m.forgedRecords} forged, ${m.beyondLimit} beyond limit`],
            ["store requests", result.storeRequests],
        ];
        for (const member of Object.values(result.members)) {
            entries.push([member.remote, `${member.ended ? `ended: ${member.ended.reason}` : member.connectionState}`
                + ` · epoch ${member.epoch ?? "—"} · ${member.firstOffer ? "offers first" : "answers first"} · `
                + `${member.media.framesDecoded} in / ${member.media.framesSent} out · resets ${member.call.resets}`]);
        }
        showFigures(this.figureList, entries);
    }
}
