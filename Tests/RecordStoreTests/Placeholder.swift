import Testing
@testable import RecordStore

@Test func placeholder() {}
