// The group-call page: /call?room=R&me=U&mesh=1(&owner=1|&roomOwner=O)[&send=0][&report=1][&frames=N]
// [&peers=N][&timeout=S][&uplink=KBPS][#token=T] (docs/PROTOCOL.md §10–11). Sets the room up, joins its
// group call (mesh.js), shows one video per member, the roster and every pair's records; exposes
// window.zonertcResult with per-member results and, with report=1, POSTs it to /call/report once `peers`
// members each decoded `frames` frames (or the page failed, or was refused), and again whenever a leg ends or
// the page leaves after that. The hang-up button and leaving the page (pagehide) leave the call.
import { isRoomID, isUserID } from "./names.js";
import { EpochClock } from "./epoch.js";
import { ZoneStore } from "./store.js";
import { HybridSync } from "./sync.js";
import { setUpRoom } from "./room.js";
import { SidePanel } from "./panel.js";
import { MeshPanel } from "./meshpanel.js";
import { MeshRoom } from "./mesh.js";
import { rankOf } from "./ranking.js";
import { tokenFor } from "./token.js";
import { postReport } from "./report.js";

/** Reports posted at most (the first when done, then one per leg ended and one on leaving). */
const MAX_REPORTS = 24;
/** How often timers run and the figures are read. */
const TICK_MS = 250;

function integer(text, fallback, min, max) {
    const n = Number(text ?? fallback);
    return Number.isInteger(n) ? Math.max(min, Math.min(max, n)) : fallback;
}

