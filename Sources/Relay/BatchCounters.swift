extension RelayDaemon {
    /// How well the data path batches its system calls, summed over threads: the figures that
    /// decide its kernel time per datagram (each call has a fixed cost; each UDP_SEGMENT message
    /// is routed and built once for all its datagrams).
    public struct BatchCounters: Sendable, Equatable {
        /// recvmmsg calls on the data path, and the datagrams they returned.
        public var receiveCalls = 0
        public var datagramsReceived = 0
        /// sendmmsg batches of relayed datagrams, the messages in them (a segmented run counts
        /// once) and the datagrams queued in them.
        public var sendCalls = 0
        public var messagesSent = 0
        public var datagramsSent = 0
        /// Queued datagrams the kernel did not take (EAGAIN, ENOBUFS: a full send buffer) or whose
        /// relayed socket was gone: forwarded by the engine's counters, lost here.
        public var datagramsNotSent = 0
        /// Rests the loop took before reading again (`Options.batchWait`).
        public var pauses = 0

        public init() {}

        mutating func add(_ other: BatchCounters) {
            receiveCalls += other.receiveCalls
            datagramsReceived += other.datagramsReceived
            sendCalls += other.sendCalls
            messagesSent += other.messagesSent
            datagramsSent += other.datagramsSent
            datagramsNotSent += other.datagramsNotSent
            pauses += other.pauses
        }
    }
}
