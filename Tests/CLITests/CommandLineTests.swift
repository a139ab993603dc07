import Foundation
import Testing
import RecordStore
import ZoneCore

/// The command line as a user meets it: help, version, usage errors with exit code 2.
@Suite("zonertc command line")
struct CommandLineTests {
    @Test("--help lists only working commands; --version prints the version")
    func helpAndVersion() throws {
        let help = try ZonertcProcess.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("store inspect"))
        #expect(help.stdout.contains("peer") && help.stdout.contains("call") && help.stdout.contains("bench signaling"))
        let version = try ZonertcProcess.run(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("zonertc "))
        let commandHelp = try ZonertcProcess.run(["help", "store", "inspect"])
        #expect(commandHelp.status == 0 && commandHelp.stdout.contains("--data DIR"))
        #expect(try ZonertcProcess.run(["store", "inspect", "--help"]).stdout == commandHelp.stdout)
    }

    @Test("unknown commands and flags print what was wrong and the usage, exit 2", arguments: [
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["store", "frobnicate"], "unknown command 'store frobnicate'"),
        (["store", "inspect"], "give --data DIR or --postgres URL"),
        (["store", "inspect", "--data"], "--data needs a value"),
        (["store", "inspect", "--data", "x", "--nope"], "unknown option --nope"),
        (["store", "inspect", "--data", "x", "extra"], "unexpected argument 'extra'"),
        (["store", "inspect", "--data", "x", "--data", "y"], "--data given more than once"),
        (["store", "inspect", "--json=yes", "--data", "x"], "--json takes no value"),
        (["--log", "loud", "--version"], "loud"),
        (["help", "nothing"], "no command 'nothing'"),
        (["store", "serve"], "give --data DIR, --postgres URL or --memory"),
        (["store", "serve", "--memory", "--data", "x"], "--data, --postgres and --memory exclude each other"),
        (["store", "serve", "--data", "x", "--postgres", "postgresql:///x"],
         "--data, --postgres and --memory exclude each other"),
        (["store", "user", "add", "bob"], "give --data DIR or --postgres URL"),
        (["store", "inspect", "--data", "x", "--postgres", "postgresql:///x"],
         "--data and --postgres exclude each other"),
        (["store", "serve", "--memory", "--listen", "localhost:80"], "--listen"),
        (["store", "serve", "--memory", "--fsync", "sometimes"], "choose one of always, batch, none"),
        (["store", "serve", "--memory", "--push-profile", "wifi"], "unknown push profile 'wifi'"),
        (["store", "serve", "--memory", "--throttle", "rate=fast"], "--throttle"),
        (["store", "serve", "--memory", "--token-retention", "soon"], "--token-retention"),
        (["store", "serve", "--memory", "--group-commit-delay", "1ms"], "are for --postgres"),
        (["store", "serve", "--postgres", "postgresql:///x", "--group-commit-delay", "soon"],
         "--group-commit-delay: 'soon' is not a duration"),
        (["store", "serve", "--postgres", "postgresql:///x", "--group-commit-delay", "2s"], "at most 1s"),
        (["store", "serve", "--postgres", "postgresql:///x", "--group-commit-size", "0"],
         "--group-commit-size 0: give a whole number from 1"),
        (["store", "user", "add", "--data", "x"], "give the user's NAME"),
        (["relay", "serve", "--user", "u:p", "--batch-wait", "soon"], "--batch-wait: 'soon' is not a duration"),
        (["relay", "serve", "--user", "u:p", "--batch-wait", "20ms"], "--batch-wait 20ms: at most 10ms"),
        (CommandLineTests.peer + ["--record-frames", "60"], "--record-frames needs --record"),
        (CommandLineTests.peer + ["--record", "x.ivf", "--record-frames", "0"],
         "--record-frames 0: give a whole number from 1"),
        (CommandLineTests.peer + ["--media-timeout", "0s"], "--media-timeout must be positive"),
    ])
    func usageErrors(_ arguments: [String], _ message: String) throws {
        let out = try ZonertcProcess.run(arguments)
        #expect(out.status == 2)
        #expect(out.stderr.contains(message), "stderr: \(out.stderr)")
        #expect(out.stderr.contains("usage") || out.stderr.contains("zonertc --help"))
    }

    /// A `zonertc peer` command line that is complete but for what a case adds.
    static let peer = ["peer", "--store", "http://127.0.0.1:9", "--room", "room_usage001", "--me", "a", "--remote", "b"]

    @Test("a run that outlives its limit: killed by its PID, the error says what it printed so far")
    func runIsBounded() throws {
        do {
            let out = try ZonertcProcess.run(["store", "serve", "--memory", "--listen", "127.0.0.1:0"],
                                             limit: .seconds(5))
            Issue.record("the daemon ended by itself: \(out.status) \(out.stderr)")
        } catch let timeout as ZonertcProcess.Timeout {
            #expect(timeout.description.contains("did not end within 5"), "\(timeout)")
            #expect(timeout.stdout.contains("listening on"), "\(timeout)")
            #expect(kill(timeout.pid, 0) == -1 && errno == ESRCH, "PID \(timeout.pid) is still there")
        }
    }

    @Test("no arguments: the overview on stderr, exit 2")
    func noArguments() throws {
        let out = try ZonertcProcess.run([])
        #expect(out.status == 2 && out.stderr.contains("commands:"))
    }

    @Test("store inspect shows zones, counts by type, journal size and tokens, text and JSON")
    func storeInspect() async throws {
        let dir = NSTemporaryDirectory() + "zonertc-cli-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = EmbeddedStore.Options(directory: dir)
        options.automaticPush = false
        let store = try EmbeddedStore(options: options)
        let alice = store.client(user: "alice")
        let room = ZoneID(zoneName: "room_abcd1234")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        try await alice.save([
            Record(recordType: "SignalEnvelope", id: RecordID(recordName: "SE_1", zoneID: room)),
            Record(recordType: "SignalIceChunk", id: RecordID(recordName: "IC_1", zoneID: room)),
            Record(recordType: "SignalIceChunk", id: RecordID(recordName: "IC_2", zoneID: room)),
        ])
        // Inspect works while the store is open (as under a running daemon).
        let text = try ZonertcProcess.run(["store", "inspect", "--data", dir])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("room_abcd1234"))
        #expect(text.stdout.contains("SignalEnvelope=1 SignalIceChunk=2"))
        #expect(text.stdout.contains("journal"))
        let json = try ZonertcProcess.run(["store", "inspect", "--data", dir, "--json"])
        #expect(json.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let zones = object?["zones"] as? [[String: Any]]
        #expect(zones?.first?["records"] as? Int == 3)
        #expect((zones?.first?["lastToken"] as? String)?.isEmpty == false)
        #expect((object?["journalBytes"] as? Int ?? 0) > 0)
        store.close()

        let missing = try ZonertcProcess.run(["store", "inspect", "--data", dir + "-nope"])
        #expect(missing.status == 1 && missing.stderr.contains("no store directory"))
    }
}
