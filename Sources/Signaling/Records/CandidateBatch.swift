// The `batch-v1` candidate encoding of spec §2:
//   {"v":1,"candidates":["candidate:…", …],"eoc":false}
// `eoc: true` marks end-of-candidates for the epoch (RFC 8838 §13–14). The candidate strings are
// the `candidate:…` form of RFC 8839 §5.1, parsed by `ICECandidate(parsing:)`.
import Foundation
import SDP
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
        Self.json(count: candidates.count, endOfCandidates: endOfCandidates,
                  capacity: candidates.reduce(40) { $0 + $1.utf8.count + 3 }) { index, text in
            text.appendJSONEscaped(candidates[index])
        }
    }

    /// The JSON text of a batch of `candidates`, as `json` of their descriptions is, each printed
    /// straight into it: a chunk is printed for every batch a peer sends, and a string made for
    /// each candidate (and an array of them) cost more than printing it.
    static func json(printing candidates: [ICECandidate], endOfCandidates: Bool) -> String {
        json(count: candidates.count, endOfCandidates: endOfCandidates, capacity: 40 + 128 * candidates.count) {
            index, text in
            text.appendJSONEscaped { candidates[index].write(to: &$0) }
        }
    }

    /// The JSON text of a batch of `count` candidates, `writeCandidate` writing each (escaped,
    /// without its quotes) at its place.
    private static func json(count: Int, endOfCandidates: Bool, capacity: Int,
                             writeCandidate: (Int, inout TextBuffer) -> Void) -> String {
        // Written as bytes into one buffer (`TextBuffer`), made a string once.
        var text = TextBuffer(capacity: capacity)
        text.ascii("{\"v\":")
        text.decimal(UInt(Self.version))
        text.ascii(",\"candidates\":[")
        for index in 0..<count {
            text.ascii(index == 0 ? "\"" : ",\"")
            writeCandidate(index, &text)
            text.ascii("\"")
        }
        text.ascii(endOfCandidates ? "],\"eoc\":true}" : "],\"eoc\":false}")
        return text.string
    }

    /// Reads the JSON text of a `batch-v1` chunk. `eoc` may be absent (false); unknown keys are
    /// ignored so a later sender can add some.
    public init(json text: String) throws(SignalRecordError) {
        if let batch = Self.canonical(text) {
            self = batch
            return
        }
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

    /// The batch when `text` is exactly what `json` writes and its strings hold no escapes —
    /// what every peer of ours sends — read without the JSON decoder (which dominates the cost
    /// of reading chunks); nil for anything else, which the decoder then reads.
    static func canonical(_ text: String) -> CandidateBatch? {
        var utf8 = Array(text.utf8)[...]
        let prefix = Array("{\"v\":\(version),\"candidates\":[".utf8)
        guard utf8.starts(with: prefix) else { return nil }
        utf8 = utf8.dropFirst(prefix.count)
        let endOfCandidates: Bool
        guard !utf8.isEmpty else { return nil }
        if utf8.reversed().starts(with: Array("],\"eoc\":true}".utf8).reversed()) {
            endOfCandidates = true
            utf8 = utf8.dropLast(13)
        } else if utf8.reversed().starts(with: Array("],\"eoc\":false}".utf8).reversed()) {
            endOfCandidates = false
            utf8 = utf8.dropLast(14)
        } else {
            return nil
        }
        var candidates: [String] = []
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), backslash = UInt8(ascii: "\\")
        while !utf8.isEmpty {
            guard utf8.first == quote else { return nil }
            utf8 = utf8.dropFirst()
            guard let close = utf8.firstIndex(of: quote) else { return nil }
            let body = utf8[..<close]
            // Escapes and control characters: leave them to the decoder.
            guard !body.contains(where: { $0 == backslash || $0 < 0x20 }) else { return nil }
            guard let string = String(validating: body, as: UTF8.self) else { return nil }
            candidates.append(string)
            utf8 = utf8[utf8.index(after: close)...]
            if utf8.first == comma {
                utf8 = utf8.dropFirst()
                guard !utf8.isEmpty else { return nil }
            } else if !utf8.isEmpty {
                return nil
            }
        }
        return CandidateBatch(candidates: candidates, endOfCandidates: endOfCandidates)
    }

    /// The JSON shape, checked by the decoder: unknown keys are ignored.
    private struct Wire: Decodable {
        var v: Int
        var candidates: [String]
        var eoc: Bool?
    }
}
