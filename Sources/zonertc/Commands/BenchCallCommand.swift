import Foundation
import ZoneCore

/// `zonertc bench call FILE`: repeated `zonertc call`s, timing the first frame from the moment
/// both peers are up (room set up, call started) — the latency a user waits for.
enum BenchCallCommand {
    static let spec = CommandSpec(
        path: ["bench", "call"],
        summary: "Run `zonertc call FILE` repeatedly; report time to first frame and ICE connect, p50/p99.",
        positionals: [("FILE", "the video file each call streams")],
        options: [
            .value("--calls", "N", "how many calls", default: "20"),
            .value("--sync", "STRATEGY", "sync strategy of both peers", default: "hybrid"),
            .value("--push-profile", "PROFILE", "the store daemon's push profile", default: "lan"),
            .value("--pace", "MODE", "realtime or max", default: "realtime"),
            MediaSecurityOption.spec("dtls-srtp or none, passed to every call"),
            .flag("--json", "print the results as one JSON object"),
        ],
        discussion: """
            First frame is measured from the later of the two peers' call starts (each after its room setup)
            to the first frame the receiver delivers, on one machine's wall clock. ICE connect is the
            receiver's time from its call start to a selected pair.
            """,
        run: run)

    struct Result: Codable {
        var calls: Int
        var failures: Int
        var firstFrameP50Ms: Double?
        var firstFrameP99Ms: Double?
        var iceConnectedP50Ms: Double?
        var iceConnectedP99Ms: Double?
        var samplesMs: [Double]
    }

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        guard args.positionals.count == 1 else { throw UsageError(message: "give exactly one FILE", command: spec) }
        let file = args.positionals[0]
        let calls = try args.int("--calls", in: 1...10_000) ?? 20
        let security = try MediaSecurityOption.value(args)
        let json = args.has("--json")
        let progress = isatty(STDERR_FILENO) == 1 && !json
        let directory = NSTemporaryDirectory() + "zonertc-bench-call-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var firstFrames: [Double] = [], connects: [Double] = [], failures = 0
        for i in 0..<calls {
            struct Report: Decodable { var alice: PeerSummary?; var bob: PeerSummary? }
            let child = try ChildProcess(name: "call\(i)", arguments: [
                "call", file, "--json", "--sync", args.string("--sync") ?? "hybrid",
                "--push-profile", args.string("--push-profile") ?? "lan", "--pace", args.string("--pace") ?? "realtime",
                "--media-security", security,
            ], directory: directory)
            let status = await child.wait(timeout: .seconds(120))
            let line = child.stdout.split(separator: "\n").last.map(String.init) ?? ""
            if status == 0, let report = try? JSONDecoder().decode(Report.self, from: Data(line.utf8)),
               let a = report.alice, let b = report.bob, let frameAt = b.firstFrameAtMs,
               let aStart = a.startedAtMs, let bStart = b.startedAtMs {
                firstFrames.append(Double(frameAt - max(aStart, bStart)))
                if let c = b.iceConnectedMs { connects.append(c) }
            } else {
                if status == nil { await child.stop() }
                failures += 1
                Terminal.error("call \(i + 1) failed: \(child.stderr.split(separator: "\n").first ?? "")")
            }
            if progress {
                FileHandle.standardError.write(Data("\r\u{1B}[2Kcall \(i + 1)/\(calls)".utf8))
            }
        }
        if progress { FileHandle.standardError.write(Data("\n".utf8)) }
        let result = Result(calls: calls, failures: failures, firstFrameP50Ms: percentile(firstFrames, 0.5),
                            firstFrameP99Ms: percentile(firstFrames, 0.99), iceConnectedP50Ms: percentile(connects, 0.5),
                            iceConnectedP99Ms: percentile(connects, 0.99), samplesMs: firstFrames)
        if json {
            print((try? Terminal.json(result)) ?? "{}")
        } else {
            func f(_ v: Double?) -> String { v.map { String(format: "%.1f ms", $0) } ?? "—" }
            print("\(calls) calls of \(file), \(failures) failed")
            print("first frame (from both peers up): p50 \(f(result.firstFrameP50Ms)), p99 \(f(result.firstFrameP99Ms))")
            print("ICE connected (receiver, from its start): p50 \(f(result.iceConnectedP50Ms)), p99 \(f(result.iceConnectedP99Ms))")
        }
        return failures == 0 ? 0 : 1
    }
}
