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
        absorb(0, into: &crc)
        absorb(base, into: &crc)
        absorb(0, into: &crc)
        if let server { absorb(server, into: &crc) }
        crc.update("udp".utf8)
        return String(crc.value)
    }

    // The inputs are fed from the stack: arrays for a separator byte and an address's bytes were
    // allocated for every candidate.

    private static func absorb(_ byte: UInt8, into crc: inout CRC32) {
        withUnsafeBytes(of: byte) { crc.update($0) }
    }

    /// The address in network byte order, as `IPAddress.addressBytes` gives it.
    private static func absorb(_ address: IPAddress, into crc: inout CRC32) {
        switch address {
        case .v4(let v): withUnsafeBytes(of: v.bigEndian) { crc.update($0) }
        case .v6(let v): withUnsafeBytes(of: v.value.bigEndian) { crc.update($0) }
        }
    }
}
