// CloudKit Web Services Reference, "Fetching Current User (users/current)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/GetCurrentUser.html):
// `GET …/public/users/current` answers the signed-in user's User dictionary.
import Foundation
import Testing

@Suite("CloudKit: Fetching Current User (users/current)")
struct GetCurrentUserTests {
    @Test("GET users/current: userRecordName of the signed-in user, by bearer or query-string token",
          arguments: ConformanceBackend.allCases)
    func current(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let bearer = try await user.server.request("GET", "\(ConformanceUser.container)/public/users/current",
                                                   headers: [("Authorization", "Bearer \(user.token)")], body: [],
                                                   write: false)
        #expect(bearer.status == 200 && bearer.body["userRecordName"] as? String == user.name, "\(bearer)")
        // Not discoverable: no names (the page: "If the user is discoverable, … the user's name").
        #expect(bearer.body["firstName"] == nil && bearer.body["lastName"] == nil)
        let web = try await user.web("public/users/current", nil, method: "GET", session: true)
        #expect(web.status == 200 && web.body["userRecordName"] as? String == user.name, "\(web)")
    }

    @Test("users/current without a user: 421 with redirectURL; POST: 405; users/discover: 404",
          arguments: ConformanceBackend.allCases)
    func refused(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let anonymous = try await user.web("public/users/current", nil, method: "GET", webToken: .some(nil))
        #expect(anonymous.status == 421 && anonymous.body["redirectURL"] is String, "\(anonymous)")
        let post = try await user.web("public/users/current", [:], method: "POST")
        #expect(post.status == 405, "\(post)")
        let discover = try await user.web("public/users/discover", nil, method: "GET")
        #expect(discover.status == 404 && discover.code == "NOT_FOUND", "\(discover)")
    }
}
