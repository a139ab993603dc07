// Roles, docs/PROTOCOL.md §3: fixed per pair by the byte-wise order of the two user IDs, so both
// peers agree without talking. Who makes the first offer may be decided otherwise: in a group
// call the later joiner does (docs/PROTOCOL.md §11.2); glare and restarts keep the order of IDs.

/// Who makes the first offer of a call and who yields in glare.
public struct PeerRoles: Hashable, Sendable {
    /// The lower user ID makes the first offer of every call.
    public let isOfferCreator: Bool
    /// The higher user ID is polite: it rolls back its own offer when offers collide
    /// (W3C WebRTC "perfect negotiation"); the lower one is impolite and ignores the other's.
    public let isPolite: Bool
    /// Whether this peer makes the first offer of the call: the offer creator unless told otherwise.
    public let makesFirstOffer: Bool

    /// The roles of `myUserID` against `remoteUserID`; `makesFirstOffer` overrides who offers first
    /// (nil: the offer creator).
    public init(myUserID: String, remoteUserID: String, makesFirstOffer: Bool? = nil) {
        isOfferCreator = SessionKey.precedes(myUserID, remoteUserID)
        isPolite = SessionKey.precedes(remoteUserID, myUserID)
        self.makesFirstOffer = makesFirstOffer ?? isOfferCreator
    }
}
