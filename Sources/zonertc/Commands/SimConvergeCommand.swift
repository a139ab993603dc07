import Foundation
import Harness
import RecordStore
import Simulation
import ZoneCore

/// `zonertc sim converge`: simulated calls under every combination of strategies, push loss and
/// NATs, on a virtual clock; convergence percentiles, costs, a CDF chart, and the trace hash.
enum SimConvergeCommand {
    static let spec = CommandSpec(
        path: ["sim", "converge"],
        summary: "Simulate calls on a virtual network and clock; compare how fast push, polling and legacy converge.",
        options: [
            .value("--strategies", "LIST", "comma-separated: push, poll-token, poll-fullscan, hybrid, legacy",
                   default: "push,poll-token,poll-fullscan,hybrid,legacy"),
            .value("--trials", "N", "calls simulated per configuration", default: "1000"),
            .value("--profile", "PROFILE", "push profile: lan, cloudkit, or custom:key=value,… (as store serve)",
                   default: "cloudkit"),
            .value("--store-latency", "LATENCY", "store round trip: lan, cloudkit, fixed=D, min=D,max=D or "
                   + "median=D,p95=D (default: the profile's)"),
            .value("--push-loss", "LIST", "comma-separated probabilities that a push is lost", default: "0,0.2,0.5"),
            .value("--poll-interval", "DURATION", "poll interval (polling strategies, hybrid while negotiating, "
                   + "legacy's signal poll)", default: "2s"),
            .value("--safety-poll", "DURATION", "hybrid's safety-net poll interval", default: "30s"),
            .value("--nat", "LIST", "comma-separated: none, full-cone, restricted-cone, port-restricted, symmetric, "
                   + "or A/B for one per side", default: "none,full-cone,symmetric"),
            .value("--link", "LINK", "the peers' links: broadband, or delay=D,jitter=D,loss=P,reorder=P,"
                   + "reorder-gap=D,duplicate=P,bandwidth=R (--impair's names; latency= and reorder-delay= "
                   + "still work)", default: "broadband"),
            .value("--old-epochs", "N", "earlier calls' records in the zone when each call starts", default: "0"),
            .value("--seed", "N", "seed of every random choice", default: "42"),
            .value("--deadline", "DURATION", "a call not connected by then has failed", default: "60s"),
            .value("--hold", "DURATION", "keep simulating each call this long after it connected (costs count)",
                   default: "0s"),
            .value("--throttle", "POLICY", "off, cloudkit (≈40 requests/s per client), or rate=N,burst=N,busy=P,"
                   + "unavailable=P,limited=P,retry-after=MIN-MAX (seconds)", default: "off"),
            .value("--push-outage", "WINDOW", "no push delivered from START to END after call start "
                   + "(2s-20s or 2s+18s); repeatable", repeatable: true),
            .value("--token-expiry", "AT", "every change token issued before AT after call start expires; repeatable",
                   repeatable: true),
            .value("--store-restart", "WINDOW", "the store restarts: requests fail with retryAfter, queued pushes "
                   + "are lost; repeatable", repeatable: true),
            .flag("--no-relay", "give the peers no TURN relay (symmetric NATs on both sides then cannot connect)"),
            .value("--csv", "FILE", "write one CSV row per configuration to FILE"),
            .value("--svg", "FILE", "write the CDF chart (one panel per push loss and NAT) to FILE"),
            .value("--trace", "FILE", "write every trial's event trace as text to FILE (slow)"),
            .flag("--json", "print the report as JSON instead of the markdown table"),
            .value("--peers", "N", "simulate group calls of N members (2–5) running RoomCall instead of calls of two "
                   + "(members on direct paths; --nat is not used)"),
            .value("--join", "SCHEDULE", "with --peers: simultaneous, staggered:DURATION (one member every DURATION) or "
                   + "late (the last once the others are connected)", default: "simultaneous"),
            .value("--leave", "SCENARIO", "with --peers, once every pair is connected: none, graceful (the last member "
                   + "to join hangs up) or crash (it stops dead); then everyone hangs up and the zone is checked",
                   default: "none"),
        ],
        discussion: """
            Runs the real signaling (negotiator, inbox, change sync), ICE agents, record-store engine, push
            delivery model and TURN server on a discrete-event scheduler: nothing sleeps, nothing reads the
            clock, and the same seed gives the same event trace (its SHA-256 is printed as `trace hash:`).
            Every combination of --strategies, --push-loss and --nat runs --trials calls; trial i of every
            combination uses the same seed. Convergence is call start → both peers connected on the same
            epoch. Durations: 250us, 20ms, 2s, 1.5s, 2m. A progress line goes to stderr on a terminal.
            Symmetric NATs on both sides connect only through the relay; with --no-relay those calls fail
            and are counted as failures.
            With --peers N each trial is a room's group call (docs/GROUP-CALLS.md): every pair's
            convergence is both ends connected on the same epoch; the report gives the time until every
            pair converged (p50/p90/p99/max, failed), the late joiner's time to all its pairs, store
            requests per member by kind and per call, records and KB fetched per member and the share that
            belonged to other pairs, pushes per device per minute, abandoned epochs, resets and throttled
            fetches; with --join late, the new epochs the pairs already connected started. With --leave the
            last member to join leaves 1 s after every pair is connected: the report gives how long the
            others took to end their leg with it, then everyone hangs up (after a crash, 150 s after it, once
            its presence can have been collected) and it counts the presence and signal records left in the
            zone. Without --strategies it runs hybrid; without --push-loss, 0 and 0.2.
            """,
        run: run)

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        if !args.strings("--peers").isEmpty { return try runMesh(args) }
        guard args.strings("--join").isEmpty else { throw usage("--join needs --peers") }
        guard args.strings("--leave").isEmpty else { throw usage("--leave needs --peers") }
        let plan = try plan(args)
        let jsonOutput = args.has("--json")
        var traceFile: FileHandle?
        if let path = args.string("--trace") {
            guard FileManager.default.createFile(atPath: path, contents: nil),
                  let handle = FileHandle(forWritingAtPath: path)
            else { throw SimulationCommandError("cannot write the trace to \(path)") }
            traceFile = handle
        }
        let showProgress = isatty(2) == 1
        let report = try ConvergenceExperiment.run(plan, progress: { p in
            guard showProgress else { return }
            let percent = p.trialsTotal == 0 ? 100 : p.trialsDone * 100 / p.trialsTotal
            let line = p.cell < p.cells
                ? "sim converge: \(p.trialsDone)/\(p.trialsTotal) trials (\(percent)%) · configuration \(p.cell + 1)/"
                    + "\(p.cells): \(p.current.strategy), push loss \(p.current.pushLoss), NAT \(p.current.nat)"
                : "sim converge: \(p.trialsTotal) trials done"
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        }, trace: { outcome in
            guard let traceFile else { return }
            traceFile.write(Data((outcome.trace.lines.joined(separator: "\n") + "\n").utf8))
        })
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        try traceFile?.close()

