/// One device push reaches — its user and its device ID — as the delivery model keys the
/// notifications pending for it and its budget window.
///
/// The two names are kept apart rather than joined into "user/device": joining built a string for
/// every notification submitted and again for every one delivered, and two devices whose names
/// joined alike (user "a/b" with device "c", user "a" with device "b/c") would have shared one
/// pending notification and one budget, where STORE-SEMANTICS gives each device its own.
///
/// Both names are hashed once, when the key is made: a notification submitted looks its device
/// up several times (pending, budget window, queue). Seeded as every `Hasher` in this process is,
/// so names chosen to collide cannot be made to; never written anywhere.
struct PushDevice: Hashable, Sendable {
    let user: String
    let device: String
    private let identity: Int

    init(of note: DeviceNotification) {
        user = note.userRecordName
        device = note.deviceID
        var hasher = Hasher()
        hasher.combine(user)
        hasher.combine(device)
        identity = hasher.finalize()
    }

    static func == (a: PushDevice, b: PushDevice) -> Bool {
        a.identity == b.identity && a.user == b.user && a.device == b.device
    }

    func hash(into hasher: inout Hasher) { hasher.combine(identity) }
}
