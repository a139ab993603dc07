// The media type of an `m=` line, RFC 8866 §5.14 (audio, video, text, application, message;
// more may be registered).

/// What a media section carries.
public enum MediaKind: Hashable, Sendable, CustomStringConvertible {
    /// `audio`.
    case audio
    /// `video`.
    case video
    /// `application`: WebRTC data channels (SCTP over DTLS).
    case application
    /// `text`.
    case text
    /// `message`.
    case message
    /// Any other media type token, kept as written.
    case other(String)

    /// The kind for a media token, matched exactly (media types are written in lowercase).
    public init(token: String) {
        switch token {
        case "audio": self = .audio
        case "video": self = .video
        case "application": self = .application
        case "text": self = .text
        case "message": self = .message
        default: self = .other(token)
        }
    }

    public var description: String {
        switch self {
        case .audio: "audio"
        case .video: "video"
        case .application: "application"
        case .text: "text"
        case .message: "message"
        case .other(let token): token
        }
    }
}
