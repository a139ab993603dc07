// Roles, spec §1 (after the reference design, seed 001 "ロール決定"): fixed per pair by the
// byte-wise order of the two user IDs, so both peers agree without talking.

/// Who makes the first offer of a call and who yields in glare.
public struct PeerRoles: Hashable, Sendable {
    /// The lower user ID makes the first offer of every call.
    public let isOfferCreator: Bool
    /// The higher user ID is polite: it rolls back its own offer when offers collide
    /// (W3C WebRTC "perfect negotiation"); the lower one is impolite and ignores the other's.
    public let isPolite: Bool

    public init(myUserID: String, remoteUserID: String) {
        isOfferCreator = SessionKey.precedes(myUserID, remoteUserID)
        isPolite = SessionKey.precedes(remoteUserID, myUserID)
    }
}
