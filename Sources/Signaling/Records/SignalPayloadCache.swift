// Payloads of signal records printed in this process, by their text: the description of an
// offer or answer (`SignalEnvelope.payload`) and the candidates of a batch chunk
// (`SignalIceChunk.candidate`). A negotiator that publishes one remembers it here; a negotiator
// that reads a record whose payload is exactly such a text takes what it was printed from
// instead of parsing the text again. Both peers of a simulated call share one cache, so what
// one prints the other does not parse; peers in separate processes share nothing and parse as
// before. Printing then parsing gives an equal value (`SDPParser` keeps lines in printing order,
// a candidate prints every field it parses), so a hit changes nothing a peer does; text that
// matches no entry — anything a remote made — is parsed and checked as always.
import Synchronization
import SDP

/// Signal record payloads by their printed text, shared by the negotiators of one process.
public final class SignalPayloadCache: Sendable {
    /// Entries of each kind kept at most; a full table starts again empty (an epoch of a call
    /// adds two descriptions and a few chunks).
    public static let capacity = 16

    /// The tables are searched in order rather than hashed: they hold a few entries, and hashing
    /// a description's whole text for every lookup cost more than comparing it with each (texts of
    /// other lengths differ at once).
    private struct Tables {
        var descriptions: [(text: String, description: SessionDescription)] = []
        var batches: [(text: String, content: CandidateBatchContent)] = []
    }

    /// The candidates of a batch chunk, as printed.
    public struct CandidateBatchContent: Hashable, Sendable {
        public var candidates: [ICECandidate]
        public var endOfCandidates: Bool
    }

    private let tables = Mutex(Tables())

    public init() {}

    /// Remembers that `description` prints as `text`.
    public func remember(_ description: SessionDescription, as text: String) {
        tables.withLock { tables in
            if let i = tables.descriptions.firstIndex(where: {
                $0.description.type == description.type && $0.text == text
            }) {
                tables.descriptions[i].description = description
                return
            }
            if tables.descriptions.count >= Self.capacity { tables.descriptions.removeAll(keepingCapacity: true) }
            tables.descriptions.append((text, description))
        }
    }

    /// The description remembered as `text` with `type`, if any.
    public func description(printedAs text: String, type: SDPType) -> SessionDescription? {
        tables.withLock { tables in
            tables.descriptions.first { $0.description.type == type && $0.text == text }?.description
        }
    }

    /// Remembers that a batch chunk of `candidates` prints its `candidate` field as `text`.
    public func remember(_ candidates: [ICECandidate], endOfCandidates: Bool, as text: String) {
        let content = CandidateBatchContent(candidates: candidates, endOfCandidates: endOfCandidates)
        tables.withLock { tables in
            if let i = tables.batches.firstIndex(where: { $0.text == text }) {
                tables.batches[i].content = content
                return
            }
            if tables.batches.count >= Self.capacity { tables.batches.removeAll(keepingCapacity: true) }
            tables.batches.append((text, content))
        }
    }

    /// The batch remembered as `text`, if any.
    public func batch(printedAs text: String) -> CandidateBatchContent? {
        tables.withLock { tables in tables.batches.first { $0.text == text }?.content }
    }
}

extension SignalPayloadCache: Hashable {
    // A cache never changes what a record says, so configurations that differ only in their
    // cache are the same configuration.
    public static func == (lhs: SignalPayloadCache, rhs: SignalPayloadCache) -> Bool { true }
    public func hash(into hasher: inout Hasher) {}
}
