/// The USERNAME of a connectivity check as the receiver reads it: "local:remote" from our side
/// (RFC 8445 §7.3.1), of which only the part before the first colon names one of our ufrags.
///
/// The remote writes it, so it may be any text. When it and the ufrag are both ASCII, characters
/// are bytes (and two ASCII texts are equal exactly when their bytes are), so it is read byte by
/// byte; otherwise it is read by characters, as `String` compares. Either way the answer is the
/// same: finding the colon by `Character` cost more than the rest of the check's bookkeeping.
struct CheckUsername {
    let username: String
    /// Length in bytes of the part before the first colon when the whole username is ASCII.
    private let asciiLocalLength: Int?

    init(_ username: String) {
        self.username = username
        // Read through the bytes in place (`withUTF8` copies nothing for a native string).
        var text = username
        asciiLocalLength = text.withUTF8 { bytes -> Int? in
            var colon: Int?
            for (i, byte) in bytes.enumerated() {
                if byte >= 0x80 { return nil }
                if colon == nil, byte == UInt8(ascii: ":") { colon = i }
            }
            return colon ?? bytes.count
        }
    }

    /// Whether the part before the first colon (all of it without one) is `ufrag`.
    func localPartIs(_ ufrag: String) -> Bool {
        if let n = asciiLocalLength {
            var ufrag = ufrag
            var username = username
            let byBytes = ufrag.withUTF8 { fragment -> Bool? in
                guard fragment.allSatisfy({ $0 < 0x80 }) else { return nil }
                guard fragment.count == n else { return false }
                return username.withUTF8 { text in fragment.elementsEqual(UnsafeBufferPointer(rebasing: text[..<n])) }
            }
            if let byBytes { return byBytes }
        }
        return username[..<(username.firstIndex(of: ":") ?? username.endIndex)] == ufrag
    }
}
