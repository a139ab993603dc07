import Foundation
import Net
import RecordStore
import StoreServer
import Synchronization
import Testing
import TestSupport
import ZoneCore

/// Issue 13, item 2: `POST /auth/register` creates new users only and never hands a token out again.
@Suite("Registration on a real daemon")
struct RegistrationTests {
    /// One request on a new connection; the reply as text (read until the daemon closes or 5 s pass).
    static func exchange(_ endpoint: Endpoint, _ request: String) throws -> String {
        try rawExchange(endpoint, Array(request.utf8), timeoutMilliseconds: 5000)
    }

    static func post(_ path: String, _ body: String, headers: String = "") -> String {
        "POST \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n\(headers)"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test("register alice; a second register of alice gets EXISTS and no token; her records stay hers")
    func secondRegistrationIsRefused() async throws {
        let dir = NSTemporaryDirectory() + "zonertc-register-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try DaemonProcess(arguments: ["--data", dir])
        let token = try await RemoteStoreClient.register(userName: "alice", at: daemon.endpoint)
        let alice = RemoteStoreClient(configuration: .init(endpoint: daemon.endpoint, token: token),
                                      userRecordName: "alice", deviceID: "a")
        let secret = RecordID(recordName: "secret", zoneID: .defaultZone)
        _ = try await alice.save([Record(recordType: "Note", id: secret, fields: ["text": .string("alice only")])])

        let again = try Self.exchange(daemon.endpoint, Self.post("/auth/register", #"{"userName":"alice"}"#))
        #expect(again.hasPrefix("HTTP/1.1 409"), "\(again)")
        #expect(again.contains(#""serverErrorCode":"EXISTS""#))
        #expect(!again.contains(token))
        #expect(!again.contains(#""token""#))
        let refused = await #expect(throws: StoreError.self) {
            _ = try await RemoteStoreClient.register(userName: "alice", at: daemon.endpoint)
        }
        #expect(refused?.code == .alreadyExists)

        // Whoever asked holds no token of alice's: her private records do not read.
        let lookup = #"{"records":[{"recordName":"secret"}]}"#
        let anonymous = try Self.exchange(daemon.endpoint, Self.post("/database/1/c/e/private/records/lookup", lookup))
        #expect(anonymous.hasPrefix("HTTP/1.1 421"), "\(anonymous)")
        #expect(!anonymous.contains("alice only"))
        let guessed = try Self.exchange(daemon.endpoint, Self.post(
            "/database/1/c/e/private/records/lookup", lookup,
            headers: "Authorization: Bearer \(String(repeating: "0", count: 64))\r\n"))
        #expect(guessed.hasPrefix("HTTP/1.1 401"), "\(guessed)")
        #expect(!guessed.contains("alice only"))
        // A new name still registers, with a token of its own that does not read alice's records.
        let eve = try await RemoteStoreClient.register(userName: "eve", at: daemon.endpoint)
        #expect(eve != token)
        let asEve = try Self.exchange(daemon.endpoint, Self.post(
            "/database/1/c/e/private/records/lookup", lookup, headers: "Authorization: Bearer \(eve)\r\n"))
        #expect(!asEve.contains("alice only"))
        // Alice's own token still works.
        let mine = try await alice.lookupRecords([secret], scope: .private)
        guard case .found(let record) = mine.first else { Issue.record("alice lost her record"); return }
        #expect(record.fields["text"] == .string("alice only"))
        daemon.kill(SIGTERM)
    }

    /// Whether `token` authenticates on the daemon: a private lookup that is not refused with 401.
    static func authenticates(_ token: String, at endpoint: Endpoint) throws -> Bool {
        let reply = try exchange(endpoint, post("/database/1/c/e/private/records/lookup",
                                                #"{"records":[{"recordName":"nothing"}]}"#,
                                                headers: "Authorization: Bearer \(token)\r\n"))
        return reply.hasPrefix("HTTP/1.1 200")
    }

    @Test("SIGKILL while users register: every user that got a token is there after the restart, names stay taken")
    func registrationsSurviveACrash() async throws {
        let dir = NSTemporaryDirectory() + "zonertc-register-crash-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try DaemonProcess(arguments: ["--data", dir])
        final class Progress: Sendable {
            let acknowledged = Mutex<[(name: String, token: String)]>([])
            let killed = Atomic<Bool>(false)
        }
        let progress = Progress()
        await withTaskGroup(of: Void.self) { group in
            for w in 0..<8 {
                group.addTask {
                    for i in 0..<500 {
                        let name = "crash-\(w)-\(i)"
                        guard let token = try? await RemoteStoreClient.register(userName: name, at: daemon.endpoint)
                        else { return }
                        let count = progress.acknowledged.withLock { $0.append((name, token)); return $0.count }
                        if count >= 200, !progress.killed.exchange(true, ordering: .sequentiallyConsistent) {
                            daemon.kill(SIGKILL)
                        }
                    }
                }
            }
        }
        let users = progress.acknowledged.withLock { $0 }
        let killed = progress.killed.load(ordering: .sequentiallyConsistent)
        #expect(users.count >= 200)
        #expect(killed)

        let restarted = try DaemonProcess(arguments: ["--data", dir])
        defer { restarted.kill(SIGTERM) }
        let lost = try users.filter { try !Self.authenticates($0.token, at: restarted.endpoint) }
        #expect(lost.isEmpty, "\(lost.count) of \(users.count) acknowledged users lost, e.g. \(lost.prefix(3).map(\.name))")
        // Their names are still taken: registering one again is refused, its token not handed out.
        let again = try Self.exchange(restarted.endpoint, Self.post("/auth/register", #"{"userName":"crash-0-0"}"#))
        #expect(again.hasPrefix("HTTP/1.1 409"), "\(again)")
        #expect(try await RemoteStoreClient.register(userName: "after-crash", at: restarted.endpoint).count == 64)
    }

    @Test("a data directory an earlier version left (users.json) serves its users with their tokens, and new ones")
    func upgradeFromUsersJSON() async throws {
        let dir = NSTemporaryDirectory() + "zonertc-register-upgrade-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // What earlier daemons wrote: every user and its token, a pretty-printed JSON object, mode 0600.
        let old = ["alice": String(repeating: "a1", count: 32), "bob.b": String(repeating: "b2", count: 32)]
        let data = try JSONSerialization.data(withJSONObject: old, options: [.sortedKeys, .prettyPrinted])
        #expect(FileManager.default.createFile(atPath: "\(dir)/users.json", contents: data,
                                               attributes: [.posixPermissions: 0o600]))

        var daemon = try DaemonProcess(arguments: ["--data", dir])
        for (name, token) in old {
            #expect(try Self.authenticates(token, at: daemon.endpoint), "\(name)'s token from users.json")
        }
        let taken = try Self.exchange(daemon.endpoint, Self.post("/auth/register", #"{"userName":"alice"}"#))
        #expect(taken.hasPrefix("HTTP/1.1 409"), "\(taken)")
        let carol = try await RemoteStoreClient.register(userName: "carol", at: daemon.endpoint)
        daemon.kill(SIGTERM)

        // The operator's tool reads the same users, then a restarted daemon has them all.
        let added = try ZonertcProcess.run(["store", "user", "add", "bob.b", "--data", dir])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == old["bob.b"])
        daemon = try DaemonProcess(arguments: ["--data", dir])
        defer { daemon.kill(SIGTERM) }
        for token in Array(old.values) + [carol] { #expect(try Self.authenticates(token, at: daemon.endpoint)) }
    }
}

/// `zonertc peer --token-file`: the first run registers and keeps the token (0600), the next reuses it.
@Suite("zonertc peer token files")
struct PeerTokenFileTests {
    @Test("a second run of the same user reuses its token file; without one it is told to pass its token")
    func tokenFileReused() throws {
        let dir = NSTemporaryDirectory() + "zonertc-tokenfile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try DaemonProcess(arguments: ["--memory"])
        defer { daemon.kill(SIGTERM) }
        let url = "http://\(daemon.endpoint)"
        let file = "\(dir)/alice.token"
        // Nobody joins: each run ends at its connect timeout, after using the store.
        func peer(_ extra: [String]) throws -> ZonertcProcess.Output {
            try ZonertcProcess.run(["peer", "--store", url, "--room", "room_tok00001", "--me", "alice",
                                    "--remote", "bob", "--owner", "--connect-timeout", "1s"] + extra)
        }
        let first = try peer(["--token-file", file])
        #expect(!first.stderr.contains("cannot use the store"), "\(first.stderr)")
        var info = stat()
        #expect(stat(file, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let token = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.count == 64)
        let second = try peer(["--token-file", file])
        #expect(!second.stderr.contains("cannot use the store"), "\(second.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains(token))
        // Without a token, registering alice again is refused and the peer says what to do.
        let bare = try peer([])
        #expect(bare.status == 1)
        #expect(bare.stderr.contains("already registered") && bare.stderr.contains("--token-file"), "\(bare.stderr)")
        // A token file others may read is refused.
        chmod(file, 0o644)
        let open = try peer(["--token-file", file])
        #expect(open.status == 1 && open.stderr.contains("chmod 600"), "\(open.stderr)")
    }

    /// A peer whose store refuses it exits at once, while its DTLS warm-up thread may still be
    /// inside OpenSSL: before the fix, OpenSSL's exit handler freed its locks under that thread
    /// and about one run in four crashed (SIGSEGV) after printing its error. Twelve runs.
    @Test("a peer that fails early exits with status 1 and its message, never a crash")
    func earlyFailureNeverCrashes() throws {
        let dir = NSTemporaryDirectory() + "zonertc-tokenfile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try DaemonProcess(arguments: ["--memory"])
        defer { daemon.kill(SIGTERM) }
        let file = "\(dir)/alice.token"
        let arguments = ["peer", "--store", "http://\(daemon.endpoint)", "--room", "room_tok00002", "--me", "alice",
                         "--remote", "bob", "--owner", "--connect-timeout", "1s", "--token-file", file]
        _ = try ZonertcProcess.run(arguments)
        chmod(file, 0o644)
        for run in 0..<12 {
            let refused = try ZonertcProcess.run(arguments)
            #expect(refused.status == 1 && refused.stderr.contains("chmod 600"), "run \(run): \(refused.stderr)")
            #expect(!refused.stderr.contains("crashed"), "run \(run): \(refused.stderr)")
        }
    }
}
