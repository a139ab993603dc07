import ZoneCore

/// Timing a loop for long enough to trust the figure, whatever one iteration costs.
enum Calibration {
    /// Grows a calibration run until it takes at least 20 ms, then runs `body(reps)` with `reps`
    /// chosen to take about `targetSeconds`; returns those repetitions and their seconds.
    static func measure(targetSeconds: Double, _ body: (Int) -> Void) -> (reps: Int, seconds: Double) {
        var reps = 1
        var seconds = 0.0
        while true {
            let watch = Stopwatch()
            body(reps)
            seconds = watch.elapsed.seconds
            if seconds >= 0.02 { break }
            reps *= seconds < 0.002 ? 10 : 2
        }
        reps = max(1, Int(Double(reps) * BenchRun.seconds(targetSeconds) / seconds))
        let watch = Stopwatch()
        body(reps)
        return (reps, watch.elapsed.seconds)
    }
}