export async function run() {
    const params = new URLSearchParams(location.search);
    const fragment = new URLSearchParams(location.hash.slice(1));
    const sidePanel = new SidePanel(document);
    const panel = new MeshPanel(document);
    const started = performance.now();
    const me = params.get("me"), room = params.get("room");
    const owner = params.get("owner") === "1";
    const roomOwner = owner ? me : params.get("roomOwner");
    const result = { mode: "mesh", ok: null, reason: null, status: "starting…", me, room, owner, roomOwner,
        peersWanted: integer(params.get("peers"), 1, 1, 4), framesWanted: integer(params.get("frames"), 30, 0, 100000),
        memberSession: null, joinedAt: null, rank: null,
        /** Members present, this page included, in join order: {userId, memberSession, joinedAt, expiresAt, rank}. */
        roster: [],
        /** Per remote member, its latest leg: the pair, roles, epoch, states, media, counters, how it ended. */
        members: {},
        /** Legs that ended, oldest first (a member that rejoined has one per member session). */
        legsEnded: [],
        /** The room's counters (mesh.js). */
        mesh: {},
        /** Once the page left the call: {reason, full, atMs}. */
        left: null, phases: {}, records: [], errors: [] };
    window.zonertcResult = result;
    let token = null, mesh = null, sync = null, ticker = null;

    const phase = (name) => { result.phases[name] = Math.round(performance.now()); };
    const log = (what, text, record) => {
        sidePanel.line(what, text);
        if (what === "error" && result.errors.length < 200) result.errors.push(text);
        if (record && result.records.length < 2000) {
            result.records.push({ dir: what, ...record, atMs: Math.round(performance.now() - started) });
        }
        console.log(`zonertc ${what} ${text}`);
    };
    const setStatus = (text, ok) => {
        result.status = text;
        sidePanel.setStatus(text, ok);
    };

    let posts = 0, posting = Promise.resolve();
    /** Posts the report (after the verdict only), in order, at most MAX_REPORTS times. */
    const report = () => {
        if (params.get("report") !== "1" || result.ok === null || posts >= MAX_REPORTS) return posting;
        posts += 1;
        result.reports = posts;
        const body = JSON.parse(JSON.stringify(result));
        posting = posting.then(() => postReport(body, token))
            .catch((error) => sidePanel.line("error", `report failed: ${error.message}`));
        return posting;
    };
    /** The verdict, once; posted unless the caller posts it with more (`post: false`). */
    const finish = (ok, reason, { post = true } = {}) => {
        if (result.ok !== null) return;
        result.ok = ok;
        result.reason = reason;
        setStatus(`${ok ? "OK" : "FAIL"}: ${reason}`, ok);
        log(ok ? "done" : "error", reason);
        if (post) report();
    };

    try {
        if (!me || !room) throw new Error("open /call?room=room_xxxxxxxx&me=ID&mesh=1&owner=1 (or &roomOwner=ID)");
        if (!isRoomID(room)) throw new Error(`room ${room} is not room_ and 8 characters of [a-z0-9]`);
        if (!isUserID(me)) throw new Error("me must be printable ASCII without spaces");
        if (!roomOwner || !isUserID(roomOwner)) {
            throw new Error("name the room's owner: &owner=1 when it is you, else &roomOwner=ID");
        }
        if (!globalThis.crypto?.subtle) {
            throw new Error("WebCrypto is missing: open the page on localhost or over HTTPS");
        }
        const timeoutS = integer(params.get("timeout"), 45, 1, 3600);
        const uplink = params.get("uplink") === null ? null : integer(params.get("uplink"), null, 1, 10000000);
        const answerS = integer(params.get("answerTimeout"), 40, 5, 600);
        document.title = `${me} · group call · ${room}`;
        panel.show();
        phase("script");
        token = await tokenFor(me, fragment);
        phase("token");
        const deviceID = `browser-${crypto.randomUUID().slice(0, 8)}`;
        const store = new ZoneStore({ token, deviceID });
        const { scope, zoneID } = await setUpRoom({ store, room, me, remote: roomOwner, owner: roomOwner === me,
            log, groupCall: true });
        log("room", `${scope} database, zone ${room} of ${zoneID.ownerRecordName}`);
        Object.assign(result, { scope, deviceID });
        phase("room");
        let localStream = null;
        if (params.get("send") !== "0") {
            localStream = await navigator.mediaDevices.getUserMedia({ audio: false,
                video: { width: { ideal: 320 }, height: { ideal: 240 } } });
            document.getElementById("local").srcObject = localStream;
            phase("camera");
        }
        const storageKey = `zonertc.sync.${me}.${scope}.${room}`;
        // Joining reads the whole room: the roster (and our rank) must come whole from that fetch (§11.1).
        localStorage.removeItem(`${storageKey}.zone`);
        mesh = new MeshRoom({ context: { store, scope, zoneID, room, me, localStream, log,
            epochs: new EpochClock(`zonertc.epoch.${me}`), elapsedMs: () => performance.now() - started },
            uplinkKbps: uplink, answerMs: answerS * 1000, hooks: {
            legStarted: (leg) => {
                panel.legStarted(leg);
                leg.call.pc.ontrack = (event) => panel.attach(leg, event.streams[0] ?? new MediaStream([event.track]));
            },
            legEnded: (leg) => {
                panel.legEnded(leg);
                // Leaving ends every leg: the report of the leaving says it all.
                if (mesh.state !== "leaving") refresh().then(report);
            },
            // A leg letting its last frames decode may reach the verdict meanwhile, before it ends.
            sampled: () => tick(),
            roster: (members) => log("room", `members: ${members.map((m) => m.userId).join(", ")}`),
            left: (left) => {
                result.left = left;
                for (const track of localStream?.getTracks() ?? []) track.stop();
                document.getElementById("local").srcObject = null;
                sync.stop();
                clearInterval(ticker);
                refresh().then(() => {
                    const verdict = result.ok === null ? "" : ` (after ${result.ok ? "OK" : "FAIL"}: ${result.reason})`;
                    finish(false, left.reason, { post: false });
                    setStatus(`LEFT: ${left.reason}${verdict}`, left.full ? false : undefined);
                    report();
                });
            } } });
        sync = new HybridSync({ store, scope, zoneID, storageKey, log,
            onRecords: (records, via) => mesh.received(records, via) });
        panel.onHangUp(() => mesh.leave("hung up"));
        window.addEventListener("pagehide", () => {
            mesh.leave("the page went away (closed, reloaded or navigated elsewhere)", { keepalive: true });
        });
        setTimeout(() => finish(false, `not done within ${timeoutS} s: ${legSummary()}`), timeoutS * 1000);

        /** The figures of every leg and of the room, into the result and the panel. */
        const refresh = async () => {
            const now = Date.now();
            const legs = [...mesh.legs.values()];
            await Promise.all(legs.map((leg) => leg.figures.sample(performance.now() - started).catch(() => {})));
            // Each member's latest leg: the live one, else the last that ended.
            const members = {};
            for (const leg of [...mesh.endedLegs, ...legs]) members[leg.remote] = legResult(leg, started);
            result.members = members;
            result.legsEnded = mesh.endedLegs.map((leg) => legResult(leg, started));
            if (mesh.presence) {
                Object.assign(result, { memberSession: mesh.presence.memberSession,
                    joinedAt: mesh.presence.joinedAt });
            }
            const present = mesh.state === "joined" ? mesh.members(now) : [];
            result.roster = present.map((m, i) => ({ userId: m.userId, memberSession: m.memberSession,
                joinedAt: m.joinedAt, expiresAt: m.expiresAt, rank: i + 1 }));
            result.rank = rankOf(present, me) || result.rank;
            Object.assign(result, { mesh: { ...mesh.counters }, state: mesh.state, storeRequests: store.requests,
                sync: { ...sync.counters, pushUp: sync.pushUp }, elapsedMs: Math.round(performance.now() - started) });
            panel.roster(result.roster, mesh, me, now);
            panel.figures(result);
        };
        const legSummary = () => Object.values(result.members).map((m) => `${m.remote}: ${m.ended
            ? `ended (${m.ended.reason})` : `${m.connectionState}, ${m.media.framesDecoded} frames decoded`}`)
            .join("; ") || "no member";
        const tick = async () => {
            mesh.tick();
            await refresh();
            const done = [...mesh.legs.values()].filter((leg) => leg.connected && legDone(leg, result.framesWanted));
            if (result.ok === null) {
                setStatus(`${mesh.state} · ${mesh.legs.size} leg(s) · ${done.length} of ${result.peersWanted} done`);
            }
            if (mesh.state === "joined" && done.length >= result.peersWanted) {
                finish(true, `${done.length} member(s) connected: ${done.map((leg) => `${leg.remote} `
                    + `${leg.figures.figures.framesDecoded} frames decoded`).join(", ")}`);
            }
        };
        await mesh.join(sync);
        phase("joined");
        if (mesh.state === "joined") {
            ticker = setInterval(() => tick().catch((error) => log("error", `tick: ${error.message}`)), TICK_MS);
        }
    } catch (error) {
        log("error", error.message);
        finish(false, error.message);
    }
}

