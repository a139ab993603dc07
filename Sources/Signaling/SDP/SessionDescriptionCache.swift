// Descriptions already in hand, by the text they were printed as. A negotiator that publishes
// an offer or answer remembers it here; a negotiator that reads an envelope whose payload is
// exactly such a text takes the description instead of parsing the text again. Both peers of a
// simulated call share one cache, so each description is parsed by nobody; peers in separate
// processes share nothing and parse as before. Printing then parsing gives an equal description
// (`SDPParser` keeps lines in printing order), so a hit changes nothing a peer does; text that
// matches no entry — anything a remote made — is parsed and checked as always.
import Synchronization

/// Session descriptions by their printed text, shared by the negotiators of one process.
public final class SessionDescriptionCache: Sendable {
    /// Entries kept at most; a full cache starts again empty (a call holds two per epoch).
    public static let capacity = 16

    private struct Key: Hashable {
        var text: String
        var type: SDPType
    }

    private let entries = Mutex<[Key: SessionDescription]>([:])

    public init() {}

    /// Remembers that `description` prints as `text`.
    public func remember(_ description: SessionDescription, as text: String) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[Key(text: text, type: description.type)] = description
        }
    }

    /// The description remembered as `text` with `type`, if any.
    public func description(printedAs text: String, type: SDPType) -> SessionDescription? {
        entries.withLock { $0[Key(text: text, type: type)] }
    }
}

extension SessionDescriptionCache: Hashable {
    // A cache never changes what a description is, so configurations that differ only in their
    // cache are the same configuration.
    public static func == (lhs: SessionDescriptionCache, rhs: SessionDescriptionCache) -> Bool { true }
    public func hash(into hasher: inout Hasher) {}
}
