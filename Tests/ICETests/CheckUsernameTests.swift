// A check's USERNAME is read byte by byte when it and our ufrag are ASCII, by characters
// otherwise; both readings must give what `String` gives for the part before the first colon.

import Testing
@testable import ICE

@Suite struct CheckUsernameTests {
    /// What the agent did before: the characters up to the first colon, compared as `String`s.
    private static func byCharacters(_ username: String, _ ufrag: String) -> Bool {
        username[..<(username.firstIndex(of: ":") ?? username.endIndex)] == ufrag
    }

    @Test func readsAsStringComparisonDoes() {
        let usernames = [
            "abcd:wxyz", "abcd", "abcd:", ":abcd", "", ":", "abc:wxyz", "abcde:wxyz", "ab:cd:ef", "abcd:wx:yz",
            "abcd\r\n:x", "ab\r\ncd:x", "abcd:\u{301}x", "abcd\u{301}:x", "\u{212A}bcd:x", "Kbcd:x", "a\u{e9}cd:x",
            "ae\u{301}cd:x", "abcd\u{200D}:x", "ABCD:wxyz", "abcd :x", "\u{1F600}:x",
        ]
        let ufrags = ["abcd", "ab", "abcde", "", "Kbcd", "\u{212A}bcd", "a\u{e9}cd", "ae\u{301}cd", "ABCD", "ab\r\ncd"]
        for username in usernames {
            let check = CheckUsername(username)
            for ufrag in ufrags {
                #expect(check.localPartIs(ufrag) == Self.byCharacters(username, ufrag),
                        "username \(username.unicodeScalars.map { $0.value }), ufrag \(ufrag)")
            }
        }
    }
}