/** Whether a leg has carried enough: `frames` decoded, or sent when it receives nothing. */
function legDone(leg, frames) {
    const f = leg.figures.figures;
    const receiving = leg.call.pc.getTransceivers().some((t) => /recv/.test(t.currentDirection ?? ""));
    return f.framesDecoded >= frames || (!receiving && f.framesSent >= frames);
}

/** One leg as the report shows it. */
function legResult(leg, started) {
    const call = leg.call, pc = call.pc;
    const at = (ms) => (ms === null ? null : Math.round(ms - performance.timeOrigin - started));
    return { remote: leg.remote, leg: leg.startedAt, sessionKey: leg.key, memberSession: leg.memberSession,
        firstOffer: call.firstOffer, offerCreator: call.roles.isOfferCreator, polite: call.roles.isPolite,
        bandwidthKbps: leg.bandwidthKbps, epoch: call.epoch, signalingState: pc.signalingState,
        iceState: pc.iceConnectionState, connectionState: pc.connectionState, fellBack: leg.fellBack,
        restarts: leg.restarts, startedMs: at(leg.startedAt), connectedMs: at(leg.connectedAt),
        media: { ...leg.figures.figures }, inbox: { ...leg.inbox.counters }, call: { ...call.counters },
        ended: leg.ended };
}
