import Foundation
import Harness
import Net
import Signaling
import StoreServer
import Synchronization
import ZoneCore

/// `zonertc bench load`: how many devices one store daemon (or several on PostgreSQL) holds, and
/// how fast their pushes go out when they all save at once or at a steady rate.
enum BenchLoadCommand {
    static let spec = CommandSpec(
        path: ["bench", "load"],
        summary: "Load a store daemon with many devices (push streams, subscriptions, saves) and measure it.",
        options: [
            .value("--devices", "N", "devices, each a user with a zone, a database subscription and a push stream "
                   + "(0: calls only)", default: "1000"),
            .value("--bursts", "N", "rounds in which every device saves once, all at once", default: "1"),
            .value("--rate", "N", "then saves per second, spread over the devices (0: none)", default: "0"),
            .value("--duration", "DURATION", "how long the --rate phase lasts", default: "10s"),
            .value("--recover", "DURATION", "after the --rate phase, saves go on at --recover-rate this long: "
                   + "whether a daemon pushed past its capacity recovers by itself", default: "0s"),
            .value("--recover-rate", "N", "saves per second while recovering (default: a quarter of --rate)"),
            .value("--max-requests-in-flight", "N", "of the daemons started here (their overload bound; "
                   + "store serve's default when not given)"),
            .value("--hold", "DURATION", "how long the streams stay idle before the daemon is measured",
                   default: "2s"),
            .value("--request-connections", "N", "request connections per daemon, shared by the devices",
                   default: "256"),
            .value("--calls", "N", "then calls' signaling, N of them up at once at most (two peers each, no media)",
                   default: "0"),
            .value("--call-rate", "N", "calls started per second (0: all at once)", default: "100"),
            .value("--call-hold", "DURATION", "how long each call stays up after it starts", default: "20s"),
            .value("--lone-calls", "N", "calls made one at a time before the others: the single-call figure",
                   default: "10"),
            .value("--call-sync", "STRATEGY", "how the calls' peers learn records: push, poll-token, "
                   + "poll-fullscan, hybrid", default: "push"),
            .value("--url", "URL", "a running daemon (started with a high --max-connections-per-address); "
                   + "else one is started here"),
            .value("--pid", "PID", "with --url: the daemon's process id, to read its RSS, descriptors and CPU"),
            .value("--postgres", "URL", "start --daemons daemons on this PostgreSQL database"),
            .flag("--journal", "the daemon started here keeps its data in a journal (a temporary --data "
                  + "directory, fsync batch) instead of in memory"),
            .value("--daemons", "N", "daemons to start on --postgres", default: "1"),
            .value("--push-profile", "PROFILE", "push profile of the daemons started here", default: "lan"),
            .value("--timeout", "DURATION", "bound on each phase (setup, streams, deliveries)", default: "120s"),
            .flag("--no-verify", "skip reading every acknowledged save back at the end"),
            .flag("--json", "print the results as one JSON object"),
        ],
        discussion: """
            One process plays every device, on one event loop, over loopback only; its connections leave from
            many 127.x.y.z addresses (100 streams to an address) so the daemon's per-address cap does not bind.
            Each device's saves go to its own zone (8 records, saved over and over, so a long run's data set
            stops growing), so each save notifies exactly one push stream; push latency is from a save's request
            (sent at once, pipelined) to its device's notification. Then --calls: each call is two users in a room
            of their own running the real signaling machines over the HTTP client with push streams, a stand-in
            for ICE and no media; convergence is from both peers' start to both connected, and --lone-calls
            calls made first, one at a time, give the single-call figure of the same run. The daemons' RSS,
            descriptors and CPU time come from /proc. Past a daemon's capacity (a --rate above it, or a low
            --max-requests-in-flight) saves are shed with 503 TRY_AGAIN_LATER and counted; --recover then shows
            whether the daemon serves again by itself. A progress line goes to stderr on a terminal. Exit 1 when
            a save was lost, a push never came, a stream failed, a call failed or the daemon did not recover.
            """,
        run: run)

