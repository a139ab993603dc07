// The store daemon's JSON API over fetch(): docs/PROTOCOL.md "HTTP API". Every request is bounded by a
// timeout; an error answer becomes a StoreError carrying serverErrorCode, reason and retryAfter.

export const CONTAINER = "/database/1/iCloud.zonertc/development";

/** How long one request may take before the page gives up on it. */
export const REQUEST_TIMEOUT_MS = 10000;

/** Operations in one records/modify request at most (CloudKit Web Services, Data Size Limits: 200). */
export const MAX_OPERATIONS = 200;

export class StoreError extends Error {
    constructor(code, reason, status, retryAfter) {
        super(`${code}: ${reason}`);
        this.code = code;
        this.status = status;
        this.retryAfter = retryAfter;
    }
}

async function answer(response, what) {
    let body = {};
    try {
        body = await response.json();
    } catch {
        if (response.ok) throw new StoreError("BAD_RESPONSE", `${what}: the answer is not JSON`, response.status);
    }
    if (!response.ok) {
        throw new StoreError(body.serverErrorCode ?? `HTTP_${response.status}`, `${what}: ${body.reason ?? ""}`,
            response.status, typeof body.retryAfter === "number" ? body.retryAfter : undefined);
    }
    return body;
}

/** POST /auth/register: a new user's token, handed out once (EXISTS for a name already taken). */
export async function register(userName) {
    const response = await fetch("/auth/register", { method: "POST", body: JSON.stringify({ userName }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    return (await answer(response, "register")).token;
}

export class ZoneStore {
    constructor({ token, deviceID }) {
        this.token = token;
        this.deviceID = deviceID;
        this.requests = 0;
    }

    headers() {
        return { "Authorization": `Bearer ${this.token}`, "X-Device-ID": this.deviceID,
            "Content-Type": "application/json" };
    }

    /** POST …/<scope>/<operation> with a JSON body; `keepalive` lets the request outlive the page (64 KB). */
    async post(scope, operation, body, { keepalive = false } = {}) {
        this.requests += 1;
        const response = await fetch(`${CONTAINER}/${scope}/${operation}`, { method: "POST", keepalive,
            headers: this.headers(), body: JSON.stringify(body), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        return answer(response, operation);
    }

    /**
     * Reads the push stream (`GET …/push`, text/event-stream) with fetch() streaming — EventSource cannot
     * send the bearer token — calling onEvent(name, data) per event; returns when the stream ends.
     * `opened` is called once the daemon has answered (from then on nothing is missed).
     */
    async readPush(onEvent, opened, abort) {
        const response = await fetch(`${CONTAINER}/push`, { headers: this.headers(), signal: abort });
        if (!response.ok) await answer(response, "push");
        opened();
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
            const { value, done } = await reader.read();
            if (done) return;
            buffer += value;
            if (buffer.length > 1 << 20) throw new StoreError("BAD_RESPONSE", "push: an event over 1 MB", 200);
            // Server-sent events end with a blank line (WHATWG HTML §9.2.6); lines starting ':' are comments.
            let end;
            while ((end = buffer.indexOf("\n\n")) >= 0) {
                const block = buffer.slice(0, end);
                buffer = buffer.slice(end + 2);
                let name = "message", data = "";
                for (const line of block.split("\n")) {
                    if (line.startsWith("event:")) name = line.slice(6).trim();
                    else if (line.startsWith("data:")) data += line.slice(5).trim();
                }
                if (data !== "" || name !== "message") onEvent(name, data);
            }
        }
    }
}
