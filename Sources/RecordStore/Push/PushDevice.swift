/// One device push reaches — its user and its device ID — as the delivery model keys the
/// notifications pending for it and its budget window.
///
/// The two names are kept apart rather than joined into "user/device": joining built a string for
/// every notification submitted and again for every one delivered, and two devices whose names
/// joined alike (user "a/b" with device "c", user "a" with device "b/c") would have shared one
/// pending notification and one budget, where docs/STORE.md "Subscriptions and push" gives each device its own.
///
/// Hashed once (`HashedOnce`): a notification submitted looks its device up several times
/// (pending, budget window, queue).
struct PushDevice: Hashable, Sendable {
    private struct Names: Hashable, Sendable {
        let user: String
        let device: String
    }

    private let key: HashedOnce<Names>

    init(of note: DeviceNotification) {
        key = HashedOnce(Names(user: note.userRecordName, device: note.deviceID))
    }

    var user: String { key.names.user }
    var device: String { key.names.device }
}
