import Foundation
import Media
import RecordStore
import ZoneCore

/// `zonertc bench signaling`: call convergence with real processes against a real store daemon,
/// per push profile and sync strategy — the measured counterpart of `zonertc sim converge`.
enum BenchSignalingCommand {
    static let spec = CommandSpec(
        path: ["bench", "signaling"],
        summary: "Measure call convergence with real peer processes against a real store daemon.",
        options: [
            .value("--strategies", "LIST", "sync strategies to compare", default: "push,poll-token,poll-fullscan,hybrid"),
            .value("--profiles", "LIST", "store daemon push profiles (lan, cloudkit, custom:…; ';' between customs)",
                   default: "lan,cloudkit"),
            .value("--calls", "N", "calls per strategy and profile", default: "10"),
            .value("--hold", "DURATION", "how long each call stays up after connecting", default: "300ms"),
            .value("--timeout", "DURATION", "a call not connected by then counts as a failure", default: "30s"),
            .value("--csv", "FILE", "also write one row per call"),
            .value("--postgres", "URL", "run the daemons on this PostgreSQL database instead of in memory"),
            .value("--daemons", "N", "daemons on --postgres; each call's two peers use different ones", default: "1"),
            .value("--peers", "N", "group calls of N members (2–5) in one room's mesh instead of calls of two"),
            .flag("--json", "print the results as one JSON object"),
        ],
        discussion: """
            For each push profile a `zonertc store serve` runs on a free loopback port (in memory); for each
            strategy, --calls calls run one after another, each as two `zonertc peer` processes in a new room.
            Convergence is the later of the two peers' ICE-connected times, each from its own call start
            (after room setup). Prints a markdown table; a progress line goes to stderr on a terminal.
            With --postgres URL --daemons N, N daemons serve that database (build with --traits PostgreSQL);
            the owner signals through the first and the joiner through the second, as users created for the run.
            With --peers N each call is a group call: N `zonertc peer`s, each prepared first (store, room,
            sockets, DTLS: `peer --join-at stdin`), join one room's mesh at one moment given to all, each
            sending a 5-frame clip to every other at full speed; convergence is the time until the slowest
            member had a frame from every other (each from its own join), store requests count all N peers;
            a member leaves once its media is done (--hold does not apply).
            """,
        run: run)

    struct CallResult: Codable {
        /// Members of a group call; nil: a call of two (`zonertc peer --remote`).
        var peers: Int?
        var profile: String
        var strategy: String
        var call: Int
        var ok: Bool
        var convergenceMs: Double?
        var signalingCompleteMs: Double?
        var storeRequests: Int?
        var recordsFetched: Int?
        var reason: String?
    }

    struct Row: Codable {
        var peers: Int?
        var profile: String
        var strategy: String
        var calls: Int
        var failures: Int
        var p50Ms: Double?
        var p90Ms: Double?
        var p99Ms: Double?
        var maxMs: Double?
        var signalingP50Ms: Double?
        var storeRequestsPerCall: Double?
        var recordsFetchedPerCall: Double?
    }

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        func list(_ name: String) -> [String] {
            (args.string(name) ?? "").split(separator: name == "--profiles" ? (args.string(name)!.contains(";") ? ";" : ",") : ",")
                .map(String.init).filter { !$0.isEmpty }
        }
        let strategies = list("--strategies")
        for s in strategies where !["push", "poll-token", "poll-fullscan", "hybrid", "legacy"].contains(s) {
            throw UsageError(message: "--strategies: unknown strategy '\(s)'", command: spec)
        }
        let profiles = list("--profiles")
        guard !strategies.isEmpty, !profiles.isEmpty else {
            throw UsageError(message: "give at least one strategy and one profile", command: spec)
        }
        let calls = try args.int("--calls", in: 1...10_000) ?? 10
        func duration(_ name: String) throws -> Duration {
            let text = args.string(name)!
            do { return try PushProfileDuration.parse(text) } catch {
                throw UsageError(message: "\(name) \(text): \(error)", command: spec)
            }
        }
        let hold = try duration("--hold")
        let timeout = try duration("--timeout")
        let json = args.has("--json")
        let postgres = args.string("--postgres")
        let meshPeers = try args.int("--peers", in: 2...5)
        let daemonCount = try args.int("--daemons", in: 1...16) ?? 1
        if daemonCount > 1 && postgres == nil {
            throw UsageError(message: "--daemons needs --postgres: daemons share only a database", command: spec)
        }
        // On PostgreSQL a user name is taken once: this run's own users, with their tokens.
        var identities = Array(MeshCallPlan.names.prefix(meshPeers ?? 2)).map { (name: $0, token: [String]()) }
        if let postgres {
            for i in identities.indices {
                identities[i].name += "-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
                identities[i].token = ["--token", try await PostgresOption.addUser(identities[i].name, url: postgres,
                                                                                  spec: spec)]
            }
        }
        let progress = isatty(STDERR_FILENO) == 1 && !json
        let directory = NSTemporaryDirectory() + "zonertc-bench-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = "\(directory)/clip.y4m"
        if meshPeers != nil { _ = FileManager.default.createFile(atPath: clip, contents: Data(BenchClip.y4m())) }

