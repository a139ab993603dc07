import Foundation
import Net
import Signaling
import StoreServer
import ZoneCore

/// The calls phase of `zonertc bench load`: `--lone-calls` calls one after another (the single-call
/// figure of the same run), then `--calls` calls started `--call-rate` per second and each held
/// `--call-hold`, so that as many as `rate × hold` are up at once (`LoadCalls`).
extension BenchLoadCommand {
    /// What the calls phase measured.
    struct CallReport: Codable {
        var sync: String
        var loneCalls: Int
        var loneConverged: Int
        var loneP50Ms: Double?
        var loneP99Ms: Double?
        var calls: Int
        var callRate: Double
        var holdSeconds: Double
        var prepared: Int
        var converged: Int
        var failed: Int
        var peakConcurrent: Int
        var p50Ms: Double?
        var p99Ms: Double?
        var maxMs: Double?
        /// The concurrent calls' p99 over the lone calls' p99: the goal ("convergence p99 ≤ 2× the
        /// single call") compares like with like, so this is the ratio it reads (at most 2).
        var p99OverLoneP99: Double?
        /// The concurrent calls' p99 over the lone calls' p50: a stricter view, for comparison.
        var p99OverLoneP50: Double?
        var storeRequestsPerCall: Double?
        var storeErrors: [String: Int]
        var rejectedRecords: Int
        /// The first few failures, with their reasons.
        var failures: [String]
    }

    struct CallPlan {
        var lone: Int
        var concurrent: Int
        /// Calls started per second; 0 starts them all at once.
        var rate: Double
        var hold: Duration
        var timeout: Duration
        var sync: String
        var signaling: SignalingConfiguration
    }

    /// Prepares and runs the calls against `endpoints`; `progress` gets a line now and then.
    static func runCalls(_ plan: CallPlan, endpoints: [Endpoint], runID: String,
                         progress: @escaping @Sendable (String) -> Void) async throws -> CallReport {
        let calls = try LoadCalls(settings: .init(endpoints: endpoints, runID: runID, signaling: plan.signaling,
                                                  timeout: plan.timeout))
        let total = plan.lone + plan.concurrent
        // Rooms, users and push streams first, a few dozen at a time: not part of any call's time.
        var prepared: [LoadCalls.Call?] = Array(repeating: nil, count: total)
        try await withThrowingTaskGroup(of: (Int, LoadCalls.Call?).self) { group in
            var next = 0
            func add() {
                let index = next
                next += 1
                group.addTask { (index, await calls.prepare(index)) }
            }
            while next < min(total, 32) { add() }
            var done = 0
            while let (index, call) = try await group.next() {
                prepared[index] = call
                done += 1
                if done % 100 == 0 { progress("calls prepared \(done)/\(total)") }
                if next < total { add() }
            }
        }

        // The lone calls, one at a time.
        var lone: [Double] = []
        for call in prepared.prefix(plan.lone).compactMap({ $0 }) {
            await run(call, on: calls, hold: nil)
            if let ms = await calls.onLoop({ call.convergedMs }) { lone.append(ms) }
        }
        let loneFailed = await calls.onLoop { calls.tally.failed }
        let loneFailures = await calls.onLoop { calls.failures }
        progress("lone calls done: \(lone.count)/\(plan.lone) converged")

        // The concurrent calls: started at the rate, each held, all awaited.
        let batch = prepared.dropFirst(plan.lone).compactMap { $0 }
        let convergedBefore = await calls.onLoop { calls.convergenceMs.count }
        await withTaskGroup(of: Void.self) { group in
            let start = ContinuousClock.now
            for (i, call) in batch.enumerated() {
                if plan.rate > 0 {
                    let due = start + .seconds(Double(i) / plan.rate)
                    if due > ContinuousClock.now { try? await Task.sleep(until: due, clock: .continuous) }
                }
                group.addTask { await run(call, on: calls, hold: plan.hold) }
                if i % 100 == 99 {
                    let t = await calls.onLoop { calls.tally }
                    progress("calls started \(i + 1)/\(batch.count), up \(t.live), converged \(t.converged)")
                }
            }
        }
        let (tally, all, failures) = await calls.onLoop { (calls.tally, calls.convergenceMs, calls.failures) }
        let concurrent = Array(all.dropFirst(convergedBefore)).sorted()
        let loneSorted = lone.sorted()
        let p99 = percentile(concurrent, 0.99)
        let loneP50 = percentile(loneSorted, 0.5)
        let loneP99 = percentile(loneSorted, 0.99)
        func ratio(_ over: Double?) -> Double? { p99.flatMap { p in over.flatMap { $0 > 0 ? p / $0 : nil } } }
        let requests = tally.storeRequests
        return CallReport(
            sync: plan.sync, loneCalls: plan.lone, loneConverged: lone.count, loneP50Ms: loneP50,
            loneP99Ms: loneP99, calls: plan.concurrent, callRate: plan.rate,
            holdSeconds: plan.hold.seconds, prepared: tally.prepared, converged: concurrent.count,
            failed: tally.failed - loneFailed + (plan.concurrent - batch.count),
            peakConcurrent: tally.peakLive, p50Ms: percentile(concurrent, 0.5), p99Ms: p99, maxMs: concurrent.last,
            p99OverLoneP99: ratio(loneP99), p99OverLoneP50: ratio(loneP50),
            storeRequestsPerCall: tally.started > 0 ? Double(requests) / Double(tally.started) : nil,
            storeErrors: tally.storeErrors, rejectedRecords: tally.rejectedRecords,
            failures: Array((loneFailures + failures.dropFirst(loneFailures.count)).prefix(10)))
    }

    /// Starts `call` and returns once it is over; it hangs up `hold` after its start (nil: once converged).
    private static func run(_ call: LoadCalls.Call, on calls: LoadCalls, hold: Duration?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            calls.loop.execute {
                call.onDone = { continuation.resume() }
                calls.start(call, hold: hold)
            }
        }
    }

    static func callSummary(_ c: CallReport) -> [String] {
        func ms(_ v: Double?) -> String { v.map { String(format: "%.1f ms", $0) } ?? "-" }
        var lines = [
            "  lone calls     \(c.loneConverged)/\(c.loneCalls) converged; p50 \(ms(c.loneP50Ms)) p99 \(ms(c.loneP99Ms)) "
                + "(\(c.sync), one at a time)",
            "  calls          \(c.converged)/\(c.calls) converged, \(c.failed) failed, up to \(c.peakConcurrent) at once "
                + "(" + String(format: "%g", c.callRate) + "/s, held " + String(format: "%g", c.holdSeconds) + " s)",
            "  convergence    p50 \(ms(c.p50Ms)) p99 \(ms(c.p99Ms)) max \(ms(c.maxMs))",
        ]
        if let overP99 = c.p99OverLoneP99 {
            // The goal's ratio first: p99 against p99; against the lone p50 beside it.
            lines.append(String(format: "  p99 ratio      %.2f × the lone calls' p99 (goal ≤ 2)", overP99)
                         + (c.p99OverLoneP50.map { String(format: "; %.2f × their p50", $0) } ?? ""))
        }
        let errors = c.storeErrors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        lines.append("  call requests  " + (c.storeRequestsPerCall.map { String(format: "%.1f per call", $0) } ?? "-")
                     + (errors.isEmpty ? "" : "; retried or failed: " + errors.joined(separator: ", ")))
        for f in c.failures.prefix(5) { lines.append("  failed call    \(f)") }
        return lines
    }
}
