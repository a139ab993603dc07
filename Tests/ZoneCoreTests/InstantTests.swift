import Testing
@testable import ZoneCore

@Test func instantArithmetic() {
    let t = Instant.milliseconds(5) + .milliseconds(3)
    #expect(t.millisecondsSinceEpoch == 8)
}
