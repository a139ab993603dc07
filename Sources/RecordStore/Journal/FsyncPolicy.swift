/// When an append counts as durable, and so when a write is acknowledged.
public enum FsyncPolicy: String, Sendable, Hashable, CaseIterable {
    /// `fdatasync` after every entry before acknowledging it.
    case always
    /// Concurrent writers share one `fdatasync`: group commit (the default).
    case batch
    /// Written to the OS, never synced: survives a process crash, not a power cut.
    case none
}
