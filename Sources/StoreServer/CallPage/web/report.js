// The page's report (docs/PROTOCOL.md §10): `POST /call/report?room=R&me=U` with U's token keeps the page's
// window.zonertcResult for whoever runs the call (`zonertc call --browser`, the Chromium tests).

/** Posts `result` as the report of `result.me` in `result.room`; throws when it could not be posted. */
export async function postReport(result, token) {
    const query = new URLSearchParams({ room: result.room, me: result.me });
    const response = await fetch(`/call/report?${query}`, { method: "POST", body: JSON.stringify(result),
        headers: { "Authorization": `Bearer ${token ?? ""}` }, signal: AbortSignal.timeout(10000) });
    if (!response.ok) throw new Error(`the daemon answered ${response.status}`);
}
