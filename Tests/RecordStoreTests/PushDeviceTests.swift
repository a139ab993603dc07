import Testing
@testable import RecordStore
import ZoneCore

/// The delivery model keys a device by its user and device ID kept apart: coalescing holds one
/// pending notification per device, and devices whose names would join alike stay distinct.
@Suite struct PushDeviceTests {
    private func note(_ id: UInt64, user: String, device: String) -> DeviceNotification {
        DeviceNotification(userRecordName: user, deviceID: device,
                           notification: PushNotification(notificationID: id, subscriptionID: "s",
                                                          databaseScope: .private, zoneID: nil))
    }

    @Test func aDeviceIsItsUserAndItsID() {
        let a = PushDevice(of: note(1, user: "_u", device: "phone"))
        #expect(a == PushDevice(of: note(2, user: "_u", device: "phone")))
        #expect(a.hashValue == PushDevice(of: note(3, user: "_u", device: "phone")).hashValue)
        #expect(a != PushDevice(of: note(4, user: "_v", device: "phone")))
        #expect(a != PushDevice(of: note(5, user: "_u", device: "tablet")))
        #expect(PushDevice(of: note(6, user: "a/b", device: "c")) != PushDevice(of: note(7, user: "a", device: "b/c")))
    }

    @Test func coalescingKeepsDevicesWhoseNamesJoinAlikeApart() {
        var model = PushDeliveryModel(profile: PushProfile(name: "t", latency: .fixed(.seconds(2))), seed: 1)
        let t0 = Instant.seconds(10)
        model.handle(.submit(note(1, user: "a/b", device: "c")), now: t0)
        model.handle(.submit(note(2, user: "a", device: "b/c")), now: t0)
        model.handle(.submit(note(3, user: "a", device: "b/c")), now: t0 + .seconds(1))
        #expect(model.pendingCount == 2, "one pending per device; the second device's newer note replaced its own")
        model.handle(.timer, now: t0 + .seconds(2))
        var delivered: [UInt64] = []
        while let out = model.pollOutput() { delivered.append(out.notification.notificationID) }
        #expect(delivered == [1, 3])
    }
}
