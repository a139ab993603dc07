import Testing
@testable import RecordStore
import ZoneCore

/// The push delivery model: latency profiles, loss, coalescing, budget, bursts, determinism.
@Suite("Push delivery model")
struct PushDeliveryModelTests {
    private func note(_ id: UInt64, device: String = "d") -> DeviceNotification {
        DeviceNotification(userRecordName: "u", deviceID: device,
                           notification: PushNotification(notificationID: id, subscriptionID: "s",
                                                          databaseScope: .private, zoneID: nil))
    }

    /// Delivery latencies of `count` notifications to distinct devices.
    private func latencies(_ profile: PushProfile, count: Int, seed: UInt64 = 1) -> [Duration] {
        var model = PushDeliveryModel(profile: profile, seed: seed)
        let start = Instant.seconds(1000)
        for i in 0..<count { model.handle(.submit(note(UInt64(i), device: "d\(i)")), now: start) }
        var out: [Duration] = []
        while let t = model.nextDeadline {
            out += model.outputs(after: .timer, now: t).map { _ in t - start }
        }
        return out.sorted()
    }

    @Test("cloudkit: log-normal, median ≈ 2 s, p95 ≈ 3.5 s")
    func cloudkitLatency() {
        var profile = PushProfile.cloudkit
        profile.budget = nil
        let l = latencies(profile, count: 20_000)
        let median = l[l.count / 2].seconds, p95 = l[l.count * 95 / 100].seconds
        #expect(abs(median - 2.0) < 0.05, "median \(median)")
        #expect(abs(p95 - 3.5) < 0.1, "p95 \(p95)")
    }

    @Test("lan: sub-millisecond and lossless")
    func lanLatency() {
        let l = latencies(.lan, count: 5000)
        #expect(l.count == 5000)
        #expect(l.last!.nanoseconds < 1_000_000)
    }

    @Test("drop probability loses about that share")
    func dropProbability() {
        var profile = PushProfile.lan
        profile.dropProbability = 0.2
        let n = latencies(profile, count: 10_000).count
        #expect(n > 7700 && n < 8300, "delivered \(n)")
    }

    @Test("coalescing: at most one pending per device; the newer replaces it, keeping its time")
    func coalescing() {
        var model = PushDeliveryModel(profile: PushProfile(name: "t", latency: .fixed(.seconds(2))), seed: 1)
        let t0 = Instant.seconds(10)
        model.handle(.submit(note(1)), now: t0)
        model.handle(.submit(note(2)), now: t0 + .seconds(1))
        model.handle(.submit(note(3)), now: t0 + .milliseconds(1500))
        #expect(model.pendingCount == 1)
        #expect(model.nextDeadline == t0 + .seconds(2))
        let delivered = model.outputs(after: .timer, now: t0 + .seconds(2))
        #expect(delivered.map(\.notification.notificationID) == [3])
        #expect(model.counters.coalesced == 2)
    }

    @Test("without coalescing every notification is delivered")
    func noCoalescing() {
        var model = PushDeliveryModel(profile: PushProfile(name: "t", latency: .fixed(.seconds(1)), coalescing: false), seed: 1)
        for i in 0..<3 { model.handle(.submit(note(UInt64(i))), now: .seconds(Int64(i))) }
        #expect(model.outputs(after: .timer, now: .seconds(100)).count == 3)
    }

    @Test("budget: pushes beyond it wait for the next window, or are dropped")
    func budget() {
        var profile = PushProfile(name: "t", latency: .fixed(.milliseconds(10)), coalescing: false, budget: 2,
                                  budgetWindow: .seconds(60))
        var model = PushDeliveryModel(profile: profile, seed: 1)
        let t0 = Instant.seconds(0)
        for i in 0..<3 { model.handle(.submit(note(UInt64(i))), now: t0) }
        #expect(model.outputs(after: .timer, now: t0 + .seconds(1)).count == 2)
        #expect(model.nextDeadline == t0 + .seconds(60))
        #expect(model.counters.delayedByBudget == 1)

        profile.overBudget = .drop
        model = PushDeliveryModel(profile: profile, seed: 1)
        for i in 0..<3 { model.handle(.submit(note(UInt64(i))), now: t0) }
        #expect(model.outputs(after: .timer, now: t0 + .seconds(100)).count == 2)
        #expect(model.counters.droppedByBudget == 1)
    }

    @Test("bursts: deliveries leave at multiples of the quantum")
    func bursts() {
        var model = PushDeliveryModel(profile: PushProfile(name: "t", latency: .fixed(.milliseconds(130)), coalescing: false,
                                                           burstQuantum: .milliseconds(500)), seed: 1)
        model.handle(.submit(note(1)), now: .milliseconds(10_000))
        #expect(model.nextDeadline == .milliseconds(10_500))
    }

    @Test("the same seed gives the same deliveries; another seed others")
    func determinism() {
        let a = latencies(.cloudkit, count: 50, seed: 7)
        #expect(a == latencies(.cloudkit, count: 50, seed: 7))
        #expect(a != latencies(.cloudkit, count: 50, seed: 8))
    }

    @Test("a model made with room for its devices delivers exactly as one grown from empty")
    func roomForDevices() {
        var profile = PushProfile.cloudkit
        profile.budget = 2
        profile.dropProbability = 0.1
        func run(devices: Int, coalescing: Bool) -> [String] {
            profile.coalescing = coalescing
            var model = PushDeliveryModel(profile: profile, seed: 5, devices: devices)
            var out: [String] = []
            for i in 0..<60 {
                let now = Instant.seconds(1000 + Int64(i))
                model.handle(.submit(note(UInt64(i), device: "d\(i % 3)")), now: now)
                for n in model.outputs(after: .timer, now: now) {
                    out.append("\(n.deviceID) \(n.notification.notificationID) \(now)")
                }
            }
            while let t = model.nextDeadline {
                out += model.outputs(after: .timer, now: t).map { "\($0.deviceID) \($0.notification.notificationID) \(t)" }
            }
            return out + ["\(model.counters)"]
        }
        for coalescing in [true, false] {
            let grown = run(devices: 0, coalescing: coalescing)
            // Coalesced, a few are delivered; not, most of the 60 (more pending than devices).
            #expect(grown.count > (coalescing ? 5 : 40))
            for devices in [2, 3, 50] { #expect(run(devices: devices, coalescing: coalescing) == grown) }
        }
    }

    @Test("profiles parse from flags, with clear errors")
    func parsing() throws {
        #expect(try PushProfile.parse("lan") == .lan)
        let custom = try PushProfile.parse("custom:median=1s,p95=2s,drop=0.5,budget=10/30s,over=drop,burst=100ms")
        #expect(custom.latency == .logNormal(median: .seconds(1), p95: .seconds(2)))
        #expect(custom.dropProbability == 0.5 && custom.budget == 10 && custom.budgetWindow == .seconds(30))
        #expect(custom.overBudget == .drop && custom.burstQuantum == .milliseconds(100))
        let lossy = try PushProfile.parse("cloudkit:drop=0.2")
        #expect(lossy.dropProbability == 0.2 && lossy.budget == 60)
        for bad in ["wifi", "custom", "lan:drop=2", "lan:median=fast", "lan:colour=red", "lan:budget=x"] {
            #expect(throws: PushProfile.ParseError.self) { _ = try PushProfile.parse(bad) }
        }
    }
}