    struct Report: Codable {
        var cpuModel: String
        var date: String
        var devices: Int
        var daemons: Int
        var streamsReady: Int
        var streamsFailed: Int
        var idleRSSBytes: Int
        var idleFDs: Int
        var rssPerStreamBytes: Int?
        var savesSent: Int
        var savesAcknowledged: Int
        var savesPerSecond: Double
        var answerP50Ms: Double?
        var answerP99Ms: Double?
        var pushesExpected: Int
        var pushesUndelivered: Int
        var pushP50Ms: Double?
        var pushP99Ms: Double?
        var pushMaxMs: Double?
        var lostWrites: Int?
        var errors: [String: Int]
        /// During the --rate phase, once its first quarter (the warm-up) is over and at its end.
        var warmRSSBytes: Int?
        var warmFDs: Int?
        var rateEndRSSBytes: Int?
        var rateEndFDs: Int?
        var daemonRSSBytes: Int
        var daemonFDs: Int
        var daemonCPUSeconds: Double
        /// CPU time per acknowledged save while saving (bursts and rate), the daemons' and this
        /// process's: what a save costs, which a loaded machine does not change as it does latency.
        var daemonCPUMicrosPerSave: Double?
        var benchCPUMicrosPerSave: Double?
        /// Saves the daemons shed with 503 `TRY_AGAIN_LATER`, those of them with a `retryAfter`, and
        /// the longest time saves waited with none answered.
        var shed: Int
        var shedWithRetryAfter: Int
        /// Saves not sent because their device was waiting out a shed save's `retryAfter`.
        var savesDeferred: Int
        var longestAnswerGapMs: Double
        /// Push streams still open at the end (ready and never closed).
        var streamsAliveAtEnd: Int
        var recovery: Recovery?
        var calls: CallReport?
        var seconds: Double
    }

    /// The --recover phase: saves at a lower rate after the --rate phase.
    struct Recovery: Codable {
        var rate: Int
        var seconds: Double
        /// From the end of the --rate phase until every save sent in it was answered.
        var drainMs: Double
        var sent: Int
        var acknowledged: Int
        var shed: Int
        /// When the last shed answer came, from the start of the phase; nil when none came in it.
        var lastShedMs: Double?
        /// Saves were acknowledged and none was shed in the phase's second half.
        var recovered: Bool { acknowledged > 0 && (lastShedMs ?? 0) < seconds * 500 }
    }

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        let deviceCount = try args.int("--devices", in: 0...100_000) ?? 1000
        let callCount = try args.int("--calls", in: 0...100_000) ?? 0
        let loneCalls = try args.int("--lone-calls", in: 0...10_000) ?? 10
        guard let callRate = Double(args.string("--call-rate") ?? "100"), callRate >= 0, callRate <= 100_000 else {
            throw UsageError(message: "--call-rate: a number of calls per second, 0 to 100000", command: spec)
        }
        let callSync = args.string("--call-sync") ?? "push"
        guard let signaling = SignalingConfiguration.named(callSync), !["standard", "legacy"].contains(callSync) else {
            throw UsageError(message: "--call-sync \(callSync): push, poll-token, poll-fullscan or hybrid", command: spec)
        }
        // Lone calls are made before --calls, or alone when asked for by name.
        let runsCalls = callCount > 0 || (loneCalls > 0 && !args.strings("--lone-calls").isEmpty)
        if deviceCount == 0 && !runsCalls {
            throw UsageError(message: "nothing to do: give --devices or --calls", command: spec)
        }
        let bursts = try args.int("--bursts", in: 0...1000) ?? 1
        let rate = try args.int("--rate", in: 0...1_000_000) ?? 0
        let connections = try args.int("--request-connections", in: 1...4096) ?? 256
        let daemonCount = try args.int("--daemons", in: 1...8) ?? 1
        func duration(_ name: String) throws -> Duration {
            do { return try PushProfileDuration.parse(args.string(name)!) } catch {
                throw UsageError(message: "\(name): \(error)", command: spec)
            }
        }
        let phase = try duration("--duration"), hold = try duration("--hold"), timeout = try duration("--timeout")
        let callHold = try duration("--call-hold")
        let recover = try duration("--recover")
        let recoverRate = try args.int("--recover-rate", in: 0...1_000_000) ?? rate / 4
        let maxInFlight = try args.int("--max-requests-in-flight", in: 1...1_000_000)
        let postgres = args.string("--postgres")
        let url = args.string("--url")
        let journal = args.has("--journal")
        if url != nil && (postgres != nil || daemonCount > 1 || journal) {
            throw UsageError(message: "--url excludes --postgres, --journal and --daemons", command: spec)
        }
        if journal && postgres != nil {
            throw UsageError(message: "--journal and --postgres exclude each other", command: spec)
        }
        if daemonCount > 1 && postgres == nil {
            throw UsageError(message: "--daemons needs --postgres: daemons share only a database", command: spec)
        }
        let json = args.has("--json")
        let progress = isatty(STDERR_FILENO) == 1
        FileLimit.raiseToHardLimit()
        let watch = Stopwatch()

