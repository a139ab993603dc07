// Controlling and controlled roles, tie-breakers, and role conflicts: RFC 8445 §6.1.1, §7.1.3,
// §7.2.5.1 (487 response to our request) and §7.3.1.1 (conflict detected in a request we received).

/// Which agent nominates (RFC 8445 §6.1.1).
public enum Role: String, Hashable, Sendable, CustomStringConvertible {
    /// This agent nominates pairs (USE-CANDIDATE); it sends ICE-CONTROLLING.
    case controlling
    /// The peer nominates; this agent sends ICE-CONTROLLED.
    case controlled

    /// The other role.
    public var flipped: Role { self == .controlling ? .controlled : .controlling }

    public var description: String { rawValue }
}

/// What to do about the role attribute of a received Binding request (RFC 8445 §7.3.1.1).
public enum RoleConflictResolution: Hashable, Sendable {
    /// No conflict: process the request.
    case none
    /// Switch to the other role, then process the request.
    case switchRole
    /// Answer 487 Role Conflict and keep our role.
    case respond487

    /// Resolves our `role` and `tieBreaker` against a request's ICE-CONTROLLING
    /// (`remoteControlling`) or ICE-CONTROLLED (`remoteControlled`) tie-breaker.
    public static func forRequest(
        role: Role, tieBreaker: UInt64, remoteControlling: UInt64?, remoteControlled: UInt64?
    ) -> RoleConflictResolution {
        switch role {
        case .controlling:
            // Both think they are controlling: the larger tie-breaker stays controlling.
            guard let theirs = remoteControlling else { return .none }
            return tieBreaker >= theirs ? .respond487 : .switchRole
        case .controlled:
            // Both think they are controlled: the larger tie-breaker becomes controlling.
            guard let theirs = remoteControlled else { return .none }
            return tieBreaker >= theirs ? .switchRole : .respond487
        }
    }

    /// The role to take after our request, sent in `roleWhenSent`, got 487 (RFC 8445 §7.2.5.1):
    /// the opposite of the role the request claimed. Nil when we have already switched since.
    public static func roleAfter487(roleWhenSent: Role, currentRole: Role) -> Role? {
        currentRole == roleWhenSent ? roleWhenSent.flipped : nil
    }
}
