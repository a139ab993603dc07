// What a simulated group call does once every pair is connected (docs/SIMULATOR.md "Group calls"):
// nothing, or the last member to join leaves — hanging up as a user does, or stopping dead as a
// crashed process — and then everyone hangs up, so the trial can check that the zone is clean.

/// What happens in a simulated group call after every pair is connected.
public enum LeaveScenario: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Nothing: the trial ends once every pair is connected.
    case none
    /// The last member to join hangs up (goodbye, records deleted); once the others have ended their leg
    /// with it, they hang up too.
    case graceful
    /// The last member to join stops: no request, reply, datagram or timer of its own any more. The others
    /// end their leg with it by consent expiry and its presence running out, stay until its presence
    /// record has been collected (`crashCollection` after the crash), then hang up.
    case crash

    public var description: String { rawValue }

    /// How long the others stay after a crash before hanging up: the presence TTL (45 s), the collection's
    /// grace (45 s more) and one collection interval (60 s), docs/PROTOCOL.md §11.5.
    public static let crashCollection = Duration.seconds(150)
    /// How long the trial waits for the others to end their leg with the member that left.
    public static let closeBound = Duration.seconds(120)
    /// How long the trial waits for everyone's leaving to be answered after they hung up.
    public static let leaveBound = Duration.seconds(60)
}
