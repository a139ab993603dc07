import Foundation
import RecordStore

/// What a browser gets at a share's URL, `GET /share/<shortGUID>`.
///
/// CloudKit hands out a share's `url` (Types and Dictionaries → the share's keys; "Fetching Record
/// Information (records/resolve)" reads the short GUID back from it) for people to open; opened in
/// a browser, Apple's host answers a page that leads to the app, where the share is accepted. The
/// daemon does the same with what it has: a small page naming the short GUID and, for a signed-in
/// user (the sign-in page hands the web auth token back to it), a button that resolves the share
/// and accepts it through `records/resolve` and `records/accept` — the requests any client makes.
///
/// The page tells nothing about the share itself: it is served for any well-formed short GUID
/// without looking at the store (a guess learns nothing), and what the share holds comes only from
/// the authenticated requests its script makes. A path that is no short GUID is `404`.
///
/// A record saved with `createShortGUID` has a short GUID of the same form, and records/resolve
/// resolves it (to the record, without a share: "Fetching Record Information" fetches "information
/// about records given their shortGUID properties"), so the same URL form serves it: the page then
/// names the record and its owner and offers nothing to accept (records/accept of it is
/// `BAD_REQUEST`: there is no share).
enum SharePage {
    /// The share URLs' path prefix.
    static let prefix = "/share/"

    /// The short GUID a share URL's path names, if it is one the store could have made: 26
    /// characters of its base-32 alphabet (which also keeps the page free of anything to escape).
    static func shortGUID(inPath path: String) -> String? {
        guard path.hasPrefix(prefix) else { return nil }
        let guid = path.dropFirst(prefix.count)
        guard guid.utf8.count == 26, guid.allSatisfy({ "0123456789abcdefghjkmnpqrstvwxyz".contains($0) }) else {
            return nil
        }
        return String(guid)
    }

    /// The page for `guid`.
    static func page(_ guid: String) -> [UInt8] {
        let html = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Shared with you</title>
        <meta name="viewport" content="width=device-width, initial-scale=1"></head>
        <body>
        <h1>Shared with you</h1>
        <p>Share <code id="guid">\(guid)</code>.</p>
        <p id="status">Sign in to see what is shared and to accept it.</p>
        <p><a id="signin" href="/auth/signin?redirect=/share/\(guid)">Sign in</a>
        <button id="accept" hidden>Accept</button></p>
        <script>
        const guid = "\(guid)";
        const token = new URLSearchParams(location.search).get("ckWebAuthToken");
        const base = "/database/1/zonertc/production/shared/records/";
        async function call(op) {
          const asked = {value: guid, shouldFetchRootRecord: true, rootRecordDesiredKeys: []};
          const r = await fetch(base + op, {method: "POST", headers: {"Authorization": "Bearer " + token},
                                            body: JSON.stringify({shortGUIDs: [asked]})});
          const o = await r.json();
          return (o.results || [o])[0];
        }
        function show(r) {
          const s = document.getElementById("status");
          if (r.serverErrorCode) { s.textContent = r.serverErrorCode + ": " + (r.reason || ""); return false; }
          if (!r.share) {
            // A record's own short GUID (createShortGUID): nothing to accept, only a record to reach.
            const name = r.rootRecord ? r.rootRecord.recordName : "a record";
            s.textContent = "The record " + name + " of " + r.ownerIdentity.userRecordName + ": you may " +
              (r.participantPermission === "READ_WRITE" ? "read and change" : "read") + " it.";
            return false;
          }
          const root = (r.rootRecord && r.rootRecord.recordName) || r.share.recordName;
          s.textContent = "Shared by " + r.ownerIdentity.userRecordName + " (" + root + "): you are " +
            r.participantStatus + ", " + r.participantPermission + ".";
          return r.participantStatus !== "ACCEPTED";
        }
        if (token) {
          document.getElementById("signin").hidden = true;
          call("resolve").then(r => { document.getElementById("accept").hidden = !show(r); });
          document.getElementById("accept").onclick = () => call("accept").then(r => {
            document.getElementById("accept").hidden = !show(r);
          });
        }
        </script>
        </body></html>
        """
        return Array(html.utf8)
    }
}

extension StoreAPI {
    /// `GET /share/<shortGUID>`: the share page (`SharePage`).
    func sharePage(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "GET" else {
            return error(405, .invalidArguments, "a share URL is opened with GET")
        }
        guard let guid = SharePage.shortGUID(inPath: request.path) else {
            return error(404, .unknownItem, "no share URL \(request.path)")
        }
        return HTTPResponse(status: 200, headers: HTTPHeaders([
            ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
            ("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
        ]), body: SharePage.page(guid))
    }
}
