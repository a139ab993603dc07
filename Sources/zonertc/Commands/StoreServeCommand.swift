import Foundation
import RecordStore
import StoreServer
import ZoneCore

/// `zonertc store serve`: the record store over HTTP, until SIGINT or SIGTERM.
enum StoreServeCommand {
    static let spec = CommandSpec(
        path: ["store", "serve"],
        summary: "Serve the record store over HTTP in the shape of CloudKit Web Services, with push streams.",
        options: [
            .value("--listen", "HOST:PORT", "address to listen on (port 0: any free port)", default: "127.0.0.1:8470"),
            .value("--data", "DIR", "data directory (journal, snapshot, users.log, api-tokens); "
                   + "or --postgres, or --memory"),
            .value("--postgres", "URL", PostgresOption.help + "; several daemons may serve one"),
            .flag("--memory", "keep everything in memory (nothing survives a restart)"),
            .value("--fsync", "POLICY", "always, batch or none", default: "batch"),
            .value("--group-commit-delay", "DURATION", "with --postgres: how long a small batch of writes waits "
                   + "for writes expected soon before it commits (0: never waits)", default: "800us"),
            .value("--group-commit-size", "N", "with --postgres: a batch this large commits at once", default: "8"),
            .value("--push-profile", "PROFILE", "lan, cloudkit, or custom:key=value,… (docs/STORE.md)", default: "lan"),
            .value("--seed", "N", "seed for push delivery and injected errors", default: "1"),
            .value("--throttle", "POLICY", "off, cloudkit (≈40 requests/s per client), or "
                   + "rate=N,busy=P,unavailable=P,limited=P", default: "off"),
            .value("--token-retention", "DURATION", "how long change tokens stay valid", default: "7d"),
            .value("--max-connections", "N", "connections served at once; when full, the longest-idle connection "
                   + "makes room, else 503", default: "1024"),
            .value("--max-connections-per-address", "N", "connections one client address may hold", default: "256"),
            .value("--max-requests-in-flight", "N", "requests answered at once; past it a request gets 503 "
                   + "TRY_AGAIN_LATER with retryAfter at once, and open push streams go on", default: "10000"),
            .value("--summary-interval", "DURATION", "how often a summary line is logged at info while anything "
                   + "happens (0: never)", default: "60s"),
            .value("--max-devices-per-user", "N", "devices one user may register for push; more: BAD_REQUEST",
                   default: "64"),
            .value("--api-token", "TOKEN", "an API token of the container (CloudKit's ckAPIToken; 16 to 256 of "
                   + "A-Z a-z 0-9 - . _ ~); remembered in --data or the database, so later starts accept it too; "
                   + "repeatable", repeatable: true),
            .value("--server-key", "KEYID=PEM-FILE", "a server-to-server key (ECDSA P-256, public or private PEM): "
                   + "requests signed with it (X-Apple-CloudKit-Request-*) act as --server-key-user; needs a build "
                   + "with the WebRTC trait (OpenSSL); repeatable", repeatable: true),
            .value("--server-key-user", "NAME", "the user that --server-key requests act as"),
            .value("--webcourier-timeout", "DURATION", "how long a web client's long-poll on its webcourierURL "
                   + "waits for a notification before it answers 204 and the client polls again", default: "30s"),
            .flag("--allow-register", "allow POST /auth/register (on by default when listening on loopback)"),
            .flag("--no-register", "refuse POST /auth/register even on loopback"),
        ],
        discussion: """
            Prints one line when it listens: `zonertc store: listening on http://HOST:PORT …`.
            Create users with `zonertc store user add NAME --data DIR`, or register them over HTTP on loopback.
            Registration creates new users only: an existing name gets EXISTS and no token.
            CloudKit web clients send ?ckAPIToken=A&ckWebAuthToken=T: A must be an --api-token (given now or at an
            earlier start); T is a user's token, which the sign-in page /auth/signin hands back (docs/CLOUDKIT.md).
            Stops cleanly on SIGINT or SIGTERM: the journal is flushed and push streams are ended; if that takes
            longer than 10 s it exits anyway (status 1), since every acknowledged write is already durable.
            Per-connection events are logged at debug; log lines the output cannot take are dropped and counted.
            Raises its open-file limit to the hard limit, so --max-connections beyond 1024 can be served.
            """,
        run: run)

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        let listen: Endpoint
        do { listen = try Endpoint(parsing: try args.required("--listen")) } catch let e as EndpointParseError {
            throw UsageError(message: "--listen: \(e)", command: spec)
        }
        let memory = args.has("--memory")
        let data = args.string("--data")
        let postgres = args.string("--postgres")
        switch [memory, data != nil, postgres != nil].filter({ $0 }).count {
        case 0: throw UsageError(message: "give --data DIR, --postgres URL or --memory", command: spec)
        case 1: break
        default: throw UsageError(message: "--data, --postgres and --memory exclude each other", command: spec)
        }
        if postgres != nil && args.strings("--fsync").count > 0 {
            throw UsageError(message: "--fsync is the journal's: PostgreSQL commits durably on its own", command: spec)
        }
        if postgres == nil && !(args.strings("--group-commit-delay") + args.strings("--group-commit-size")).isEmpty {
            throw UsageError(message: "--group-commit-delay and --group-commit-size are for --postgres: "
                             + "the journal groups its writes on its own", command: spec)
        }
        let groupCommit = try PostgresOption.groupCommit(args, spec: spec)
        var options = EmbeddedStore.Options(directory: data)
        options.fsync = try args.choice("--fsync", as: FsyncPolicy.self) ?? .batch
        do { options.pushProfile = try PushProfile.parse(args.string("--push-profile") ?? "lan") } catch {
            throw UsageError(message: "--push-profile: \(error)", command: spec)
        }
        options.pushSeed = try args.int("--seed", in: 0...UInt64.max) ?? 1
        options.configuration.throttle = try parseThrottle(args.string("--throttle") ?? "off", seed: options.pushSeed)
        do { options.configuration.tokenRetention = try parseLongDuration(args.string("--token-retention") ?? "7d") } catch {
            throw UsageError(message: "--token-retention: \(error)", command: spec)
        }
        options.configuration.maxDevicesPerUser = try args.int("--max-devices-per-user", in: 1...1_000_000) ?? 64
        if args.has("--allow-register") && args.has("--no-register") {
            throw UsageError(message: "--allow-register and --no-register exclude each other", command: spec)
        }
        let allowRegister = args.has("--allow-register") || (!args.has("--no-register") && listen.address.isLoopback)
        var daemonOptions = StoreDaemon.Options(listen: listen)
        daemonOptions.maxConnections = try args.int("--max-connections", in: 1...100_000) ?? 1024
        daemonOptions.maxConnectionsPerAddress = try args.int("--max-connections-per-address", in: 1...100_000) ?? 256
        daemonOptions.maxRequestsInFlight = try args.int("--max-requests-in-flight", in: 1...1_000_000) ?? 10_000
        do {
            let text = args.string("--summary-interval") ?? "60s"
            let every = text == "0" ? Duration.zero : try PushProfile.parseDuration(text)
            daemonOptions.summaryInterval = every > .zero ? every : nil
        } catch {
            throw UsageError(message: "--summary-interval: \(error)", command: spec)
        }
        let apiTokens = args.strings("--api-token")
        for token in apiTokens {
            if let problem = APITokens.problem(token) {
                throw UsageError(message: "--api-token: \(problem)", command: spec)
            }
        }
        let serverKeys = try loadServerKeys(args)
        var courier = Webcourier.Options()
        do {
            courier.timeout = try PushProfile.parseDuration(args.string("--webcourier-timeout") ?? "30s")
        } catch {
            throw UsageError(message: "--webcourier-timeout: \(error)", command: spec)
        }
        guard courier.timeout > .zero && courier.timeout <= .seconds(300) else {
            throw UsageError(message: "--webcourier-timeout: between 1ms and 300s", command: spec)
        }
        let descriptors = FileLimit.raiseToHardLimit()
        if descriptors < daemonOptions.maxConnections + 64 {
            Logger(component: "store-serve").warning(
                "--max-connections \(daemonOptions.maxConnections) is above what the open-file limit allows",
                ["limit": "\(descriptors)"])
        }

