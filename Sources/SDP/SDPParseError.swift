// Errors of the session description parser (RFC 8866 §5 and §9 syntax, RFC 8829 §5.8 rules).

/// Why a session description could not be read: which line, what it said, what was wrong.
///
/// Line numbers count from 1 and include blank lines; a problem found at the end of the input
/// (a required line never came) names the line after the last one, with empty text.
public struct SDPParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong, for code that reacts.
    public enum Kind: Hashable, Sendable {
        /// There were no lines at all.
        case empty
        /// The first line is not a `v=` line.
        case missingVersion
        /// `v=` is not `0`.
        case unsupportedVersion
        /// Not of the form `<letter>=<value>` (includes blank lines followed by more lines).
        case malformedLine
        /// The line has a NUL or a lone carriage return, or is not UTF-8.
        case invalidCharacter
        /// The line is longer than the parser's limit.
        case lineTooLong
        /// A required line (`o=`, `s=`, `t=`) is missing or not where it must be.
        case missingLine
        /// A line that may appear only once appears again (`v=`, `o=`, `s=`, `c=`).
        case duplicateLine
        /// A session-level line (`o=`, `s=`, `t=`, `r=`, `z=`, `u=`, `e=`, `p=`) inside a media section.
        case misplacedLine
        /// `o=` does not have six fields with numeric session id and version.
        case invalidOrigin
        /// `c=` does not have network type, address type and address.
        case invalidConnection
        /// `b=` is not `<type>:<number>`.
        case invalidBandwidth
        /// `t=` is not two numbers.
        case invalidTiming
        /// `m=` does not have media, port, protocol and formats.
        case invalidMediaLine
        /// The port of an `m=` line is not a number from 0 to 65535 (or its port count is bad).
        case invalidPort
        /// An RTP format (in `m=`, `a=rtpmap`, `a=rtcp-fb`) is not a payload type from 0 to 127.
        case invalidPayloadType
        /// An attribute at the wrong level: a media-level one before any `m=`, or a session-level
        /// one inside a media section.
        case misplacedAttribute
        /// A known attribute whose value does not fit its grammar.
        case invalidAttribute
        /// An `a=candidate` line that does not parse; `candidateError` says why.
        case invalidCandidate
    }

    /// What was wrong.
    public var kind: Kind
    /// The 1-based number of the offending line.
    public var lineNumber: Int
    /// The offending line, without its line break (lossily decoded if it was not UTF-8).
    public var line: String
    /// The problem in words.
    public var detail: String
    /// For `.invalidCandidate`, the candidate parser's error.
    public var candidateError: CandidateParseError?

    public init(kind: Kind, lineNumber: Int, line: String, detail: String, candidateError: CandidateParseError? = nil) {
        self.kind = kind
        self.lineNumber = lineNumber
        self.line = line
        self.detail = detail
        self.candidateError = candidateError
    }

    public var description: String {
        let shown = line.isEmpty ? "" : " \(SDPGrammar.quoted(line))"
        return "invalid session description, line \(lineNumber)\(shown): \(detail)"
    }
}

/// A problem found in one line, before the parser attaches the line number and text.
struct SDPLineFailure: Error {
    var kind: SDPParseError.Kind
    var detail: String
    var candidateError: CandidateParseError?

    init(_ kind: SDPParseError.Kind, _ detail: String, candidateError: CandidateParseError? = nil) {
        self.kind = kind
        self.detail = detail
        self.candidateError = candidateError
    }
}
