#if WebRTC
import COpenSSL

// OpenSSL's DTLS needs a BIO that keeps datagram boundaries (RFC 6347 §4.1.1: records never
// span datagrams); the stock memory BIO is a byte stream and would glue a flight's datagrams
// together. This BIO is the machine's mailbox instead: one datagram handed in at a time (a read
// returns it whole or not at all), every write one datagram out. Nothing here touches a socket.
//
// The BIO also learns where OpenSSL keeps its retransmission deadline: OpenSSL (1.1–3.1) passes
// a pointer to it with BIO_CTRL_DGRAM_SET_NEXT_TIMEOUT each time it starts or stops its timer.
// OpenSSL reads the wall clock against that deadline; the machine runs on the `now` it is given,
// so when the machine's own timer fires it marks OpenSSL's deadline as passed and asks
// DTLSv1_handle_timeout to retransmit — the only way a manual clock can drive OpenSSL's timer.

/// The datagrams between a `DTLSTransport` and its OpenSSL connection.
final class DatagramPipe {
    /// The datagram OpenSSL reads next, consumed by that read.
    var incoming: [UInt8]?
    /// Datagrams OpenSSL wrote, oldest first.
    var outgoing: [[UInt8]] = []
    /// Datagrams longer than this are cut by OpenSSL's fragmentation, not by us.
    let mtu: Int
    /// OpenSSL's own retransmission deadline, when its version lets us see it.
    private(set) var openSSLDeadline: UnsafeMutablePointer<timeval>?
    /// Whether OpenSSL's retransmission timer is running (a flight awaits its answer).
    private(set) var timerRunning = false
    /// How many times OpenSSL (re)started its timer.
    private(set) var timerStarts = 0

    init(mtu: Int) { self.mtu = mtu }

    /// Makes OpenSSL's retransmission deadline one that has passed, so DTLSv1_handle_timeout acts.
    /// False when this OpenSSL does not expose it.
    func expireOpenSSLTimer() -> Bool {
        guard let openSSLDeadline, timerRunning else { return false }
        // Any non-zero instant long past: zero would mean "no timer" to OpenSSL.
        openSSLDeadline.pointee = timeval(tv_sec: 1, tv_usec: 0)
        return true
    }

    fileprivate func timerChanged(_ deadline: UnsafeMutablePointer<timeval>) {
        let running = deadline.pointee.tv_sec != 0 || deadline.pointee.tv_usec != 0
        if running { timerStarts &+= 1 }
        timerRunning = running
        openSSLDeadline = DatagramPipe.deadlinePointerIsLive ? deadline : nil
    }

    /// Whether this OpenSSL lets the machine expire its timer (see the top of this file).
    var canExpireOpenSSLTimer: Bool { DatagramPipe.deadlinePointerIsLive }

    private static let deadlinePointerIsLive = zonertc_dtls_timer_pointer_is_live() == 1

    /// A new BIO reading from and writing to this pipe; the pipe must outlive it.
    func makeBIO() -> OpaquePointer? {
        guard let method = DatagramPipe.method.pointer, let bio = BIO_new(method) else { return nil }
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
        return bio
    }

    fileprivate static func of(_ bio: OpaquePointer?) -> DatagramPipe? {
        guard let bio, let data = BIO_get_data(bio) else { return nil }
        return Unmanaged<DatagramPipe>.fromOpaque(data).takeUnretainedValue()
    }

    /// The BIO_METHOD, made once per process.
    private static let method = BIOMethod()
}

/// The one BIO_METHOD all pipes share (OpenSSL objects are not Sendable; this one is immutable).
private final class BIOMethod: @unchecked Sendable {
    let pointer: OpaquePointer?

    init() {
        let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "zonertc datagram pipe")
        if let method {
            BIO_meth_set_create(method) { bio in
                BIO_set_init(bio, 1)
                return 1
            }
            BIO_meth_set_destroy(method) { bio in
                BIO_set_data(bio, nil)
                return 1
            }
            BIO_meth_set_write(method) { bio, data, length in
                guard let pipe = DatagramPipe.of(bio), let data, length >= 0 else { return -1 }
                zonertc_BIO_clear_retry_flags(bio)
                pipe.outgoing.append(Array(UnsafeRawBufferPointer(start: data, count: Int(length))))
                return length
            }
            BIO_meth_set_read(method) { bio, buffer, capacity in
                guard let pipe = DatagramPipe.of(bio), let buffer, capacity >= 0 else { return -1 }
                zonertc_BIO_clear_retry_flags(bio)
                guard let datagram = pipe.incoming else {
                    zonertc_BIO_set_retry_read(bio)
                    return -1
                }
                pipe.incoming = nil
                // A datagram longer than the read is cut, as recv(2) cuts it.
                let count = min(datagram.count, Int(capacity))
                datagram.withUnsafeBytes { bytes in
                    UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress!, byteCount: count)
                }
                return Int32(count)
            }
            BIO_meth_set_ctrl(method) { bio, command, _, argument in
                guard let pipe = DatagramPipe.of(bio) else { return 0 }
                switch command {
                case BIO_CTRL_FLUSH:
                    return 1
                case BIO_CTRL_PENDING:
                    return pipe.incoming.map { $0.count } ?? 0
                case BIO_CTRL_WPENDING:
                    return 0
                case BIO_CTRL_DGRAM_QUERY_MTU, BIO_CTRL_DGRAM_GET_FALLBACK_MTU:
                    return pipe.mtu
                case BIO_CTRL_DGRAM_SET_NEXT_TIMEOUT:
                    if let argument { pipe.timerChanged(argument.assumingMemoryBound(to: timeval.self)) }
                    return 1
                default:
                    // Peer addresses, connect, MTU overhead: meaningless for a pipe.
                    return 0
                }
            }
        }
        pointer = method
    }
}
#endif
