// The call page: /call?room=…&me=…&remote=…[&owner=1][&send=0][&report=1][&frames=N][&timeout=S]
// [#token=…]. Wires the store, the room, the inbox, the call and the panel; exposes window.zonertcResult
// and, with report=1, POSTs it to /call/report once the call has decoded `frames` frames (or failed), and
// again when the remote hangs up after that. With `mesh=1` the page joins the room's group call instead
// (meshmain.js).
import { RecordNames, isRoomID, roles, sessionKey } from "./names.js";
import { SignalInbox } from "./inbox.js";
import { EpochClock } from "./epoch.js";
import { ZoneStore } from "./store.js";
import { HybridSync } from "./sync.js";
import { setUpRoom } from "./room.js";
import { ZoneCall } from "./call.js";
import { MediaFigures } from "./stats.js";
import { SidePanel } from "./panel.js";
import { tokenFor } from "./token.js";
import { postReport } from "./report.js";
import { settle } from "./settle.js";

const params = new URLSearchParams(location.search);
const fragment = new URLSearchParams(location.hash.slice(1));
const panel = new SidePanel(document);
const started = performance.now();
const result = { ok: null, reason: null, me: params.get("me"), remote: params.get("remote"),
    room: params.get("room"), owner: params.get("owner") === "1", records: [], errors: [],
    /** When each phase of the page ended, in ms since navigation start (performance.now()). */
    phases: {},
    /** Once the call has ended: {by, reason, atMs, settleMs (spent letting received frames decode),
     * localTracks: the local tracks' readyState}. */
    ended: null, status: "starting…" };
window.zonertcResult = result;

function phase(name) {
    result.phases[name] = Math.round(performance.now());
}

function log(what, text, record) {
    panel.line(what, text);
    if (what === "error") result.errors.push(text);
    if (record && result.records.length < 2000) result.records.push({ dir: what, ...record, atMs: Math.round(
        performance.now() - started) });
    console.log(`zonertc ${what} ${text}`);
}

function setStatus(text, ok) {
    result.status = text;
    panel.setStatus(text, ok);
}

/** Posts the result once when the call is done, and once more if it ends (the remote hangs up) after that. */
async function report() {
    const posts = result.ended ? 2 : 1;
    if (params.get("report") !== "1" || (result.reports ?? 0) >= posts) return;
    result.reports = posts;
    try {
        await postReport(result, result.token);
    } catch (error) {
        panel.line("error", `report failed: ${error.message}`);
    }
}

function finish(ok, reason) {
    if (result.ok !== null) return;
    result.ok = ok;
    result.reason = reason;
    setStatus(ok ? `OK: ${reason}` : `${result.ended ? "ENDED" : "FAIL"}: ${reason}`, ok);
    log(ok ? "done" : "error", reason);
    report();
}