        var results: [CallResult] = []
        let total = profiles.count * strategies.count * calls
        for profile in profiles {
            var stores: [ChildProcess] = []
            var urls: [String] = []
            for d in 0..<daemonCount {
                let backend = postgres.map { ["--postgres", $0] } ?? ["--memory"]
                let store: ChildProcess
                do {
                    store = try ChildProcess(name: "store\(d)", arguments: [
                        "store", "serve", "--listen", "127.0.0.1:0", "--push-profile", profile,
                    ] + backend, directory: directory)
                } catch {
                    Terminal.error("zonertc bench signaling: cannot start the store daemon: \(error)")
                    for s in stores { await s.stop() }
                    return 1
                }
                stores.append(store)
                guard let url = await store.storeURL() else {
                    Terminal.error("zonertc bench signaling: the store daemon did not start (\(profile)): \(store.stderr)")
                    for s in stores { await s.stop() }
                    return 1
                }
                urls.append(String(url))
            }
            // Every call of this profile uses the same two users: on PostgreSQL this run's own, made
            // above; otherwise registered on this profile's new in-memory daemon (earlier token files
            // are stale), each peer handed its token file.
            var tokenArguments = identities.map(\.token)
            if postgres == nil {
                do {
                    let files = try await TokenFile.register(identities.map(\.name), storeURL: urls[0],
                                                             directory: directory, newStore: true)
                    tokenArguments = identities.map { ["--token-file", files[$0.name]!] }
                } catch {
                    Terminal.error("zonertc bench signaling: cannot register the peers' users: \(error)")
                    for s in stores { await s.stop() }
                    return 1
                }
            }
            for strategy in strategies {
                for i in 0..<calls {
                    let room = CallWorkspace.newRoomName()
                    let common = ["peer", "--room", room, "--sync", strategy, "--json",
                                  "--duration", "\(Int(hold.milliseconds))ms",
                                  "--connect-timeout", "\(Int(timeout.milliseconds))ms", "--seed", "\(i + 1)"]
                    let result: CallResult
                    if let meshPeers {
                        result = await meshCall(i, peers: meshPeers, room: room, strategy: strategy, profile: profile,
                                                urls: urls, identities: identities.map(\.name),
                                                tokens: tokenArguments, clip: clip, timeout: timeout,
                                                directory: directory)
                    } else {
                        result = await callOfTwo(i, common: common, profile: profile, strategy: strategy, urls: urls,
                                                 identities: identities.map(\.name), tokens: tokenArguments,
                                                 timeout: timeout, directory: directory)
                    }
                    results.append(result)
                    if progress {
                        FileHandle.standardError.write(Data(
                            "\r\u{1B}[2K[\(results.count)/\(total)] \(profile) \(strategy) call \(i + 1)/\(calls)".utf8))
                    }
                }
            }
            for s in stores { await s.stop() }
        }
        if progress { FileHandle.standardError.write(Data("\n".utf8)) }

