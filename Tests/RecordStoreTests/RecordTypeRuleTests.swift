import Testing
@testable import RecordStore

/// A record type holds 1–255 letters, digits, '_' and '.', checked byte by byte where the string
/// sits; anything else is refused with the message clients have always had.
@Suite struct RecordTypeRuleTests {
    @Test func lettersDigitsUnderscoreAndDot() {
        for ok in ["Note", "SignalEnvelope", "a", "cloudkit.share", "_x9", "Z0_.z", String(repeating: "a", count: 255),
                   "A_very_long_type_name_kept_in_its_own_storage.v2"] {
            #expect(NameRules.recordTypeProblem(ok) == nil, "\(ok)")
        }
    }

    @Test func anythingElseIsRefused() {
        #expect(NameRules.recordTypeProblem("") == "record type is empty")
        #expect(NameRules.recordTypeProblem(String(repeating: "a", count: 256))
                == "record type is longer than 255 characters")
        for bad in ["a b", "Note-1", "é", "type/x", "x\u{0}", "@", "[", "`", "{", "/", ":",
                    "a_long_type_name_with_one_bad_character_at_the_end!"] {
            let refusal = "record type '\(bad)' may hold only letters, digits, '_' and '.'"
            #expect(NameRules.recordTypeProblem(bad) == refusal)
        }
    }
}
