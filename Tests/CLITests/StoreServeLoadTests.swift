import CSystem
import Foundation
import Glibc
import RecordStore
import StoreServer
import Synchronization
import Testing
import TestSupport
import ZoneCore

/// `zonertc store serve` as a process under load: SIGTERM ends it within a bound, and a log
/// reader that stops reading never stops it serving.
@Suite("zonertc store serve under load")
struct StoreServeLoadTests {
    /// A user with a custom zone and a database subscription, so every save in the zone notifies
    /// each of the user's devices.
    struct Subscriber {
        let client: RemoteStoreClient
        let zone: ZoneID
        let endpoint: Endpoint
        let token: String

        init(_ name: String, at endpoint: Endpoint) async throws {
            token = try await RemoteStoreClient.register(userName: name, at: endpoint)
            self.endpoint = endpoint
            client = RemoteStoreClient(configuration: .init(endpoint: endpoint, token: token), userRecordName: name,
                                       deviceID: "writer")
            zone = ZoneID(zoneName: "Load", ownerName: name)
            _ = try await client.modifyZones(save: [zone], delete: [], scope: .private)
            _ = try await client.modifySubscriptions(save: [Subscription(subscriptionID: "all", kind: .database)],
                                                     delete: [], scope: .private)
        }

        func device(_ id: String) -> RemoteStoreClient {
            RemoteStoreClient(configuration: .init(endpoint: endpoint, token: token),
                              userRecordName: client.userRecordName, deviceID: id)
        }

        /// Saves one record; whether the store acknowledged it.
        func save(_ name: String) async -> Bool {
            let record = Record(recordType: "Note", id: RecordID(recordName: name, zoneID: zone),
                                fields: ["n": .string(name)])
            let request = ModifyRecordsRequest(saves: [record], savePolicy: .allKeys)
            guard let result = try? await client.modifyRecords(request, scope: .private) else { return false }
            if case .saved = result.results.first { return true }
            return false
        }
    }

    @Test("SIGTERM while streams churn and saves notify them: the daemon prints \"stopped\" and is gone within 5 s")
    func sigtermMidLoad() async throws {
        let daemon = try spawnWatched([ZonertcProcess.binary.path, "store", "serve", "--memory",
                                       "--listen", "127.0.0.1:0"])
        defer { if daemon.exitStatus == nil { kill(daemon.pid, SIGKILL); _ = daemon.wait(within: .seconds(5)) } }
        let endpoint = try await offPool { try Self.endpoint(of: daemon) }
        let user = try await Subscriber("loaded", at: endpoint)
        let acknowledged = Tally()
        let enough = DispatchSemaphore(value: 0)
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for w in 0..<4 {
                    group.addTask {
                        var i = 0
                        // Until cancelled, or until the daemon is gone (a failure returns at once:
                        // looping on it would hold a thread of the cooperative pool forever).
                        while !Task.isCancelled {
                            i += 1
                            guard await user.save("w\(w)-\(i)") else { return }
                            if acknowledged.count.add(1, ordering: .relaxed).newValue == 300 { enough.signal() }
                        }
                    }
                }
                // Streams opened and dropped again and again: each close cancels a listener on the loop.
                for s in 0..<4 {
                    group.addTask {
                        var i = 0
                        while !Task.isCancelled {
                            i += 1
                            guard let stream = try? await user.device("churn\(s)-\(i % 8)").notifications() else {
                                return
                            }
                            var iterator = stream.makeAsyncIterator()
                            _ = await iterator.next()
                        }
                    }
                }
            }
        }
        _ = try await offPool { enough.wait(timeout: .now() + 30) }
        let loaded = acknowledged.count.load(ordering: .relaxed)
        #expect(loaded >= 300, "only \(loaded) saves were acknowledged in 30 s")
        kill(daemon.pid, SIGTERM)
        let status = try await offPool { daemon.wait(within: .seconds(5)) }
        load.cancel()
        #expect(status == 0, "the daemon did not end within 5 s of SIGTERM (status \(String(describing: status)))")
        #expect(daemon.stderr.contains("zonertc store: stopped"), "\(daemon.stderr.suffix(2000))")
    }

    @Test("a log reader that stops reading: requests are still answered and pushes delivered")
    func stalledLogReader() async throws {
        let daemon = try StalledOutputDaemon(arguments: ["store", "serve", "--memory", "--listen", "127.0.0.1:0",
                                                         "--log", "debug"])
        defer { daemon.stop() }
        let user = try await Subscriber("chatty", at: daemon.endpoint)
        // Every request writes a debug line: far more than a pipe holds (64 KiB) once nobody reads.
        await withTaskGroup(of: Void.self) { group in
            for w in 0..<4 {
                group.addTask {
                    for i in 0..<500 { _ = await user.save("fill-\(w)-\(i)") }
                }
            }
        }
        let stream = try await user.device("listener").notifications()
        var iterator = stream.makeAsyncIterator()
        let watch = Stopwatch()
        #expect(await user.save("after-the-pipe-filled"))
        let note = await iterator.next()
        #expect(note != nil, "no push after the log pipe filled")
        #expect(watch.elapsed < .seconds(5), "took \(watch.elapsed)")
        let zones = try await user.client.listZones(scope: .private)
        #expect(zones.contains(user.zone))
        // SIGTERM still ends it, though its last lines have nowhere to go.
        kill(daemon.watch.pid, SIGTERM)
        let status = try await offPool { daemon.watch.wait(within: .seconds(15)) }
        #expect(status != nil, "the daemon did not end within 15 s of SIGTERM with its output stalled")
    }

    final class Tally: Sendable {
        let count = Atomic<Int>(0)
    }

    /// The endpoint from the daemon's first line.
    static func endpoint(of daemon: ProcessWatch) throws -> Endpoint {
        var found: Endpoint?
        _ = daemon.wait(within: .seconds(10)) { watch in
            guard let range = watch.stdout.range(of: #"127\.0\.0\.1:\d+"#, options: .regularExpression) else {
                return watch.exitStatus != nil
            }
            found = try? Endpoint(parsing: String(watch.stdout[range]))
            return true
        }
        guard let found else { throw SpawnFailure("the daemon did not say where it listens: \(daemon.stderr)") }
        return found
    }
}

/// A daemon whose stdout and stderr are pipes nobody reads once it has said where it listens.
final class StalledOutputDaemon: @unchecked Sendable {
    let watch: ProcessWatch
    let endpoint: Endpoint
    private let readEnds: [Int32]

    init(arguments: [String]) throws {
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        guard cs_pipe_cloexec(&out) == 0, cs_pipe_cloexec(&err) == 0 else { throw SpawnFailure("pipe") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([ZonertcProcess.binary.path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let r = posix_spawn(&pid, ZonertcProcess.binary.path, &actions, nil, argv, environ)
        close(out[1])
        close(err[1])
        readEnds = [out[0], err[0]]
        guard r == 0 else { throw SpawnFailure("cannot start zonertc: \(String(cString: strerror(r)))") }
        watch = ProcessWatch(pid: pid)
        // Only the first line is read; the pipes are then left to fill.
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(out[0], &byte, 1) == 1 {
            if byte == 10 { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: #"127\.0\.0\.1:\d+"#, options: .regularExpression) else {
            kill(pid, SIGKILL)
            throw SpawnFailure("the daemon said: \(text)")
        }
        endpoint = try Endpoint(parsing: String(text[range]))
    }

    func stop() {
        if watch.exitStatus == nil {
            kill(watch.pid, SIGKILL)
            _ = watch.wait(within: .seconds(5))
        }
        for fd in readEnds { close(fd) }
    }
}
