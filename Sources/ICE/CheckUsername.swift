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
        // Read through the bytes (a native string's UTF-8 is contiguous).
        asciiLocalLength = username.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            var colon: Int?
            for i in bytes.indices {
                let byte = bytes[i]
                if byte >= 0x80 { return nil }
                if colon == nil, byte == UInt8(ascii: ":") { colon = i }
            }
            return colon ?? bytes.count
        } ?? nil
    }

    /// Whether the part before the first colon (all of it without one) is `ufrag`.
    func localPartIs(_ ufrag: String) -> Bool {
        if let n = asciiLocalLength {
            // Equal bytes answer yes: the local part is ASCII, so the ufrag is the same ASCII text.
            // Different bytes answer no only when the ufrag is ASCII too; a non-ASCII ufrag may
            // still be canonically equivalent (U+212A KELVIN SIGN is "K"), so `String` decides.
            let byBytes = ufrag.utf8.withContiguousStorageIfAvailable { fragment -> Bool? in
                if fragment.count == n {
                    // Without contiguous bytes (not a native string), `String` decides. The
                    // username has at least `n` bytes: its local part is that long.
                    guard let same = username.utf8.withContiguousStorageIfAvailable({ text -> Bool in
                        for i in 0..<n where fragment[i] != text[i] { return false }
                        return true
                    }) else { return nil }
                    if same { return true }
                }
                for byte in fragment where byte >= 0x80 { return nil }
                return false
            } ?? nil
            if let byBytes { return byBytes }
        }
        return username[..<(username.firstIndex(of: ":") ?? username.endIndex)] == ufrag
    }
}
