// The thin test driver of `CallSignaling` over any `StoreClient`: it carries out store requests
// and feeds their outcomes back, and gives everything else (ICE commands, reports) to its caller.
// No decisions live here (docs/ARCHITECTURE.md "The one rule").
import RecordStore
import Signaling
import ZoneCore

/// Runs one peer's call signaling against a store client.
///
/// Requests run one at a time, in the order the machine asked for them, with the `now` of the
/// event that caused them; so a run on a manual clock is deterministic.
public final class CallDriver {
    /// The machine, between events.
    public private(set) var signaling: CallSignaling
    public let client: any StoreClient
    /// Push notifications waiting to be fed in (nil until `listenForPush`).
    public private(set) var mailbox: NotificationMailbox?

    public init(signaling: CallSignaling, client: any StoreClient) {
        self.signaling = signaling
        self.client = client
    }

    /// Registers the device for push and collects its notifications from now on.
    public func listenForPush() async throws {
        guard mailbox == nil else { return }
        let box = NotificationMailbox()
        box.collect(try await client.notifications())
        mailbox = box
    }

    /// Replaces the machine (a new call on the same device), keeping the mailbox.
    public func replace(_ signaling: CallSignaling) {
        self.signaling = signaling
    }

    /// Feeds `event`, carries out every store request it leads to, and returns the rest.
    @discardableResult
    public func handle(_ event: CallSignaling.Event, now: Instant) async -> [CallSignaling.Action] {
        var external: [CallSignaling.Action] = []
        var queue = signaling.outputs(after: event, now: now)
        var next = 0
        while next < queue.count {
            let action = queue[next]
            next += 1
            if case .store(let request, let origin) = action {
                let outcome = await client.perform(request)
                queue += signaling.outputs(after: .reply(origin, outcome), now: now)
            } else {
                external.append(action)
            }
        }
        return external
    }

    /// Feeds the notifications that arrived and a timer tick.
    public func tick(now: Instant) async -> [CallSignaling.Action] {
        var out: [CallSignaling.Action] = []
        for note in mailbox?.drain() ?? [] {
            out += await handle(.notification(note), now: now)
        }
        out += await handle(.timer, now: now)
        return out
    }

    /// Stops collecting notifications.
    public func stop() {
        mailbox?.stop()
    }
}
