import Foundation
import Synchronization
import Testing
@testable import RecordStore
import TestSupport
import ZoneCore

/// The push hub while streams come and go during deliveries: cancelling a listener's task from a
/// plain thread (as the daemon's event loop does when a connection closes) must never wait on a
/// delivery in progress, nor a delivery on the cancelled task.
@Suite("Push hub under churn")
struct PushHubChurnTests {
    /// One device per this many listeners, so each delivery yields to several streams at once.
    private static let listenersPerDevice = 8

    private static func note(_ id: UInt64, device: Int) -> DeviceNotification {
        DeviceNotification(userRecordName: "u", deviceID: "d\(device)",
                           notification: PushNotification(notificationID: id, subscriptionID: "s",
                                                          databaseScope: .private, zoneID: nil))
    }

    private final class Tally: Sendable {
        let churned = Atomic<Int>(0)
        let received = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
    }

    @Test("thousands of streams opened, cancelled and closed while saves notify them: no deadlock")
    func churnDuringDeliveries() async {
        let clock = ManualClock()
        let hub = PushHub(profile: .lan, seed: 7, clock: clock, automatic: false)
        // 12,000 streams, about 4,000 of them cancelled while deliveries run: still thousands of cancellations
        // against deliveries in progress. 40,000 took 25–30 s of a debug CI run, at this test's own 30 s bound
        // (it failed so once); 12,000 take 9 s.
        let streams = 12_000
        let devices = 4000 / Self.listenersPerDevice
        let tally = Tally()
        let finished = await finishes(within: .seconds(30)) {
            let deliverer = Thread {
                var id: UInt64 = 0
                while !tally.stop.load(ordering: .relaxed) {
                    var notes: [DeviceNotification] = []
                    for d in 0..<devices {
                        id += 1
                        notes.append(Self.note(id, device: d))
                    }
                    hub.submit(notes)
                    clock.advance(by: .seconds(1))
                    hub.pump(now: clock.now())
                }
            }
            deliverer.start()
            var open: [Task<Void, Never>] = []
            for i in 0..<streams {
                let stream = hub.listen(user: "u", deviceID: "d\(i % devices)")
                open.append(Task { [tally] in
                    for await _ in stream { tally.received.add(1, ordering: .relaxed) }
                })
                // Cancel from this thread, never from the consumer: the shape of a closing connection.
                if open.count >= 64 || i % 3 == 0 {
                    let victim = open.removeFirst()
                    victim.cancel()
                    tally.churned.add(1, ordering: .relaxed)
                }
            }
            for task in open { task.cancel() }
            tally.stop.store(true, ordering: .relaxed)
            hub.stop()
        }
        #expect(finished, "the hub deadlocked after \(tally.churned.load(ordering: .relaxed)) cancellations")
        #expect(tally.churned.load(ordering: .relaxed) > streams / 4)
        #expect(tally.received.load(ordering: .relaxed) > 0, "no delivery reached a stream while they churned")
    }
}
