import Foundation
import Testing
import TestSupport
import ZoneCore

/// `zonertc store serve --api-token`: the container's API tokens (CloudKit's `ckAPIToken`) survive a
/// restart without the flag, in `--data` and in the PostgreSQL database.
@Suite("zonertc store serve --api-token")
struct APITokenProcessTests {
    static let token = "process-api-token-0123456789"

    /// The status of a private lookup sent as CloudKit JS sends it with `apiToken` and no user:
    /// 421 when the token is known (a user is needed), 401 when it is not.
    static func status(_ apiToken: String, at endpoint: Endpoint) throws -> String {
        let reply = try RegistrationTests.exchange(endpoint, RegistrationTests.post(
            "/database/1/c/e/private/records/lookup?ckAPIToken=\(apiToken)", #"{"records":[]}"#))
        return String(reply.prefix(12))
    }

    @Test("--data: a declared token is remembered (api-tokens, mode 0600); a bad one is a usage error")
    func rememberedInData() throws {
        let dir = NSTemporaryDirectory() + "zonertc-apitoken-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try DaemonProcess(arguments: ["--data", dir, "--api-token", Self.token])
        #expect(try Self.status(Self.token, at: first.endpoint) == "HTTP/1.1 421")
        #expect(try Self.status("another-api-token-000000", at: first.endpoint) == "HTTP/1.1 401")
        first.kill(SIGTERM)
        let mode = (try FileManager.default.attributesOfItem(atPath: "\(dir)/api-tokens")[.posixPermissions]) as? Int
        #expect(mode == 0o600)
        let again = try DaemonProcess(arguments: ["--data", dir])
        #expect(try Self.status(Self.token, at: again.endpoint) == "HTTP/1.1 421")
        again.kill(SIGTERM)
        let bad = try ZonertcProcess.run(["store", "serve", "--memory", "--api-token", "short"])
        #expect(bad.status == 2 && bad.stderr.contains("--api-token"), "\(bad.stderr)")
    }

    @Test("--postgres: a token one daemon declared is accepted by a daemon started after it without the flag",
          .enabled(if: PostgresCluster.runnable, "PostgreSQL is not installed (ZONERTC_CI=1 fails instead)"))
    func rememberedInDatabase() throws {
        let cluster = try PostgresCluster.shared()
        let url = cluster.url(database: try cluster.freshDatabase())
        let declaring = try DaemonProcess(arguments: ["--postgres", url, "--api-token", Self.token])
        let other = try DaemonProcess(arguments: ["--postgres", url])
        #expect(try Self.status(Self.token, at: other.endpoint) == "HTTP/1.1 421")
        #expect(try Self.status("another-api-token-000000", at: other.endpoint) == "HTTP/1.1 401")
        declaring.kill(SIGTERM)
        other.kill(SIGTERM)
    }
}