        let store: any StoreBackend
        let users: any UserDirectory
        let declared: [String]
        let assets: (any AssetStorage)?
        var facts: String
        if let postgres {
            (store, users) = try await PostgresOption.open(url: postgres, configuration: options.configuration,
                                                           pushProfile: options.pushProfile,
                                                           pushSeed: options.pushSeed, groupCommit: groupCommit,
                                                           spec: spec)
            facts = "postgres \(postgres), push \(options.pushProfile.name), group commit \(groupCommit.description)"
            declared = try await PostgresOption.rememberAPITokens(apiTokens, users: users, spec: spec)
            assets = PostgresOption.assets(of: store)
        } else {
            let embedded = try EmbeddedStore(options: options)
            facts = "data \(data ?? "in memory"), fsync \(options.fsync.rawValue), push \(options.pushProfile.name)"
            if let r = embedded.recovered, r.entriesReplayed > 0 || r.snapshotBytes > 0 {
                facts += ", recovered \(r.entriesReplayed) journal entries"
                if r.tornBytesDropped > 0 { facts += " (dropped a torn tail of \(r.tornBytesDropped) bytes)" }
            }
            store = embedded
            users = try UserRegistry(directory: data)
            declared = try data.map { try APITokenFile.remember(apiTokens, in: $0) } ?? apiTokens
            assets = try data.map { try AssetFiles(directory: "\($0)/assets") } ?? AssetFiles.temporary()
        }
        if let data {
            // Uploads cut short by a crash: their spool files were never acknowledged.
            daemonOptions.spoolDirectory = try BodySpoolDirectory.prepare("\(data)/assets-spool")
        }
        let api = StoreAPI(store: store, users: users, allowRegister: allowRegister,
                           apiTokens: APITokens(declared), serverKeys: serverKeys, webcourier: courier,
                           assets: assets)
        // The webcourier learns which web tokens were registered before this start (they are owed a
        // catch-up at their first poll) before any request can register one.
        await api.webcourier.ready()
        // The asset URLs' key is read once, before the first request rather than by it.
        try await api.prepareAssetSigning()
        let daemon = try StoreDaemon(api: api, options: daemonOptions)
        try daemon.start()
        // Uploads no record took, and files of records deleted since, go after a day.
        let sweeper = Task {
            while !Task.isCancelled {
                let removed = try? await api.removeUnreferencedAssets(
                    keptBefore: Date().addingTimeInterval(-StoreAPI.unreferencedAssetGrace))
                if let removed, removed > 0 {
                    Logger(component: "store-serve").info("unreferenced asset files removed", ["count": "\(removed)"])
                }
                try? await Task.sleep(for: .seconds(3600))
            }
        }
        if allowRegister { facts += ", registration open" }
        // How many, never which: a token is not logged.
        if !declared.isEmpty { facts += ", \(declared.count) API token\(declared.count == 1 ? "" : "s")" }
        print("zonertc store: listening on http://\(daemon.endpoint) (\(facts))")
        fflush(nil)
        let signal = await waitForTerminationSignal()
        // Whatever holds the stop up (a stalled log reader, a stuck store), the process ends in time:
        // every write it acknowledged is durable already.
        let watchdog = StopWatchdog(limit: .seconds(10), what: "zonertc store")
        Terminal.error("zonertc store: \(signal), stopping")
        sweeper.cancel()
        let stopped = daemon.stop(within: .seconds(5))
        store.close()
        // The last line is written before the watchdog is disarmed: on a standard error nobody reads
        // (a full pipe) the write blocks, and the watchdog must still end the process.
        Terminal.error(stopped ? "zonertc store: stopped" : "zonertc store: stopped (connections were cut)")
        watchdog.disarm()
        return 0
    }

    /// `--server-key KEYID=PEM-FILE` (repeatable) and `--server-key-user NAME`.
    static func loadServerKeys(_ args: ParsedCommand) throws -> ServerKeys {
        let given = args.strings("--server-key")
        let user = args.string("--server-key-user")
        if given.isEmpty {
            if user != nil { throw UsageError(message: "--server-key-user needs --server-key", command: spec) }
            return ServerKeys()
        }
        guard let user, UserRegistry.nameProblem(user) == nil else {
            throw UsageError(message: "--server-key needs --server-key-user NAME (a user name: the user its "
                             + "requests act as)", command: spec)
        }
        var keys: [String: any SignatureVerifier] = [:]
        for text in given {
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 256 else {
                throw UsageError(message: "--server-key: '\(text)' is not KEYID=PEM-FILE", command: spec)
            }
            #if WebRTC
            guard let pem = FileManager.default.contents(atPath: parts[1]) else {
                throw UsageError(message: "--server-key: cannot read \(parts[1])", command: spec)
            }
            do { keys[parts[0]] = try ECDSAP256Verifier(pem: Array(pem)) } catch {
                throw UsageError(message: "--server-key: \(parts[1]): \(error)", command: spec)
            }
            #else
            throw UsageError(message: "--server-key: this zonertc was built without OpenSSL; build it with "
                             + "`swift build --traits WebRTC`", command: spec)
            #endif
        }
        return ServerKeys(keys, user: user)
    }

    static func parseThrottle(_ text: String, seed: UInt64) throws -> ThrottlePolicy {
        switch text {
        case "off": return .off
        case "cloudkit": var p = ThrottlePolicy.cloudkit; p.seed = seed; return p
        default:
            var p = ThrottlePolicy()
            p.seed = seed
            for setting in text.split(separator: ",") {
                let kv = setting.split(separator: "=", maxSplits: 1).map(String.init)
                guard kv.count == 2, let v = Double(kv[1]), v >= 0 else {
                    throw UsageError(message: "--throttle: '\(setting)' is not key=number", command: spec)
                }
                switch kv[0] {
                case "rate": p.requestsPerSecond = v
                case "burst": p.burst = v
                case "busy": p.injectZoneBusy = v
                case "unavailable": p.injectServiceUnavailable = v
                case "limited": p.injectRateLimited = v
                default:
                    throw UsageError(message: "--throttle: unknown setting '\(kv[0])' (rate, burst, busy, unavailable, limited)",
                                     command: spec)
                }
            }
            return p
        }
    }

    /// Durations with day and hour units too: `7d`, `12h`, `30m`, `90s`.
    static func parseLongDuration(_ text: String) throws -> Duration {
        if let d = Int64(text.dropLast()), d > 0 {
            if text.hasSuffix("d") { return .seconds(d * 86_400) }
            if text.hasSuffix("h") { return .seconds(d * 3600) }
        }
        return try PushProfile.parseDuration(text)
    }
}

/// Waits for SIGINT or SIGTERM and says which.
func waitForTerminationSignal() async -> String {
    await withCheckedContinuation { continuation in
        let fired = NSLock()
        nonisolated(unsafe) var done = false
        nonisolated(unsafe) var sources: [DispatchSourceSignal] = []
        for (sig, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                fired.lock()
                defer { fired.unlock() }
                guard !done else { return }
                done = true
                for s in sources { s.cancel() }
                continuation.resume(returning: name)
            }
            source.resume()
            sources.append(source)
        }
    }
}
