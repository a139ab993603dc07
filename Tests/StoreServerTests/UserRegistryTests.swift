import Foundation
import RecordStore
import Synchronization
import Testing
@testable import StoreServer

/// The daemon's users on disk (`users.log`): a registration appends one entry and shares a sync,
/// users survive a reopen, an earlier version's `users.json` is moved in, a torn tail is cut and
/// damage refused, and two registries on one directory (two processes) never give a name twice.
@Suite("User registry on disk")
struct UserRegistryTests {
    /// A fresh data directory, removed when `body` returns.
    func withDirectory(_ body: (String) async throws -> Void) async throws {
        let dir = NSTemporaryDirectory() + "zonertc-users-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try await body(dir)
    }

    func size(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
    }

    @Test("users and their tokens survive a reopen; a name is registered once; the file is private")
    func survivesReopen() async throws {
        try await withDirectory { dir in
            let users = try UserRegistry(directory: dir)
            let alice = try await users.register("alice")
            let bob = try users.add("bob")
            #expect(try users.add("bob") == bob)
            await #expect(throws: UserRegistry.RegistryError.self) { try await users.register("alice") }
            await #expect(throws: UserRegistry.RegistryError.self) { try await users.register("bad name") }
            let again = try UserRegistry(directory: dir)
            #expect(again.user(forToken: alice) == "alice")
            #expect(again.user(forToken: bob) == "bob")
            #expect(again.userNames == ["alice", "bob"])
            let mode = try FileManager.default.attributesOfItem(atPath: "\(dir)/users.log")[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test("the store's own names (the public database's owner, the anonymous reader) are never a user's")
    func reservedNames() throws {
        let users = try UserRegistry(directory: nil)
        for name in [ReservedNames.publicOwner, ReservedNames.anonymousReader] {
            #expect(UserRegistry.nameProblem(name) != nil)
            #expect(throws: UserRegistry.RegistryError.self) { try users.add(name) }
        }
        #expect(UserRegistry.nameProblem("__other__") == nil)
    }

    @Test("registering appends one entry of the same size whatever the number of users, and shares syncs")
    func registrationIsAnAppend() async throws {
        try await withDirectory { dir in
            let users = try UserRegistry(directory: dir)
            let log = "\(dir)/users.log"
            var sizes: [Int] = [try size(log)]
            for i in 0..<50 {
                _ = try await users.register(String(format: "user-%04d", i))
                sizes.append(try size(log))
            }
            let growth = zip(sizes.dropFirst(), sizes).map { $0 - $1 }
            #expect(Set(growth).count == 1, "each registration added \(Set(growth)) bytes")
            #expect(growth[0] < 128)

            // Registrations made at once share syncs instead of making one each.
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for i in 0..<400 { group.addTask { try await users.register("burst-\(i)") } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(tokens).count == 400)
            let reopened = try UserRegistry(directory: dir)
            for (i, token) in tokens.enumerated() where i % 37 == 0 {
                #expect(reopened.user(forToken: token)?.hasPrefix("burst-") == true)
            }
            #expect(reopened.userNames.count == 450)
        }
    }

    @Test("an earlier version's users.json is moved into the log, tokens unchanged, and removed")
    func legacyUsersJSON() async throws {
        try await withDirectory { dir in
            let legacy = ["alice": String(repeating: "a", count: 64), "bob": String(repeating: "b", count: 64)]
            let data = try JSONSerialization.data(withJSONObject: legacy)
            #expect(FileManager.default.createFile(atPath: "\(dir)/users.json", contents: data))
            let users = try UserRegistry(directory: dir)
            #expect(users.user(forToken: legacy["alice"]!) == "alice")
            #expect(users.user(forToken: legacy["bob"]!) == "bob")
            #expect(!FileManager.default.fileExists(atPath: "\(dir)/users.json"))
            await #expect(throws: UserRegistry.RegistryError.self) { try await users.register("bob") }
            let carol = try await users.register("carol")
            let reopened = try UserRegistry(directory: dir)
            #expect(reopened.user(forToken: legacy["bob"]!) == "bob")
            #expect(reopened.user(forToken: carol) == "carol")
        }
    }

    @Test("a users.json that is not a map of names to tokens is refused, naming the file")
    func badLegacyFile() async throws {
        try await withDirectory { dir in
            #expect(FileManager.default.createFile(atPath: "\(dir)/users.json", contents: Data("[1,2]".utf8)))
            #expect { try UserRegistry(directory: dir) } throws: { "\($0)".contains("users.json") }
        }
    }

    @Test("a torn tail (a crash mid-append) is cut off by the next registration; damage is refused")
    func tornTailAndDamage() async throws {
        try await withDirectory { dir in
            let log = "\(dir)/users.log"
            let first = try await UserRegistry(directory: dir).register("alice")
            let intact = try size(log)
            // Half of an entry, as a crash during its write leaves it.
            var half: [UInt8] = []
            JournalFormat.frame(UserLog.encode(.init(name: "mallory", token: "t")), into: &half)
            let handle = try #require(FileHandle(forWritingAtPath: log))
            handle.seekToEndOfFile()
            handle.write(Data(half.prefix(half.count / 2)))
            try handle.close()

            let users = try UserRegistry(directory: dir)
            #expect(users.user(forToken: first) == "alice")
            let bob = try await users.register("bob")
            let reopened = try UserRegistry(directory: dir)
            #expect(reopened.user(forToken: bob) == "bob")
            #expect(reopened.userNames == ["alice", "bob"])

            // Unreadable bytes with an intact entry after them (alice's entry spoilt, bob's intact): not a
            // torn tail but damage, and cutting it off would lose acknowledged users.
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: log)))
            #expect(bytes.count > intact)
            bytes[UserLog.magic.count + 2] ^= 0xFF
            try Data(bytes).write(to: URL(fileURLWithPath: log))
            #expect { try UserRegistry(directory: dir) } throws: { "\($0)".contains("damaged") }
        }
    }

    @Test("two registries on one directory (two processes): each name goes to one, each sees the other's users")
    func twoWriters() async throws {
        try await withDirectory { dir in
            let a = try UserRegistry(directory: dir)
            let b = try UserRegistry(directory: dir)
            let results = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for i in 0..<200 {
                    let registry = i % 2 == 0 ? a : b
                    group.addTask { (i / 2, try? await registry.register("shared-\(i / 2)")) }
                }
                return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
            }
            for n in 0..<100 {
                let tokens = results.filter { $0.0 == n }.compactMap(\.1)
                #expect(tokens.count == 1, "shared-\(n) was given \(tokens.count) tokens")
                if let token = tokens.first {
                    #expect(a.user(forToken: token) == "shared-\(n)")
                    #expect(b.user(forToken: token) == "shared-\(n)")
                }
            }
            // `store user add` beside a running daemon: the daemon knows the user at its first request.
            let dave = try UserRegistry(directory: dir).add("dave")
            #expect(a.user(forToken: dave) == "dave")
            #expect(a.user(forToken: "not-a-token") == nil)
        }
    }
}
