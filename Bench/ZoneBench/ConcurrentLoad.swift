import ZoneCore

/// Concurrent closed-loop load: `workers` tasks each repeat an operation until the time is up;
/// every operation's latency goes into one histogram.
enum ConcurrentLoad {
    static func run(workers: Int, seconds: Double,
                    _ operation: @escaping @Sendable (_ worker: Int, _ iteration: Int) async throws -> Void)
        async -> (latency: LatencyHistogram, elapsedSeconds: Double)
    {
        let deadline = Stopwatch.monotonicNanoseconds() + UInt64(BenchRun.seconds(seconds) * 1e9)
        let watch = Stopwatch()
        let merged = await withTaskGroup(of: LatencyHistogram.self) { group in
            for w in 0..<workers {
                group.addTask {
                    var h = LatencyHistogram()
                    var i = 0
                    while Stopwatch.monotonicNanoseconds() < deadline {
                        let t = Stopwatch()
                        do { try await operation(w, i) } catch {
                            print("worker \(w): \(error)")
                            return h
                        }
                        h.record(t.elapsed)
                        i += 1
                    }
                    return h
                }
            }
            var all = LatencyHistogram()
            for await h in group { all.merge(h) }
            return all
        }
        return (merged, watch.elapsed.seconds)
    }
}