async function main() {
    const { me, remote, room } = result;
    if (!me || !remote || !room) throw new Error("open /call?room=room_xxxxxxxx&me=ID&remote=ID[&owner=1]");
    if (!isRoomID(room)) throw new Error(`room ${room} is not room_ and 8 characters of [a-z0-9]`);
    if (me === remote) throw new Error("me and remote are the same user");
    if (!globalThis.crypto?.subtle) throw new Error("WebCrypto is missing: open the page on localhost or over HTTPS");
    const wantFrames = Math.max(0, Math.min(100000, Number(params.get("frames") ?? 30) || 0));
    const timeoutS = Math.max(1, Math.min(3600, Number(params.get("timeout") ?? 45) || 45));
    setTimeout(() => finish(false, `not done within ${timeoutS} s`), timeoutS * 1000);
    document.title = `${me} ⇄ ${remote} · ${room}`;

    phase("script");
    const token = await tokenFor(me, fragment);
    phase("token");
    Object.defineProperty(result, "token", { value: token, enumerable: false });
    const deviceID = `browser-${crypto.randomUUID().slice(0, 8)}`;
    const store = new ZoneStore({ token, deviceID });
    const { scope, zoneID } = await setUpRoom({ store, room, me, remote, owner: result.owner, log });
    log("room", `${scope} database, zone ${room} of ${zoneID.ownerRecordName}`);
    phase("room");

    let localStream = null;
    if (params.get("send") !== "0") {
        localStream = await navigator.mediaDevices.getUserMedia({ video: true, audio: false });
        document.getElementById("local").srcObject = localStream;
        phase("camera");
    }
    const key = sessionKey(room, me, remote);
    const inbox = new SignalInbox({ sessionKey: key, me });
    inbox.onDrop = (what, detail) => log("drop", `${what}: ${detail}`);
    const localTracks = () => localStream?.getTracks().map((track) => track.readyState) ?? [];
    const call = new ZoneCall({ store, scope, zoneID, room, me, remote, key, names: new RecordNames(key),
        roles: roles(me, remote), inbox, epochs: new EpochClock(`zonertc.epoch.${me}`), localStream, log });
    const remoteVideo = document.getElementById("remote");
    call.pc.ontrack = (event) => {
        remoteVideo.srcObject = event.streams[0] ?? new MediaStream([event.track]);
    };
    // The first frame the video element has (performance.now() counts from navigation start).
    let firstFrameAt = null;
    remoteVideo.addEventListener("loadeddata", () => { firstFrameAt ??= performance.now(); });
    const sync = new HybridSync({ store, scope, zoneID, storageKey: `zonertc.sync.${me}.${scope}.${room}`,
        onRecords: (records, via) => call.received(records, via), log });
    const figures = new MediaFigures(call.pc);
    Object.assign(result, { scope, sessionKey: key, offerCreator: call.roles.isOfferCreator, deviceID });

    const tick = async () => {
        const now = performance.now() - started;
        const media = await figures.sample(now);
        sync.setNegotiating(call.pc.connectionState !== "connected");
        Object.assign(result, { epoch: call.epoch, signalingState: call.pc.signalingState,
            iceState: call.pc.iceConnectionState, connectionState: call.pc.connectionState,
            selectedPair: media.selectedPair, inbox: { ...inbox.counters }, call: { ...call.counters },
            sync: { ...sync.counters, pushUp: sync.pushUp }, media: { ...media }, storeRequests: store.requests,
            recordsOut: call.counters.offersSaved + call.counters.answersSaved + call.counters.chunksSaved,
            connectedMs: call.connectedAt === null ? null : Math.round(call.connectedAt - started),
            navigationToConnectedMs: call.connectedAt === null ? null : Math.round(call.connectedAt),
            navigationToFirstFrameMs: firstFrameAt === null ? null : Math.round(firstFrameAt),
            elapsedMs: Math.round(now) });
        panel.show(result);
        if (result.ok === null) setStatus(`${call.pc.connectionState} · ${media.framesDecoded} frames decoded`);
        if (call.pc.connectionState === "failed") finish(false, "ICE failed");
        const enough = media.framesDecoded >= wantFrames || (!call.pc.getReceivers().some((r) => r.track
            && call.pc.getTransceivers().some((t) => t.receiver === r && /recv/.test(t.currentDirection ?? "")))
            && media.framesSent >= wantFrames);
        if (call.pc.connectionState === "connected" && enough) {
            finish(true, `connected, ${media.framesDecoded} frames decoded`);
        }
    };
    let ticker = null;
    call.onRemoteHangUp = (ending) => remoteHungUp(ending);
    await call.start();
    phase("callStarted");
    await sync.start();
    if (!call.ending) ticker = setInterval(() => tick().catch((error) => log("error", `stats: ${error.message}`)), 250);

    /** The remote hung up: let every frame that arrived be decoded (or dropped) first (settle.js), then close
     * the connection, stop the camera or file stream and the store's sync, and say that the call ended and why. */
    async function remoteHungUp(ending) {
        clearInterval(ticker);
        const settleMs = await settle(async () => {
            await tick().catch(() => {});
            return result.media ?? { framesDecoded: 0, framesDropped: 0, framesReceived: 0 };
        }, { done: () => result.ok !== null });
        call.close();
        sync.stop();
        remoteVideo.srcObject = null;
        document.getElementById("local").srcObject = null;
        result.ended = { ...ending, atMs: Math.round(performance.now() - started),
            settleMs, localTracks: localTracks() };
        Object.assign(result, { signalingState: call.pc.signalingState, iceState: call.pc.iceConnectionState,
            connectionState: call.pc.connectionState, call: { ...call.counters } });
        panel.show(result);
        const decodedText = `${result.media?.framesDecoded ?? 0} frames decoded`;
        if (result.ok === null) {
            finish(false, `${ending.reason}, ${decodedText}`);
        } else {
            setStatus(`ENDED: ${ending.reason}, after ${result.ok ? "OK" : "FAIL"}: ${result.reason}`, result.ok);
            report();
        }
    }
}

if (params.get("mesh") === "1") {
    import("./meshmain.js").then((page) => page.run()).catch((error) => {
        log("error", error.message);
        finish(false, error.message);
    });
} else {
    main().catch((error) => {
        log("error", error.message);
        finish(false, error.message);
    });
}
