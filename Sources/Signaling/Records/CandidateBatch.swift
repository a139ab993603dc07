// The `batch-v1` candidate encoding of spec §2:
//   {"v":1,"candidates":["candidate:…", …],"eoc":false}
// `eoc: true` marks end-of-candidates for the epoch (RFC 8838 §13–14). The candidate strings are
// the `candidate:…` form of RFC 8839 §5.1, parsed by `ICECandidate(parsing:)`.
import Foundation
import ZoneCore

/// The JSON body of a `batch-v1` chunk: candidate strings and the end-of-candidates flag.
public struct CandidateBatch: Hashable, Sendable {
    /// The only version there is.
    public static let version = 1

    /// The `candidate:…` strings, as carried (not yet parsed).
    public var candidates: [String]
    /// True when the sender has gathered everything for the epoch.
    public var endOfCandidates: Bool

    public init(candidates: [String], endOfCandidates: Bool) {
        self.candidates = candidates
        self.endOfCandidates = endOfCandidates
    }

    /// The JSON text, keys in the spec's order.
    public var json: String {
        let list = candidates.map(JSONString.quoted).joined(separator: ",")
        return "{\"v\":\(Self.version),\"candidates\":[\(list)],\"eoc\":\(endOfCandidates)}"
    }

    /// Reads the JSON text of a `batch-v1` chunk. `eoc` may be absent (false); unknown keys are
    /// ignored so a later sender can add some.
    public init(json text: String) throws(SignalRecordError) {
        func fail(_ detail: String) -> SignalRecordError {
            SignalRecordError(.malformedCandidateBatch, field: SignalField.candidate, detail: detail)
        }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(text.utf8))
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let key = context.codingPath.first?.stringValue ?? "the batch"
            throw fail("\"\(key)\" has the wrong type (\"v\": 1, \"candidates\": [strings], \"eoc\": true/false)")
        } catch DecodingError.keyNotFound(let key, _) {
            throw fail("\"\(key.stringValue)\" is missing")
        } catch {
            throw fail("not a JSON object: \(SDPGrammar.quoted(text, limit: 60))")
        }
        guard wire.v == Self.version else { throw fail("\"v\" is \(wire.v); only \(Self.version) is known") }
        candidates = wire.candidates
        endOfCandidates = wire.eoc ?? false
    }

    /// The JSON shape, checked by the decoder: unknown keys are ignored.
    private struct Wire: Decodable {
        var v: Int
        var candidates: [String]
        var eoc: Bool?
    }
}
