// Lines this layer does not interpret (RFC 8866 §5: i=, u=, e=, p=, r=, z=, k=, and type
// letters it does not define), kept so a description round-trips.

/// An SDP line kept as text: its type letter and its value.
public struct SDPLine: Hashable, Sendable, CustomStringConvertible {
    /// The type letter, an ASCII letter.
    public var type: Character
    /// Everything after `=`.
    public var value: String

    public init(type: Character, value: String) {
        self.type = type
        self.value = value
    }

    /// `<type>=<value>`.
    public var description: String { "\(type)=\(value)" }

    /// Where the line goes among a section's lines when printed: RFC 8866 §5 orders session
    /// lines `i u e p` (before `c`, `b`, `t`), then `r z` (after `t`), then `k` and anything
    /// unknown (before the attributes); media sections have `i` before `c`, `b`, and `k` after.
    /// The parser stably sorts kept lines by this rank so that printing and parsing again
    /// gives the same list.
    var rank: Int {
        switch type {
        case "i", "u", "e", "p": 0
        case "r", "z": 1
        default: 2
        }
    }
}
