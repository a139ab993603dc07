// Candidate foundations: RFC 8445 §5.1.1.3.
//
// Two candidates share a foundation when they have the same type, the same base IP address,
// the same STUN/TURN server IP address (for reflexive and relayed candidates) and the same
// transport. The foundation is any string of up to 32 ice-chars that is equal for equal inputs
// and (with high probability) different otherwise; we print the CRC-32 of those inputs in decimal,
// as pion and libjuice do with their hashes.
//
// (The file is not called `Foundation` the type: that would shadow the toolchain's module.)

import ZoneCore

/// Foundation strings for local candidates.
public enum CandidateFoundation {
    /// The foundation of a local candidate of `kind` whose base has the IP `base`, obtained from the
    /// server at `server` (nil for host and peer-reflexive candidates), over UDP.
    public static func compute(kind: Candidate.Kind, base: IPAddress, server: IPAddress? = nil) -> String {
        var crc = CRC32()
        crc.update(kind.rawValue.utf8)
        crc.update([0])
        crc.update(base.addressBytes)
        crc.update([0])
        if let server { crc.update(server.addressBytes) }
        crc.update("udp".utf8)
        return String(crc.value)
    }
}
