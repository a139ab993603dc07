// CloudKit Web Services Reference, "Composing Web Service Requests" → "Accessing CloudKit Using an API
// Token" (developer.apple.com/library/archive/…/CloudKitWebServicesReference/SettingUpWebServices.html):
// `?ckAPIToken=A&ckWebAuthToken=T` (CloudKit JS 1.x: `ckSession`), 421 AUTHENTICATION_REQUIRED with a
// `redirectURL` where a user is needed and none is named, 401 AUTHENTICATION_FAILED for unknown tokens,
// and the sign-in page that hands the web auth token back.
import Foundation
@testable import StoreServer
import Testing

@Suite("CloudKit: Accessing CloudKit Using an API Token")
struct SettingUpWebServicesTests {
    @Test("ckAPIToken with ckWebAuthToken, or with ckSession, names the user; the body may be text/plain",
          arguments: ConformanceBackend.allCases)
    func queryString(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let save = try await user.web("private/records/modify", [
            "zoneID": zone, "operations": [operation("create", recordDictionary("q", fields: ["n": value(1)]))]],
            write: true)
        #expect(save.status == 200 && save.recordCodes == [nil], "\(save)")
        let lookup = try await user.web("private/records/lookup", ["zoneID": zone, "records": [["recordName": "q"]]],
                                        session: true)
        #expect(lookup.status == 200 && lookup.records.first?.int("n") == 1, "\(lookup)")
        // Our bearer token needs no API token, as before.
        let bearer = try await user.post("records/lookup", ["zoneID": zone, "records": [["recordName": "q"]]])
        #expect(bearer.status == 200 && bearer.recordCodes == [nil])
    }

    @Test("the API token alone, or nothing, where a user is needed: 421 AUTHENTICATION_REQUIRED with redirectURL",
          arguments: ConformanceBackend.allCases)
    func signInRequired(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let anonymous = try await user.web("private/records/lookup", ["records": [["recordName": "x"]]],
                                           webToken: .some(nil))
        #expect(anonymous.status == 421 && anonymous.code == "AUTHENTICATION_REQUIRED", "\(anonymous)")
        #expect((anonymous.body["redirectURL"] as? String)?.hasSuffix("/auth/signin") == true)
        #expect(anonymous.body["uuid"] is String)
        let nothing = try await user.web("private/records/lookup", [:], apiToken: nil, webToken: .some(nil))
        #expect(nothing.status == 421 && nothing.body["redirectURL"] is String, "\(nothing)")
    }

    @Test("an unknown API token or web auth token: 401 AUTHENTICATION_FAILED", arguments: ConformanceBackend.allCases)
    func unknownTokens(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let api = try await user.web("private/records/lookup", [:], apiToken: "not-the-api-token-at-all")
        #expect(api.status == 401 && api.code == "AUTHENTICATION_FAILED", "\(api)")
        let web = try await user.web("private/records/lookup", [:], webToken: "0123456789abcdef")
        #expect(web.status == 401 && web.code == "AUTHENTICATION_FAILED", "\(web)")
        // Another user's web token with this user's bearer token: refused, not either one picked.
        let other = try await backend.user()
        let mixed = try await user.server.request("POST", "\(ConformanceUser.container)/private/records/lookup?"
                                                  + "ckWebAuthToken=\(other.token)",
                                                  headers: [("Authorization", "Bearer \(user.token)")],
                                                  body: Array("{}".utf8), write: false)
        #expect(mixed.status == 401 && mixed.code == "AUTHENTICATION_FAILED", "\(mixed)")
    }

    @Test("hostile credentials: oversized, repeated, with line breaks; a huge query string",
          arguments: ConformanceBackend.allCases)
    func hostile(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let huge = try await user.web("private/records/lookup", [:], webToken: String(repeating: "a", count: 8000))
        #expect(huge.status == 401, "\(huge)")
        let hugeAPI = try await user.web("private/records/lookup", [:], apiToken: String(repeating: "b", count: 4000))
        #expect(hugeAPI.status == 401, "\(hugeAPI)")
        let twice = try await user.web("private/records/lookup", [:], extra: "ckWebAuthToken=\(user.token)x")
        #expect(twice.status == 401, "\(twice)")
        let injected = try await user.web("private/records/lookup", [:], webToken: "\(user.token)%0D%0AX-Evil:%201")
        #expect(injected.status == 401, "\(injected)")
        let padded = try await user.web("private/records/lookup", ["records": [["recordName": "x"]]],
                                        extra: "pad=" + String(repeating: "p", count: 12_000))
        #expect(padded.status == 200 && padded.recordCodes == ["NOT_FOUND"], "\(padded)")
        #expect(APITokens.problem("short") != nil && APITokens.problem("with space in it!!") != nil)
        #expect(APITokens.problem(ConformanceUser.apiToken) == nil)
    }

    @Test("the sign-in page hands a user's token back to a path of this server only",
          arguments: ConformanceBackend.allCases)
    func signIn(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        func post(_ form: String) async throws -> Reply {
            try await user.server.request("POST", "/auth/signin",
                                          headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                          body: Array(form.utf8), write: false)
        }
        let json = try await post("webAuthToken=\(user.token)")
        #expect(json.status == 200 && json.body["ckWebAuthToken"] as? String == user.token
                && json.body["userRecordName"] as? String == user.name, "\(json)")
        #expect(try await post("webAuthToken=\(user.token)&redirect=%2Fapp%3Fx%3D1").status == 303)
        for bad in ["%2F%2Fevil.example%2F", "%2F%5Cevil.example", "https%3A%2F%2Fevil.example%2F",
                    "%2Fapp%0D%0ASet-Cookie%3A%20x%3D1"] {
            let refused = try await post("webAuthToken=\(user.token)&redirect=\(bad)")
            #expect(refused.status == 400 && refused.code == "BAD_REQUEST", "\(bad): \(refused)")
        }
        let wrong = try await post("webAuthToken=feedface")
        #expect(wrong.status == 401 && wrong.code == "AUTHENTICATION_FAILED")
        // These servers do not allow registration.
        let register = try await post("userName=newcomer")
        #expect(register.status == 403, "\(register)")
    }
}
