// The bearer token of the page's user (docs/PROTOCOL.md §10): `#token=` in the fragment (never sent to a
// server in a URL), else the one this browser stored, else a new registration (registration hands a token
// out once: a name already registered elsewhere must come with its token).
import { register } from "./store.js";

/** The token of `me`; `fragment` is the page's parsed `location.hash`. */
export async function tokenFor(me, fragment) {
    const key = `zonertc.token.${me}`;
    const given = fragment.get("token");
    if (given) {
        localStorage.setItem(key, given);
        history.replaceState(null, "", location.pathname + location.search);
        return given;
    }
    const stored = localStorage.getItem(key);
    if (stored) return stored;
    try {
        const token = await register(me);
        localStorage.setItem(key, token);
        return token;
    } catch (error) {
        if (error.code === "EXISTS") {
            throw new Error(`${me} is registered but this browser has no token for it: open the page with `
                + `#token=<the token> (e.g. the contents of a peer's --token-file)`);
        }
        throw error;
    }
}
