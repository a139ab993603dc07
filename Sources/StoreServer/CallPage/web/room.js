// Room setup, docs/SIGNALING.md §1 and §6: the owner makes the zone, the Room record, its RoomMember, the
// zone-wide share (publicPermission readWrite) and a database subscription, in its private database; the
// participant accepts the share (idempotent; retried while the owner has not made it yet), saves its member
// and subscribes, in its shared database. Each side decides its (database, zone) once and never guesses.
// `remote` is the room's owner when we are not (in a group call, the owner named by the page's URL); with
// `groupCall` our RoomMember says that this client joins group calls (docs/PROTOCOL.md §11.6).
import { RecordNames } from "./names.js";
import { StoreError } from "./store.js";

/** How long a participant waits for the owner's share. */
export const SHARE_WAIT_MS = 30000;

export async function setUpRoom({ store, room, me, remote, owner, log, groupCall = false }) {
    const scope = owner ? "private" : "shared";
    const zoneID = { zoneName: room, ownerRecordName: owner ? me : remote };
    const member = { recordName: await RecordNames.member(me), recordType: "RoomMember",
        fields: { userId: { value: me, type: "STRING" }, displayName: { value: me, type: "STRING" } } };
    if (groupCall) member.fields.groupCallVersion = { value: 1, type: "INT64" };
    if (owner) {
        await store.post(scope, "zones/modify", { operations: [{ operationType: "create", zone: { zoneID } }] });
        await store.post(scope, "records/modify", { zoneID, operations: [
            { operationType: "forceReplace", record: { recordName: room, recordType: "Room",
                fields: { roomID: { value: room, type: "STRING" }, name: { value: room, type: "STRING" } } } },
            { operationType: "forceReplace", record: member }] });
        try {
            await store.post(scope, "shares/create", { zoneID, publicPermission: "readWrite" });
        } catch (error) {
            if (!(error instanceof StoreError) || error.code !== "EXISTS") throw error;
        }
    } else {
        const deadline = performance.now() + SHARE_WAIT_MS;
        for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
            try {
                await store.post(scope, "shares/accept", { zoneID });
                break;
            } catch (error) {
                if (performance.now() > deadline) {
                    throw new Error(`no share of ${room} from ${remote}: ${error.message}`);
                }
                log("room", `waiting for ${remote}'s share (${error.code ?? error.message})`);
                await new Promise((resolve) => setTimeout(resolve, delay));
            }
        }
        await store.post(scope, "records/modify", { zoneID, operations: [{ operationType: "forceReplace",
            record: member }] });
    }
    await store.post(scope, "subscriptions/modify", { operations: [{ operationType: "create",
        subscription: { subscriptionID: `zonertc-signal-${scope}`, subscriptionType: "database" } }] });
    return { scope, zoneID };
}
