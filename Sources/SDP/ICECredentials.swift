// ICE credentials in SDP: `a=ice-ufrag` and `a=ice-pwd`, RFC 8839 §5.4; their randomness,
// RFC 8445 §5.3.

/// The username fragment and password of one ICE generation (a new pair means an ICE restart).
public struct ICECredentials: Hashable, Sendable {
    /// `ice-ufrag`: 4–256 ice-chars, at least 24 bits of randomness.
    public var usernameFragment: String
    /// `ice-pwd`: 22–256 ice-chars, at least 128 bits of randomness.
    public var password: String

    public init(usernameFragment: String, password: String) {
        self.usernameFragment = usernameFragment
        self.password = password
    }

    /// The 64 ice-chars (RFC 8839 §5.1): each random one carries 6 bits.
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Fresh credentials: an 8-character fragment (48 bits) and a 24-character password
    /// (144 bits), drawn from `generator` so a seeded run reproduces them.
    public static func random<Generator: RandomNumberGenerator>(using generator: inout Generator) -> ICECredentials {
        func draw(_ count: Int) -> String {
            String(decoding: (0..<count).map { _ in alphabet[Int(generator.next() & 63)] }, as: UTF8.self)
        }
        return ICECredentials(usernameFragment: draw(8), password: draw(24))
    }

    /// True when `text` is a valid `ice-ufrag` value.
    public static func isValidUsernameFragment(_ text: String) -> Bool {
        isICEString(Array(text.utf8)[...], lengths: 4...256)
    }

    /// True when `text` is a valid `ice-pwd` value.
    public static func isValidPassword(_ text: String) -> Bool {
        isICEString(Array(text.utf8)[...], lengths: 22...256)
    }

    static func isICEString(_ bytes: ArraySlice<UInt8>, lengths: ClosedRange<Int>) -> Bool {
        bytes.count >= lengths.lowerBound && bytes.count <= lengths.upperBound
            && SDPGrammar.all(bytes, SDPGrammar.isICEChar)
    }
}
