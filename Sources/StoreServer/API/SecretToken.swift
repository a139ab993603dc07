import ZoneCore

/// The secrets the daemon hands out — user tokens (registration, `zonertc store user add`, the
/// PostgreSQL user directory) and web push tokens (`tokens/create`): 256 bits from the system's
/// random source, as 64 lowercase hex digits. Long enough that guessing one is hopeless, which is why
/// they may be looked up by hash (docs/SECURITY.md).
public enum SecretToken {
    public static func make() -> String {
        var rng = SystemRandomNumberGenerator()
        var text = ""
        text.reserveCapacity(64)
        for _ in 0..<4 { text += Hex.string(rng.next() as UInt64, digits: 16) }
        return text
    }

    /// Whether `text` has the form `make` gives (64 lowercase hex digits): anything else is refused
    /// before it is hashed or looked up.
    public static func isWellFormed(_ text: String) -> Bool { Hex.isLowercase(text, digits: 64) }
}
