// Errors from the Media module: malformed files, RTP/RTCP packets and payloads.
//
// Every reader and parser here throws `MediaError` instead of trapping, with a kind a caller can
// switch on and, for files, the byte offset where the problem was found.

/// A typed error from a Media parser, reader or depacketizer.
public struct MediaError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, for callers that react differently to each.
    public enum Kind: Equatable, Sendable {
        /// The input ended before a complete structure (header, frame, packet).
        case truncated
        /// A magic number or signature was not what the format requires.
        case badMagic
        /// A size or count field exceeds the limits this reader accepts.
        case tooLarge
        /// A field holds a value the format forbids.
        case malformed
        /// A valid feature this implementation does not handle.
        case unsupported
    }

    /// What went wrong.
    public var kind: Kind
    /// The byte offset in the input where it was found, when the input is a file or stream.
    public var offset: Int?
    /// A sentence a person can act on.
    public var message: String

    public init(_ kind: Kind, at offset: Int? = nil, _ message: String) {
        self.kind = kind
        self.offset = offset
        self.message = message
    }

    public var description: String {
        if let offset { return "\(kind) at offset \(offset): \(message)" }
        return "\(kind): \(message)"
    }
}
