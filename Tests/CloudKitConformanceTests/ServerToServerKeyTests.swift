// CloudKit Web Services Reference, "Composing Web Service Requests" → "Accessing CloudKit Using a
// Server-to-Server Key" (developer.apple.com/library/archive/…/CloudKitWebServicesReference/
// SettingUpWebServices.html): `X-Apple-CloudKit-Request-KeyID`, `-ISO8601Date` and `-SignatureV1`, the
// ECDSA P-256 signature of `date:base64(SHA-256(body)):path`. In builds with OpenSSL (trait `WebRTC`).
#if WebRTC
import Foundation
import StoreServer
import Testing

@Suite("CloudKit: Accessing CloudKit Using a Server-to-Server Key")
struct ServerToServerKeyTests {
    private func send(_ user: ConformanceUser, _ path: String, _ body: [UInt8], headers: [(String, String)],
                      method: String = "POST") async throws -> Reply {
        try await user.server.request(method, path, headers: headers, body: body, write: true)
    }

    @Test("a request signed with a declared key acts as the keys' user", arguments: ConformanceBackend.allCases)
    func signed(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let key = TestSigningKey.shared
        let path = "\(ConformanceUser.container)/private/records/modify"
        let body = WireFormat.serialize(["operations": [operation("forceReplace", recordDictionary("s2s", fields: [
            "n": value(7)]))]])
        let saved = try await send(user, path, body, headers: key.headers(keyID: ConformanceUser.serverKeyID,
                                                                          path: path, body: body))
        #expect(saved.status == 200 && saved.recordCodes == [nil], "\(saved)")
        let current = "\(ConformanceUser.container)/public/users/current"
        let me = try await send(user, current, [], headers: key.headers(keyID: ConformanceUser.serverKeyID,
                                                                        path: current, body: []), method: "GET")
        #expect(me.status == 200 && me.body["userRecordName"] as? String == ConformanceUser.serverKeyUser, "\(me)")
    }

    @Test("a signature of another key, body, path or time; an unknown key; missing or malformed headers: 401",
          arguments: ConformanceBackend.allCases)
    func refused(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let key = TestSigningKey.shared, stranger = TestSigningKey()
        let path = "\(ConformanceUser.container)/private/records/lookup"
        let body = WireFormat.serialize(["records": [["recordName": "s2s"]]])
        let id = ConformanceUser.serverKeyID
        let good = key.headers(keyID: id, path: path, body: body)
        let cases: [(String, [(String, String)], [UInt8])] = [
            ("another key", stranger.headers(keyID: id, path: path, body: body), body),
            ("another body", good, Array("{}".utf8)),
            ("another path", key.headers(keyID: id, path: path + "x", body: body), body),
            ("twenty minutes old", key.headers(keyID: id, path: path, body: body,
                                               date: Date(timeIntervalSinceNow: -1200)), body),
            ("an unknown key", key.headers(keyID: "nobody", path: path, body: body), body),
            ("no date", good.filter { $0.0 != "X-Apple-CloudKit-Request-ISO8601Date" }, body),
            ("no signature", good.filter { $0.0 != "X-Apple-CloudKit-Request-SignatureV1" }, body),
            ("a signature that is not base64", good.map { $0.0.hasSuffix("SignatureV1") ? ($0.0, "@@@") : $0 }, body),
            ("an oversized signature", good.map {
                $0.0.hasSuffix("SignatureV1") ? ($0.0, String(repeating: "A", count: 4000)) : $0 }, body),
        ]
        for (what, headers, sent) in cases {
            let reply = try await send(user, path, sent, headers: headers)
            #expect(reply.status == 401 && reply.code == "AUTHENTICATION_FAILED", "\(what): \(reply)")
        }
        #expect(try await send(user, path, body, headers: good).status == 200)
    }
}
#endif
