// Candidate pairs and their states: RFC 8445 §6.1.2 (forming pairs, §6.1.2.3 pair priority) and
// §6.1.2.6 (pair states).

import ZoneCore

/// A local candidate paired with a remote one: a path the agent checks and may select.
public struct CandidatePair: Hashable, Sendable, CustomStringConvertible {
    /// A pair's progress through the checks (RFC 8445 §6.1.2.6).
    public enum State: String, Hashable, Sendable {
        /// Not checked yet, waiting for a pair of the same foundation to succeed first.
        case frozen
        /// Ready to be checked when its turn comes.
        case waiting
        /// A check was sent and is awaiting its response.
        case inProgress
        /// A check succeeded: the pair is (or generated) a valid pair.
        case succeeded
        /// The check failed: timeout, error response, or a non-symmetric response.
        case failed
    }

    /// The local candidate; a server-reflexive one is replaced by its base when pairing
    /// (RFC 8445 §6.1.2.4), so this is a host or relayed candidate, or a peer-reflexive one learned
    /// from a response.
    public var local: Candidate
    /// The remote candidate.
    public var remote: Candidate
    /// Where the pair stands.
    public var state: State
    /// The pair was nominated (USE-CANDIDATE sent by the controlling agent and answered).
    public var nominated: Bool

    /// Index in the checklist; stable for the agent's life.
    var id: Int
    /// Controlled side: USE-CANDIDATE arrived before our own check on this pair succeeded
    /// (RFC 8445 §7.3.1.5), so the pair is nominated once it does.
    var nominateOnSuccess = false
    /// True for pairs on the valid list (RFC 8445 §7.2.5.3.2).
    var valid = false
    /// The valid pair a successful check on this pair produced (itself, or one with a
    /// peer-reflexive local candidate).
    var validPairID: Int?

    init(id: Int, local: Candidate, remote: Candidate, state: State) {
        self.id = id
        self.local = local
        self.remote = remote
        self.state = state
        self.nominated = false
    }

    /// The pair foundation: the local and remote foundations joined (RFC 8445 §6.1.2.6).
    public var foundation: String { local.foundation + ":" + remote.foundation }

    /// Whether `other` has the same pair foundation: both candidates' foundations equal (without
    /// making the joined string `foundation` is).
    public func sharesFoundation(with other: CandidatePair) -> Bool {
        local.foundation == other.local.foundation && remote.foundation == other.remote.foundation
    }

    /// The pair priority (RFC 8445 §6.1.2.3) as seen by an agent in `role`.
    public func priority(role: Role) -> UInt64 {
        role == .controlling
            ? Priority.pair(controlling: local.priority, controlled: remote.priority)
            : Priority.pair(controlling: remote.priority, controlled: local.priority)
    }

    /// The address datagrams on this pair leave from: the local candidate's base.
    public var sendFrom: Endpoint { local.base }
    /// The address datagrams on this pair go to.
    public var sendTo: Endpoint { remote.address }

    public var description: String {
        "\(local.kind.rawValue) \(local.base) ⇄ \(remote.kind.rawValue) \(remote.address) [\(state.rawValue)"
            + (nominated ? ", nominated]" : "]")
    }
}