        // The daemons.
        let directory = NSTemporaryDirectory() + "zonertc-load-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var children: [ChildProcess] = []
        var endpoints: [Endpoint] = []
        var pids: [Int32] = []
        func stopAll() async { for c in children { await c.stop(grace: .seconds(10)) } }
        if let url {
            endpoints = [try RemoteStoreClient.endpoint(fromURL: url)]
            if let pid = try args.int("--pid", in: 1...Int(Int32.max)) { pids = [Int32(pid)] }
        } else {
            for d in 0..<daemonCount {
                let backend = postgres.map { ["--postgres", $0] } ?? (journal ? ["--data", "\(directory)/data"] : ["--memory"])
                // Each call's peer holds its push stream and up to four request connections.
                let held = deviceCount + connections * daemonCount + (loneCalls + callCount) * 10 + 1024
                let child = try ChildProcess(name: "store\(d)", arguments: [
                    "store", "serve", "--listen", "127.0.0.1:0", "--push-profile", args.string("--push-profile")!,
                    "--max-connections", "\(held)",
                    "--max-connections-per-address", "100000", "--summary-interval", "10s",
                ] + backend + (maxInFlight.map { ["--max-requests-in-flight", "\($0)"] } ?? []), directory: directory)
                children.append(child)
                guard let started = await child.storeURL() else {
                    Terminal.error("zonertc bench load: the store daemon did not start: \(child.stderr)")
                    await stopAll()
                    return 1
                }
                endpoints.append(try RemoteStoreClient.endpoint(fromURL: started))
                pids.append(child.process.processIdentifier)
            }
        }
        func daemonStats() -> ProcessStats {
            ProcessStats.sum(pids.compactMap { ProcessStats.read(pid: $0) })
        }

