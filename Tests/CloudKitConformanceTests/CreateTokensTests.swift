// CloudKit Web Services Reference, "Creating APNs Tokens (tokens/create)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/CreateTokens.html):
// `{"apnsEnvironment"}` → `{"apnsEnvironment", "apnsToken", "webcourierURL"}`.
import Foundation
import Testing

@Suite("CloudKit: Creating APNs Tokens (tokens/create)")
struct CreateTokensTests {
    @Test("tokens/create answers apnsEnvironment, apnsToken and the webcourierURL to long-poll",
          arguments: ConformanceBackend.allCases)
    func create(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let reply = try await user.web("tokens/create", ["apnsEnvironment": "development"], write: true)
        #expect(reply.status == 200 && reply.body["apnsEnvironment"] as? String == "development", "\(reply)")
        let token = try #require(reply.body["apnsToken"] as? String)
        #expect(token.count == 64 && token.allSatisfy { $0.isHexDigit })
        #expect((reply.body["webcourierURL"] as? String)?.hasSuffix("/webcourier?tok=\(token)") == true)
        let again = try await user.web("tokens/create", ["apnsEnvironment": "production"], write: true)
        #expect(again.body["apnsToken"] as? String != token && again.body["apnsEnvironment"] as? String == "production")
    }

    @Test("tokens/create: apnsEnvironment required and development|production; other keys refused; needs a user",
          arguments: ConformanceBackend.allCases)
    func refused(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        for body: [String: Any] in [[:], ["apnsEnvironment": "staging"], ["apnsEnvironment": 1],
                                    ["apnsEnvironment": "development", "apnsTopic": "x"]] {
            let reply = try await user.web("tokens/create", body, write: true)
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST", "\(body): \(reply)")
        }
        let anonymous = try await user.web("tokens/create", ["apnsEnvironment": "development"], webToken: .some(nil),
                                           write: true)
        #expect(anonymous.status == 421 && anonymous.body["redirectURL"] is String, "\(anonymous)")
        let get = try await user.web("tokens/create", nil, method: "GET", write: true)
        #expect(get.status == 405, "\(get)")
    }
}
