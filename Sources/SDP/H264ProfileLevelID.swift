// The H.264 `profile-level-id` format parameter, RFC 6184 §8.1: three bytes in hex —
// profile_idc, profile-iop (constraint_set0…5 flags and two reserved bits) and level_idc — and
// how an answer picks it, §8.2.2: the profile must be the same (as Table 5 maps
// profile_idc + profile-iop to a profile), the level is the answerer's own when both sides say
// `level-asymmetry-allowed=1`, else no higher than the offer's.

import ZoneCore

/// A parsed `profile-level-id`.
public struct H264ProfileLevelID: Hashable, Sendable, CustomStringConvertible {
    /// The profiles WebRTC stacks negotiate, by RFC 6184 Table 5 (and H.264 Annex A for High
    /// with constraint_set4/5, what libwebrtc calls Constrained High).
    public enum Profile: Hashable, Sendable {
        case constrainedBaseline, baseline, main, extended, high, constrainedHigh, high10, high422, high444
    }

    /// profile_idc.
    public var profileIDC: UInt8
    /// profile-iop: constraint_set0_flag is the top bit.
    public var profileIOP: UInt8
    /// level_idc: ten times the level number (31 is level 3.1); see `isLevel1b`.
    public var levelIDC: UInt8

    public init(profileIDC: UInt8, profileIOP: UInt8, levelIDC: UInt8) {
        self.profileIDC = profileIDC
        self.profileIOP = profileIOP
        self.levelIDC = levelIDC
    }

    /// Reads six hex digits; nil for anything else (the value comes from the remote).
    public init?(_ text: some StringProtocol) {
        // Read into one number (answering an offer reads four of these).
        let digits = text.utf8
        guard digits.count == 6, let value = Hex.integer(digits, as: UInt32.self) else { return nil }
        self.init(profileIDC: UInt8(truncatingIfNeeded: value >> 16), profileIOP: UInt8(truncatingIfNeeded: value >> 8),
                  levelIDC: UInt8(truncatingIfNeeded: value))
    }

    /// RFC 6184 §8.1: when absent, profile-level-id is `42000A` (Baseline, level 1).
    public static let absentDefault = H264ProfileLevelID(profileIDC: 0x42, profileIOP: 0x00, levelIDC: 0x0A)

    /// The profile, or nil when the bytes match no row of Table 5 (such a codec is declined).
    public var profile: Profile? {
        let iop = profileIOP
        // Bits from the top: constraint_set0 = 0x80, set1 = 0x40, set2 = 0x20, set3 = 0x10.
        func flags(_ mask: UInt8, _ value: UInt8) -> Bool { iop & mask == value }
        switch profileIDC {
        case 0x42:
            // set1 marks the Constrained Baseline subset; the reserved low bits must be zero.
            guard flags(0x0F, 0) else { return nil }
            return flags(0x40, 0x40) ? .constrainedBaseline : .baseline
        case 0x4D:
            guard flags(0x0F, 0) else { return nil }
            return flags(0x80, 0x80) ? .constrainedBaseline : .main
        case 0x58:
            guard flags(0x0F, 0) else { return nil }
            switch iop & 0xC0 {
            case 0xC0: return .constrainedBaseline
            case 0x80: return .baseline
            default: return .extended
            }
        case 0x64:
            switch iop {
            case 0x00: return .high
            case 0x0C: return .constrainedHigh
            default: return nil
            }
        case 0x6E: return iop == 0 ? .high10 : nil
        case 0x7A: return iop == 0 ? .high422 : nil
        case 0xF4: return iop == 0 ? .high444 : nil
        default: return nil
        }
    }

    /// Level 1b: level_idc 11 with constraint_set3 in Baseline, Main and Extended, or level_idc 9.
    public var isLevel1b: Bool {
        levelIDC == 9 || (levelIDC == 11 && profileIOP & 0x10 != 0 && [0x42, 0x4D, 0x58].contains(profileIDC))
    }

    /// The level as an ordinal for comparisons: 1b sits between 1 and 1.1.
    var levelRank: Int {
        isLevel1b ? 10 * 2 + 1 : Int(levelIDC) * 2
    }

    /// This profile at `other`'s level (1b carried the way this profile writes it).
    func atLevel(of other: H264ProfileLevelID) -> H264ProfileLevelID {
        var result = self
        result.profileIOP &= ~0x10
        if other.isLevel1b {
            if [0x42, 0x4D, 0x58].contains(profileIDC) {
                result.levelIDC = 11
                result.profileIOP |= 0x10
            } else {
                result.levelIDC = 9
            }
        } else {
            result.levelIDC = other.levelIDC
        }
        return result
    }

    /// The profile-level-id an answerer with `self` (its own preference) puts in its answer to
    /// an offer of `offered` (RFC 6184 §8.2.2); nil when the profiles differ.
    ///
    /// The profile bytes are the offer's (so the offerer recognizes its own profile); the level
    /// is ours when both allow asymmetry, else the lower of the two.
    public func answering(_ offered: H264ProfileLevelID, levelAsymmetryAllowed: Bool) -> H264ProfileLevelID? {
        guard let profile, profile == offered.profile else { return nil }
        let level = levelAsymmetryAllowed || levelRank <= offered.levelRank ? self : offered
        return offered.atLevel(of: level)
    }

    /// Six lowercase hex digits.
    public var description: String {
        Hex.string(UInt32(profileIDC) << 16 | UInt32(profileIOP) << 8 | UInt32(levelIDC), digits: 6)
    }
}