        let runID = String(format: "%08x", UInt32.random(in: 0...UInt32.max))
        let load = try LoadRun(settings: .init(devices: deviceCount, requestConnections: connections,
                                               endpoints: endpoints, runID: runID,
                                               setupConnections: maxInFlight.map { max(1, $0 / 2) }))
        let stopProgress = StopFlag()
        let progressTask = Task {
            while progress && !stopProgress.isSet {
                let t = await load.onLoop { load.tally }
                FileHandle.standardError.write(Data(("\r\u{1B}[2K[bench load] users \(t.usersReady) streams "
                    + "\(t.streamsReady) saves \(t.savesAcknowledged)/\(t.savesSent) pushes \(t.pushesReceived) "
                    + "errors \(t.errors.values.reduce(0, +))").utf8))
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        func endProgress() async {
            guard !stopProgress.isSet else { return }
            stopProgress.set()
            await progressTask.value
            if progress { FileHandle.standardError.write(Data("\n".utf8)) }
        }
        func finish(_ code: Int32) async -> Int32 {
            await endProgress()
            await stopAll()
            return code
        }

        // Users, zones and subscriptions; then the streams, held idle.
        await load.onLoop { load.startSetup() }
        _ = await load.wait(within: timeout) {
            load.tally.usersReady + load.devices.filter(\.failed).count >= deviceCount
        }
        let before = daemonStats()
        await load.onLoop { load.openStreams() }
        _ = await load.wait(within: timeout) {
            load.tally.streamsReady + load.tally.streamsFailed >= load.tally.usersReady
        }
        _ = await load.wait(within: hold) { false }
        let idle = daemonStats()
        let ready = await load.onLoop { load.tally.streamsReady }

        // Bursts, then the steady rate.
        let saving = Stopwatch()
        let cpuBefore = (daemon: daemonStats().cpuSeconds, bench: CPUTime.now())
        for _ in 0..<bursts {
            let target = await load.onLoop { () -> Int in
                load.batchingRequests { for device in load.devices { load.save(device) } }
                return load.tally.savesSent
            }
            _ = await load.wait(within: timeout) { load.tally.savesAnswered >= target && load.unnotified == 0 }
        }
        var warm: ProcessStats?
        var rateEnd: ProcessStats?
        /// Saves at `rate` per second for `phase`: every 10 ms, those owed since the last tick.
        func steady(_ rate: Int, for phase: Duration, atWarmUp: () -> Void = {}) async {
            let start = ContinuousClock.now
            let end = start + phase
            var last = start
            var owed = 0.0
            while last < end {
                if last - start >= phase / 4 { atWarmUp() }
                try? await Task.sleep(for: .milliseconds(10))
                let now = ContinuousClock.now
                owed += Double(rate) * (now - last).seconds
                last = now
                let due = Int(owed)
                owed -= Double(due)
                await load.onLoop { load.saveRoundRobin(due) }
            }
        }
        if rate > 0 {
            await steady(rate, for: phase) { if warm == nil { warm = daemonStats() } }
            rateEnd = daemonStats()
        }
        var recovery: Recovery?
        if recover > .zero && recoverRate > 0 {
            // The load drops: first every save already sent is answered, then saves go on at the lower rate.
            let drain = Stopwatch()
            _ = await load.wait(within: timeout) { load.tally.savesAnswered >= load.tally.savesSent }
            let drainMs = drain.elapsed.milliseconds
            let before = await load.onLoop { load.tally }
            let started = Stopwatch.monotonicNanoseconds()
            await steady(recoverRate, for: recover)
            _ = await load.wait(within: timeout) { load.tally.savesAnswered >= load.tally.savesSent }
            let after = await load.onLoop { load.tally }
            recovery = Recovery(
                rate: recoverRate, seconds: recover.seconds, drainMs: drainMs, sent: after.savesSent - before.savesSent,
                acknowledged: after.savesAcknowledged - before.savesAcknowledged, shed: after.shed - before.shed,
                lastShedMs: after.lastShedAt.flatMap { $0 > started ? Double($0 - started) / 1e6 : nil })
        }
        _ = await load.wait(within: timeout) {
            load.tally.savesAnswered >= load.tally.savesSent && load.unnotified == 0
        }
        let savingSeconds = max(saving.elapsed.seconds, 1e-3)
        let cpuAfter = (daemon: daemonStats().cpuSeconds, bench: CPUTime.now())
        var lost: Int?
        if !args.has("--no-verify") {
            lost = await withCheckedContinuation { continuation in
                load.loop.execute { load.verify { continuation.resume(returning: $0) } }
            }
        }
        var callReport: CallReport?
        if runsCalls {
            await endProgress()
            let plan = CallPlan(lone: loneCalls, concurrent: callCount, rate: callRate, hold: callHold,
                                timeout: timeout, sync: callSync, signaling: signaling)
            callReport = try await runCalls(plan, endpoints: endpoints, runID: runID) { line in
                if progress { FileHandle.standardError.write(Data("[bench load] \(line)\n".utf8)) }
            }
        }
        let end = daemonStats()
        let (tally, answers, pushes, undelivered, alive) = await load.onLoop {
            (load.tally, load.answerMs.sorted(), load.pushMs.sorted(), load.unnotified,
             load.devices.filter { $0.ready && !$0.failed }.count)
        }
        let report = Report(
            cpuModel: cpuModelName(), date: ISO8601DateFormatter().string(from: Date()), devices: deviceCount,
            daemons: endpoints.count, streamsReady: ready, streamsFailed: tally.streamsFailed,
            idleRSSBytes: idle.rssBytes, idleFDs: idle.fds,
            rssPerStreamBytes: ready > 0 && !pids.isEmpty ? (idle.rssBytes - before.rssBytes) / ready : nil,
            savesSent: tally.savesSent, savesAcknowledged: tally.savesAcknowledged,
            savesPerSecond: Double(tally.savesAcknowledged) / savingSeconds,
            answerP50Ms: percentile(answers, 0.5), answerP99Ms: percentile(answers, 0.99),
            pushesExpected: tally.savesAcknowledged, pushesUndelivered: undelivered,
            pushP50Ms: percentile(pushes, 0.5), pushP99Ms: percentile(pushes, 0.99), pushMaxMs: pushes.last,
            lostWrites: lost, errors: tally.errors,
            warmRSSBytes: pids.isEmpty ? nil : warm?.rssBytes, warmFDs: pids.isEmpty ? nil : warm?.fds,
            rateEndRSSBytes: pids.isEmpty ? nil : rateEnd?.rssBytes, rateEndFDs: pids.isEmpty ? nil : rateEnd?.fds,
            daemonRSSBytes: end.rssBytes, daemonFDs: end.fds,
            daemonCPUSeconds: end.cpuSeconds,
            daemonCPUMicrosPerSave: pids.isEmpty || tally.savesAcknowledged == 0 ? nil
                : (cpuAfter.daemon - cpuBefore.daemon) * 1e6 / Double(tally.savesAcknowledged),
            benchCPUMicrosPerSave: tally.savesAcknowledged == 0 ? nil
                : (cpuAfter.bench - cpuBefore.bench) * 1e6 / Double(tally.savesAcknowledged),
            shed: tally.shed, shedWithRetryAfter: tally.shedWithRetryAfter, savesDeferred: tally.savesDeferred,
            longestAnswerGapMs: tally.longestAnswerGapMs, streamsAliveAtEnd: alive, recovery: recovery,
            calls: callReport, seconds: watch.elapsed.seconds)
        let failed = (lost ?? 0) > 0 || undelivered > 0 || tally.streamsFailed > 0 || ready < deviceCount
            || (callReport.map { $0.failed > 0 || $0.loneConverged < $0.loneCalls } ?? false)
            || (recovery.map { !$0.recovered } ?? false)
        let code = await finish(failed ? 1 : 0)
        if json {
            print(try Terminal.json(report))
        } else {
            print(summary(report))
        }
        return code
    }

    static func summary(_ r: Report) -> String {
        func ms(_ v: Double?) -> String { v.map { String(format: "%.1f ms", $0) } ?? "-" }
        var lines = [
            "zonertc bench load: \(r.devices) devices on \(r.daemons) daemon(s), \(r.cpuModel), \(r.date)",
            "  streams        \(r.streamsReady) ready, \(r.streamsFailed) failed",
            "  idle daemon    \(Terminal.bytes(r.idleRSSBytes)) RSS, \(r.idleFDs) fds"
                + (r.rssPerStreamBytes.map { ", \(Terminal.bytes($0)) per stream" } ?? ""),
            "  saves          \(r.savesAcknowledged)/\(r.savesSent) acknowledged, "
                + String(format: "%.0f", r.savesPerSecond) + "/s; answer p50 \(ms(r.answerP50Ms)) p99 \(ms(r.answerP99Ms))",
            "  pushes         \(r.pushesExpected - r.pushesUndelivered)/\(r.pushesExpected) delivered; "
                + "p50 \(ms(r.pushP50Ms)) p99 \(ms(r.pushP99Ms)) max \(ms(r.pushMaxMs))",
            "  daemon at end  \(Terminal.bytes(r.daemonRSSBytes)) RSS, \(r.daemonFDs) fds, "
                + String(format: "%.1f", r.daemonCPUSeconds) + " CPU s",
        ]
        if let d = r.daemonCPUMicrosPerSave, let b = r.benchCPUMicrosPerSave {
            lines.append("  CPU per save   daemon " + String(format: "%.0f", d) + " µs, bench " + String(format: "%.0f", b)
                         + " µs")
        }
        if let w = r.warmRSSBytes, let e = r.rateEndRSSBytes, let wf = r.warmFDs, let ef = r.rateEndFDs, w > 0 {
            lines.append("  steady rate    RSS \(Terminal.bytes(w)) after warm-up, \(Terminal.bytes(e)) at the end ("
                         + String(format: "%+.1f %%", Double(e - w) * 100 / Double(w)) + "), fds \(wf) → \(ef)")
        }
        if r.shed > 0 || r.recovery != nil {
            lines.append("  overload       \(r.shed) saves shed (503 TRY_AGAIN_LATER), \(r.shedWithRetryAfter) with "
                         + "retryAfter, \(r.savesDeferred) held back by their device for it; longest wait with none "
                         + "answered " + String(format: "%.0f ms", r.longestAnswerGapMs)
                         + "; streams alive at the end \(r.streamsAliveAtEnd)/\(r.streamsReady)")
        }
        if let v = r.recovery {
            let lastShed = v.lastShedMs.map { String(format: " (the last %.0f ms in)", $0) } ?? ""
            lines.append("  recovery       backlog answered in " + String(format: "%.0f ms", v.drainMs)
                         + ", then \(v.rate)/s for " + String(format: "%g", v.seconds) + " s: "
                         + "\(v.acknowledged)/\(v.sent) acknowledged, \(v.shed) shed\(lastShed); "
                         + (v.recovered ? "recovered" : "not recovered"))
        }
        if let lost = r.lostWrites { lines.append("  read back      \(lost) acknowledged saves missing") }
        let errors = r.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        lines.append("  errors         " + (errors.isEmpty ? "none" : errors.joined(separator: ", ")))
        if let calls = r.calls { lines += callSummary(calls) }
        return lines.joined(separator: "\n")
    }
}

/// A flag one task sets and another reads.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