        var rows: [Row] = []
        for profile in profiles {
            for strategy in strategies {
                let mine = results.filter { $0.profile == profile && $0.strategy == strategy }
                let times = mine.compactMap(\.convergenceMs).sorted()
                let ok = mine.filter(\.ok)
                let sig = ok.compactMap(\.signalingCompleteMs).sorted()
                rows.append(Row(
                    peers: meshPeers, profile: profile, strategy: strategy, calls: mine.count, failures: mine.count - ok.count,
                    p50Ms: percentile(times, 0.5), p90Ms: percentile(times, 0.9), p99Ms: percentile(times, 0.99), maxMs: times.last,
                    signalingP50Ms: percentile(sig, 0.5),
                    storeRequestsPerCall: ok.isEmpty ? nil : Double(ok.compactMap(\.storeRequests).reduce(0, +)) / Double(ok.count),
                    recordsFetchedPerCall: ok.isEmpty ? nil : Double(ok.compactMap(\.recordsFetched).reduce(0, +)) / Double(ok.count)))
            }
        }
        if let csv = args.string("--csv") {
            var text = "peers,profile,strategy,call,ok,convergence_ms,signaling_complete_ms,store_requests,records_fetched,reason\n"
            for r in results {
                text += "\(r.peers.map(String.init) ?? ""),\(r.profile),\(r.strategy),\(r.call),\(r.ok),\(r.convergenceMs.map { String($0) } ?? ""),"
                    + "\(r.signalingCompleteMs.map { String($0) } ?? ""),\(r.storeRequests.map(String.init) ?? ""),"
                    + "\(r.recordsFetched.map(String.init) ?? ""),\"\(r.reason ?? "")\"\n"
            }
            try? text.write(toFile: csv, atomically: true, encoding: .utf8)
        }
        if json {
            struct Report: Codable { var rows: [Row]; var calls: [CallResult] }
            print((try? Terminal.json(Report(rows: rows, calls: results))) ?? "{}")
        } else {
            func f(_ v: Double?) -> String { v.map { String(format: "%.1f", $0) } ?? "—" }
            print("| members | profile | strategy | calls | failures | p50 ms | p90 ms | p99 ms | max ms | signaling p50 ms | store requests/call | records fetched/call |")
            print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            for r in rows {
                print("| \(r.peers.map { "\($0) (mesh)" } ?? "2") | \(r.profile) | \(r.strategy) | \(r.calls) | \(r.failures) | \(f(r.p50Ms)) | \(f(r.p90Ms)) | "
                      + "\(f(r.p99Ms)) | \(f(r.maxMs)) | \(f(r.signalingP50Ms)) | \(f(r.storeRequestsPerCall)) | "
                      + "\(f(r.recordsFetchedPerCall)) |")
            }
            for r in results where !r.ok {
                Terminal.error("failed: \(r.profile) \(r.strategy) call \(r.call + 1): \(r.reason ?? "?")")
            }
        }
        return results.allSatisfy(\.ok) ? 0 : 1
    }

    /// One call of two: the owner and the joiner, each `zonertc peer --remote` the other; convergence is the
    /// later of their ICE-connected times, each from its own start.
    static func callOfTwo(_ i: Int, common: [String], profile: String, strategy: String, urls: [String],
                          identities: [String], tokens: [[String]], timeout: Duration,
                          directory: String) async -> CallResult {
        var result = CallResult(profile: profile, strategy: strategy, call: i, ok: false)
        do {
            let (alice, bob) = (identities[0], identities[1])
            let a = try ChildProcess(name: "a\(i)", arguments: common + [
                "--store", urls[0], "--me", alice, "--remote", bob, "--owner"] + tokens[0], directory: directory)
            let b = try ChildProcess(name: "b\(i)", arguments: common + [
                "--store", urls[1 % urls.count], "--me", bob, "--remote", alice] + tokens[1], directory: directory)
            let sa = await a.wait(timeout: timeout + .seconds(10))
            let sb = await b.wait(timeout: timeout + .seconds(10))
            if sa == nil { await a.stop() }
            if sb == nil { await b.stop() }
            let summaries = [a, b].map { PeerSummary(lastLineOf: $0.stdout) }
            if sa == 0, sb == 0, let x = summaries[0], let y = summaries[1],
               let ca = x.iceConnectedMs, let cb = y.iceConnectedMs {
                result.ok = true
                result.convergenceMs = max(ca, cb)
                result.signalingCompleteMs = max(x.signalingCompleteMs ?? 0, y.signalingCompleteMs ?? 0)
                result.storeRequests = (x.storeRequests ?? 0) + (y.storeRequests ?? 0)
                result.recordsFetched = (x.recordsFetched ?? 0) + (y.recordsFetched ?? 0)
            } else {
                result.reason = summaries.compactMap { $0?.reason }.first
                    ?? "exit \(sa.map(String.init) ?? "timeout")/\(sb.map(String.init) ?? "timeout")"
            }
        } catch {
            result.reason = "cannot start the peers: \(error)"
        }
        return result
    }

    /// One group call: `peers` `zonertc peer`s in `room`'s mesh, each prepared (`--join-at stdin`: store, room,
    /// sockets, DTLS) and then all released at one moment (the first owns the room; with several
    /// daemons member k uses daemon k mod N), each sending `clip` at full speed to every other and leaving once
    /// the media with all of them is done. Convergence: the slowest member's time to a frame from every other,
    /// from its own join; requests and records fetched: all members' together.
    static func meshCall(_ i: Int, peers: Int, room: String, strategy: String, profile: String, urls: [String],
                         identities: [String], tokens: [[String]], clip: String, timeout: Duration,
                         directory: String) async -> CallResult {
        var result = CallResult(peers: peers, profile: profile, strategy: strategy, call: i, ok: false)
        let ms = "\(Int(timeout.milliseconds))ms"
        var children: [ChildProcess] = []
        for (k, name) in identities.prefix(peers).enumerated() {
            let role = k == 0 ? ["--owner"] : ["--room-owner", identities[0]]
            let arguments = ["peer", "--store", urls[k % urls.count], "--room", room, "--me", name, "--sync", strategy,
                             "--json", "--peers", String(peers), "--send", clip, "--pace", "max",
                             "--record", "\(directory)/\(room)/\(name)", "--connect-timeout", ms,
                             "--media-timeout", ms, "--seed", "\(i * 8 + k + 1)", "--join-at", "stdin"] + role + tokens[k]
            do {
                children.append(try ChildProcess(name: "\(name)\(i)", arguments: arguments, directory: directory,
                                                 input: true))
            } catch {
                for child in children { await child.stop() }
                result.reason = "cannot start \(name): \(error)"
                return result
            }
        }
        // Released together once all are prepared, as `zonertc call --peers N` does: each member's time runs from
        // one shared join, not from a start spread over the others' process launches.
        await MeshCallPlan.joinTogether(children, limit: timeout)
        let statuses = await CallWorkspace.waitForPeers(children, limit: timeout + .seconds(10))
        for (child, status) in zip(children, statuses) where status == nil { await child.stop() }
        let summaries = children.map { MeshPeerSummary(lastLineOf: $0.stdout) }
        try? FileManager.default.removeItem(atPath: "\(directory)/\(room)")
        let times = summaries.compactMap { $0?.allPairsMs }
        guard statuses.allSatisfy({ $0 == 0 }), times.count == peers else {
            let failed = zip(identities, zip(statuses, summaries)).first { $0.1.0 != 0 || $0.1.1?.allPairsMs == nil }
            result.reason = failed.map { name, outcome in
                "\(name): " + (outcome.1?.reason ?? outcome.0.map { "exit \($0)" } ?? "did not end within \(timeout)")
            }
            return result
        }
        result.ok = true
        result.convergenceMs = times.max()
        result.storeRequests = summaries.compactMap { $0?.storeRequests }.reduce(0, +)
        result.recordsFetched = summaries.compactMap { $0?.recordsFetched }.reduce(0, +)
        return result
    }
}

/// The clip every member of a benchmarked group call sends: 5 frames of 32×24 Y4M, made here so the
/// benchmark needs no file of the repository.
enum BenchClip {
    static func y4m(frames: Int = 5, width: Int = 32, height: Int = 24) -> [UInt8] {
        let size = width * height * 3 / 2
        let clip = (0..<frames).map { frame in
            VideoFrame(bytes: (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ frame &* 31) }, pts: Int64(frame))
        }
        return Y4MWriter.write(Y4MFile(header: Y4MHeader(width: width, height: height), frames: clip))
    }
}

/// Durations as the push profiles write them (`300ms`, `2s`, `250us`).
enum PushProfileDuration {
    static func parse(_ text: String) throws -> Duration { try PushProfile.parseDuration(text) }
}
