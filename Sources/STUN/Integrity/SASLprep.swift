// SASLprep: RFC 4013, the stringprep (RFC 3454) profile STUN applies to passwords before keying
// HMACs with them (RFC 5389 §15.4; RFC 5769 §2.4's vector depends on it).
//
//   §2.1 Map:        non-ASCII spaces (RFC 3454 C.1.2) → U+0020;
//                    "commonly mapped to nothing" (B.1) → removed.
//   §2.2 Normalize:  Unicode NFKC (Foundation's precomposedStringWithCompatibilityMapping).
//   §2.3 Prohibit:   C.1.2, C.2.1, C.2.2, C.3, C.4, C.5, C.6, C.7, C.8, C.9 → error.
//   §2.4 Bidi:       RFC 3454 §6 — with RandALCat characters present, no LCat characters, and
//                    the first and last characters RandALCat.
//
// Limits, stated plainly: unassigned code points (A.1) are allowed, as RFC 4013 permits for
// "queries" (a password being checked is one). The bidi check uses RFC 3454's table D.1 for
// RandALCat but approximates D.2 (LCat, hundreds of ranges) by "a letter or spacing mark outside
// the Hebrew/Arabic blocks"; it only matters for strings that mix right-to-left characters in.
// NFKC is Foundation's current Unicode version, not Unicode 3.2; they differ only for
// characters added or corrected since, which real passwords rarely hold.

import Foundation
import ZoneCore

/// The SASLprep profile of stringprep (RFC 4013).
public enum SASLprep {
    /// `text` prepared by SASLprep: mapped, NFKC-normalized, and checked.
    ///
    /// - Throws: `STUNError` of kind `prohibitedCharacter`, naming the character and the
    ///   RFC 3454 table that prohibits it, or explaining the bidi rule it breaks.
    public static func prepare(_ text: String) throws(STUNError) -> String {
        // Printable ASCII maps, normalizes and checks to itself: skip the work (ICE passwords).
        // Read from the string's contiguous UTF-8 when it has it (native strings do).
        let isPrintable: (UInt8) -> Bool = { $0 >= 0x20 && $0 < 0x7F }
        if text.utf8.withContiguousStorageIfAvailable({ $0.allSatisfy(isPrintable) })
            ?? text.utf8.allSatisfy(isPrintable) {
            return text
        }

        var mapped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isNonASCIISpace(scalar.value) {
                mapped.append(" ")
            } else if !isMappedToNothing(scalar.value) {
                mapped.append(scalar)
            }
        }
        let normalized = String(mapped).precomposedStringWithCompatibilityMapping

        var hasRandAL = false
        var hasL = false
        for scalar in normalized.unicodeScalars {
            if let table = prohibitingTable(scalar.value) {
                throw STUNError(.prohibitedCharacter,
                                "SASLprep prohibits U+\(Hex.string(scalar.value, digits: 4)) (RFC 3454 table \(table))")
            }
            if isRandALCat(scalar.value) { hasRandAL = true } else if isLCat(scalar) { hasL = true }
        }
        if hasRandAL {
            guard !hasL else {
                throw STUNError(.prohibitedCharacter,
                                "SASLprep: right-to-left and left-to-right characters are mixed (RFC 3454 §6)")
            }
            let scalars = normalized.unicodeScalars
            guard let first = scalars.first, let last = scalars.last,
                isRandALCat(first.value), isRandALCat(last.value)
            else {
                throw STUNError(.prohibitedCharacter,
                                "SASLprep: right-to-left text must start and end with a right-to-left character "
                                    + "(RFC 3454 §6)")
            }
        }
        return normalized
    }

    /// RFC 3454 C.1.2, non-ASCII space characters.
    static func isNonASCIISpace(_ v: UInt32) -> Bool {
        v == 0x00A0 || v == 0x1680 || (0x2000...0x200B).contains(v) || v == 0x202F || v == 0x205F || v == 0x3000
    }

    /// RFC 3454 B.1, characters commonly mapped to nothing.
    static func isMappedToNothing(_ v: UInt32) -> Bool {
        switch v {
        case 0x00AD, 0x034F, 0x1806, 0x180B, 0x180C, 0x180D, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF: true
        case 0xFE00...0xFE0F: true
        default: false
        }
    }

    /// The RFC 3454 table that prohibits `v` under RFC 4013 §2.3, or nil.
    static func prohibitingTable(_ v: UInt32) -> String? {
        if isNonASCIISpace(v) { return "C.1.2" }
        if v < 0x20 || v == 0x7F { return "C.2.1" }
        switch v {
        case 0x0080...0x009F, 0x06DD, 0x070F, 0x180E, 0x200C, 0x200D, 0x2028, 0x2029, 0x2060...0x2063,
            0xFEFF, 0x1D173...0x1D17A:
            return "C.2.2"
        case 0xE000...0xF8FF, 0xF0000...0xFFFFD, 0x100000...0x10FFFD:
            return "C.3"
        case 0xFDD0...0xFDEF:
            return "C.4"
        case 0xD800...0xDFFF:
            return "C.5"
        case 0xFFF9...0xFFFD:
            return "C.6"
        case 0x2FF0...0x2FFB:
            return "C.7"
        case 0x0340, 0x0341, 0x200E, 0x200F, 0x202A...0x202E, 0x206A...0x206F:
            return "C.8"
        case 0xE0001, 0xE0020...0xE007F:
            return "C.9"
        default:
            // C.4 also holds the last two code points of every plane (U+xFFFE, U+xFFFF).
            return v & 0xFFFE == 0xFFFE ? "C.4" : nil
        }
    }

    /// RFC 3454 D.1, characters with bidirectional property R or AL.
    static func isRandALCat(_ v: UInt32) -> Bool {
        switch v {
        case 0x05BE, 0x05C0, 0x05C3, 0x05D0...0x05EA, 0x05F0...0x05F4, 0x061B, 0x061F, 0x0621...0x063A,
            0x0640...0x064A, 0x066D...0x066F, 0x0671...0x06D5, 0x06DD, 0x06E5...0x06E6, 0x06FA...0x06FE,
            0x0700...0x070D, 0x0710, 0x0712...0x072C, 0x0780...0x07A5, 0x07B1, 0x200F, 0xFB1D,
            0xFB1F...0xFB28, 0xFB2A...0xFB36, 0xFB38...0xFB3C, 0xFB3E, 0xFB40...0xFB41, 0xFB43...0xFB44,
            0xFB46...0xFBB1, 0xFBD3...0xFD3D, 0xFD50...0xFD8F, 0xFD92...0xFDC7, 0xFDF0...0xFDFC,
            0xFE70...0xFE74, 0xFE76...0xFEFC:
            true
        default:
            false
        }
    }

    /// An approximation of RFC 3454 D.2 (bidirectional property L): letters and spacing marks
    /// outside the right-to-left blocks.
    static func isLCat(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if (0x0590...0x08FF).contains(v) || (0xFB1D...0xFDFF).contains(v) || (0xFE70...0xFEFF).contains(v) {
            return false
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .spacingMark:
            return true
        default:
            return false
        }
    }
}