        if let path = args.string("--csv") {
            try write(CSVReport.render(report.configurations), to: path)
        }
        if let path = args.string("--svg") {
            let title = "Call convergence · \(plan.pushProfile.name) profile · \(plan.trials) calls per curve · "
                + "seed \(plan.seed)" + (plan.oldEpochs > 0 ? " · \(plan.oldEpochs) old epochs in the zone" : "")
            try write(CDFChart.render(report.configurations, title: title, deadline: plan.deadline.seconds), to: path)
        }
        if jsonOutput {
            print(try Terminal.json(report))
        } else {
            print(MarkdownReport.render(report), terminator: "")
        }
        return 0
    }

    /// `--peers N`: group calls.
    static func runMesh(_ args: ParsedCommand) throws -> Int32 {
        let members: Int = try args.int("--peers", in: 2...5) ?? 2
        let joinText = args.string("--join") ?? "simultaneous"
        let join: JoinSchedule
        switch joinText {
        case "simultaneous": join = .simultaneous
        case "late": join = .late
        default:
            guard joinText.hasPrefix("staggered:") else {
                throw usage("--join \(joinText): choose simultaneous, staggered:DURATION or late")
            }
            join = .staggered(try duration(String(joinText.dropFirst("staggered:".count)), "--join staggered",
                                           positive: true))
        }
        let leaveText = args.string("--leave") ?? "none"
        guard let leave = LeaveScenario(rawValue: leaveText) else {
            throw usage("--leave \(leaveText): choose none, graceful or crash")
        }
        for flag in ["--csv", "--svg", "--trace"] where args.string(flag) != nil {
            throw usage("\(flag) does not go with --peers")
        }
        var plan = try plan(args)
        if args.strings("--strategies").isEmpty { plan.strategies = ["hybrid"] }
        if args.strings("--push-loss").isEmpty { plan.pushLosses = [0, 0.2] }
        let showProgress = isatty(2) == 1
        let report = try MeshExperiment.run(plan, members: members, join: join, leave: leave) { done, total in
            guard showProgress else { return }
            FileHandle.standardError.write(Data("\r\u{1B}[Ksim converge: \(done)/\(total) group calls".utf8))
        }
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if args.has("--json") {
            print(try Terminal.json(report))
        } else {
            print("Group calls of \(members), join \(join), leave \(leave): first join → every pair connected on one "
                  + "epoch at both ends. \(plan.trials) trials per configuration, seed \(plan.seed), push profile "
                  + "\(plan.pushProfile.name), deadline \(SimulationDuration.format(plan.deadline)) after the last join.")
            print("")
            print(report.markdown)
            print(String(format: "%d trials, %d events, %.1f s CPU", report.trials, report.events, report.cpuSeconds))
        }
        return 0
    }

    static func write(_ text: String, to path: String) throws {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            throw SimulationCommandError("cannot write \(path): \(error.localizedDescription)")
        }
    }

    // MARK: Flags

    static func plan(_ args: ParsedCommand) throws -> ExperimentPlan {
        let strategies = list(args.string("--strategies") ?? "")
        guard !strategies.isEmpty else { throw usage("--strategies: give at least one strategy") }
        for s in strategies where !ExperimentPlan.strategyNames.contains(s) {
            throw usage("--strategies: unknown strategy '\(s)'; choose from "
                        + ExperimentPlan.strategyNames.joined(separator: ", "))
        }
        guard Set(strategies).count == strategies.count else { throw usage("--strategies: a strategy is listed twice") }
        let losses = try list(args.string("--push-loss") ?? "").map { text -> Double in
            guard let p = Double(text), p >= 0, p <= 1 else {
                throw usage("--push-loss: '\(text)' is not a probability from 0 to 1")
            }
            return p
        }
        guard !losses.isEmpty else { throw usage("--push-loss: give at least one value") }
        let nats = try list(args.string("--nat") ?? "").map { text -> NATSetup in
            do { return try NATSetup.parse(text) } catch { throw usage("--nat: \(error)") }
        }
        guard !nats.isEmpty else { throw usage("--nat: give at least one NAT") }
        let trials: Int = try args.int("--trials", in: 1...1_000_000) ?? 1000
        let seed: UInt64 = try args.int("--seed", in: 0...UInt64.max) ?? 42
        let oldEpochs: Int = try args.int("--old-epochs", in: 0...5000) ?? 0

        let profileName = args.string("--profile") ?? "cloudkit"
        let push: PushProfile
        do { push = try PushProfile.parse(profileName) } catch { throw usage("--profile: \(error)") }
        var storeLatency = StoreLatencyProfile.matching(pushProfile: push.name)
        if let text = args.string("--store-latency") {
            switch text {
            case "lan": storeLatency = StoreLatencyProfile.lan
            case "cloudkit": storeLatency = StoreLatencyProfile.cloudkit
            default:
                do { storeLatency = try LatencyDistribution.parse(text) } catch {
                    throw usage("--store-latency: \(error)")
                }
            }
        }
        let link: LinkProfile
        do { link = try LinkProfile.parse(args.string("--link") ?? "broadband") } catch {
            throw usage("--link: \(error)")
        }

        var store = StoreConfiguration.default
        store.throttle = try throttle(args.string("--throttle") ?? "off")
        var faults = StoreFaults()
        faults.pushOutages = try args.strings("--push-outage").map { try window($0, "--push-outage") }
        faults.restarts = try args.strings("--store-restart").map { try window($0, "--store-restart") }
        faults.tokenExpiries = try args.strings("--token-expiry").map { try duration($0, "--token-expiry") }

        let pollInterval = try duration(args.string("--poll-interval") ?? "2s", "--poll-interval", positive: true)
        let safetyPoll = try duration(args.string("--safety-poll") ?? "30s", "--safety-poll", positive: true)
        let deadline = try duration(args.string("--deadline") ?? "60s", "--deadline", positive: true)
        let hold = try duration(args.string("--hold") ?? "0s", "--hold")
        var plan = ExperimentPlan(
            strategies: strategies, pushLosses: losses, nats: nats, trials: trials, seed: seed, pushProfile: push,
            storeLatency: storeLatency, store: store, faults: faults, link: link, pollInterval: pollInterval,
            safetyPollInterval: safetyPoll, oldEpochs: oldEpochs, deadline: deadline, hold: hold,
            traceText: args.string("--trace") != nil)
        plan.offerRelay = !args.has("--no-relay")
        return plan
    }

    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func duration(_ text: String, _ flag: String, positive: Bool = false) throws -> Duration {
        guard let d = SimulationDuration.parse(text), !positive || d > .zero else {
            throw usage("\(flag): '\(text)' is not a\(positive ? " positive" : "") duration "
                        + "(250us, 20ms, 2s, 1.5s, 2m)")
        }
        return d
    }

    static func window(_ text: String, _ flag: String) throws -> FaultWindow {
        guard let w = FaultWindow.parse(text) else {
            throw usage("\(flag): '\(text)' is not a window; write START-END (2s-20s) or START+LENGTH (2s+18s)")
        }
        return w
    }

    static func throttle(_ text: String) throws -> ThrottlePolicy {
        switch text {
        case "off": return .off
        case "cloudkit": return .cloudkit
        default: break
        }
        var p = ThrottlePolicy()
        for setting in text.split(separator: ",") {
            let kv = setting.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2 else { throw usage("--throttle: '\(setting)' is not key=value") }
            if kv[0] == "retry-after" {
                let bounds = kv[1].split(separator: "-").map { Double($0) }
                guard bounds.count == 2, let lo = bounds[0], let hi = bounds[1], lo >= 0, lo <= hi else {
                    throw usage("--throttle: retry-after=\(kv[1]): give MIN-MAX seconds, e.g. 20-30")
                }
                p.retryAfterSeconds = lo...hi
                continue
            }
            guard let v = Double(kv[1]), v >= 0 else { throw usage("--throttle: '\(setting)' is not key=number") }
            switch kv[0] {
            case "rate": p.requestsPerSecond = v > 0 ? v : nil
            case "burst": p.burst = v
            case "busy", "unavailable", "limited":
                guard v <= 1 else { throw usage("--throttle: \(kv[0])=\(kv[1]): give a probability from 0 to 1") }
                if kv[0] == "busy" { p.injectZoneBusy = v }
                if kv[0] == "unavailable" { p.injectServiceUnavailable = v }
                if kv[0] == "limited" { p.injectRateLimited = v }
            default:
                throw usage("--throttle: unknown setting '\(kv[0])' "
                            + "(rate, burst, busy, unavailable, limited, retry-after)")
            }
        }
        return p
    }

    static func usage(_ message: String) -> UsageError { UsageError(message: message, command: spec) }
}

/// A simulation that could not be carried out (a file that cannot be written).
struct SimulationCommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
