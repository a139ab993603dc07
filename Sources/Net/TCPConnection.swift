import CSystem
import Glibc
import ZoneCore

/// One accepted TCP connection on an event loop: reads what arrives, queues what to send and
/// writes it as the kernel takes it. Loop-confined; the protocol lives in whoever sets `onData`.
public final class TCPConnection {
    public let fd: Int32
    public let peer: Endpoint?
    public unowned let loop: EventLoop
    /// Bytes arrived.
    public var onData: (ArraySlice<UInt8>) -> Void = { _ in }
    /// The connection is gone (peer closed, error, or `close()`); called once.
    public var onClose: () -> Void = {}
    /// Every queued byte has been written.
    public var onDrained: () -> Void = {}
    /// The peer shut down its sending side. When set, the connection stays open for writing (the
    /// owner closes it); when nil, end of input closes the connection as before.
    public var onReadEnd: (() -> Void)?
    /// End of input was seen: the socket is no longer watched for reading.
    public private(set) var readEnded = false
    /// Reading is paused (`pauseReading`): what the peer sends waits in the kernel.
    public private(set) var readPaused = false
    private var outbound: [UInt8] = []
    private var outboundOffset = 0
    private var closeWhenDrained = false
    /// What the loop watches the socket for now, so an unchanged interest costs no `epoll_ctl`.
    private var watching = (interest: EventLoop.Readiness.readable, hangup: true)
    public private(set) var isClosed = false
    public private(set) var bytesIn = 0
    public private(set) var bytesOut = 0

    public init(fd: Int32, peer: Endpoint?, loop: EventLoop) {
        self.fd = fd
        self.peer = peer
        self.loop = loop
    }

    /// Starts watching the socket.
    public func start() throws {
        try loop.register(fd, interest: .readable) { [weak self] ready in self?.handle(ready) }
    }

    /// Bytes waiting to be written.
    public var pendingOutbound: Int { outbound.count - outboundOffset }

    /// Writes as much as the kernel takes now and queues the rest. With nothing queued before them
    /// the bytes are written from where they are, and only what the kernel did not take is copied:
    /// a response (an asset file of megabytes, too) is not copied into the queue to be written.
    public func send<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        guard !isClosed else { return }
        if pendingOutbound == 0, let written = bytes.withContiguousStorageIfAvailable({ writeNow($0) }) {
            guard let written, !isClosed else { return }
            if written < bytes.count { outbound.append(contentsOf: bytes.dropFirst(written)) }
        } else {
            outbound.append(contentsOf: bytes)
        }
        flush()
    }

    /// Writes from `bytes` until the kernel takes no more; how many it took (nil: closed on an error).
    /// The one write loop: `send` uses it on a caller's bytes, `flush` on the queue.
    private func writeNow(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n > 0 {
                offset += n
                bytesOut += n
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                close()
                return nil
            }
        }
        return offset
    }

    /// Stops (`true`) or resumes reading. While paused nothing is read: what the peer sends waits
    /// in the kernel's buffer, and TCP's window holds the peer back once that is full. A hangup or
    /// an error still closes the connection.
    public func pauseReading(_ paused: Bool) {
        guard paused != readPaused, !isClosed else { return }
        readPaused = paused
        watch(readInterest.union(pendingOutbound > 0 ? .writable : []), hangup: !readEnded && !readPaused)
        // Level-triggered: bytes that waited are reported again once the socket is watched for them.
    }

    /// What the socket is watched for on the reading side.
    private var readInterest: EventLoop.Readiness { readEnded || readPaused ? [] : .readable }

    /// Closes once everything queued is written.
    public func closeAfterFlush() {
        closeWhenDrained = true
        if pendingOutbound == 0 { close() }
    }

    /// Closes now, dropping anything unsent.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        loop.deregister(fd)
        Glibc.close(fd)
        onClose()
    }

    private func handle(_ ready: EventLoop.Readiness) {
        if ready.contains(.writable) { flush() }
        if readEnded || readPaused {
            // Half-closed (only writing is left) or paused: a hangup or error now means the peer is gone.
            if ready.contains(.error) || ready.rawValue & CS_EPOLLHUP != 0 { close() }
            return
        }
        if ready.contains(.readable) || ready.contains(.hangup) || ready.contains(.error) { readAvailable() }
    }

    private func readAvailable() {
        while !isClosed && !readPaused {
            // One buffer per loop, not per connection: 10,000 idle connections would otherwise hold 640 MB.
            let n = loop.read(fd)
            if n > 0 {
                bytesIn += n
                onData(loop.readBuffer[0..<n])
                if n < loop.readBuffer.count { return }
            } else if n == 0 {
                guard let onReadEnd else { close(); return }
                // Level-triggered epoll would report the end of input again and again: stop reading.
                readEnded = true
                watch(pendingOutbound > 0 ? .writable : [], hangup: false)
                onReadEnd()
                return
            } else {
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                if errno == EINTR { continue }
                close()
                return
            }
        }
    }

    private func flush() {
        guard !isClosed else { return }
        if pendingOutbound > 0 {
            let offset = outboundOffset
            guard let n = outbound.withUnsafeBufferPointer({ writeNow(UnsafeBufferPointer(rebasing: $0[offset...])) })
            else { return }
            outboundOffset += n
            if pendingOutbound > 0 {
                // The kernel took what it could: the rest goes when the socket is writable again.
                watch(readInterest.union(.writable), hangup: !readEnded && !readPaused)
                return
            }
        }
        // A long-lived connection (a push stream) keeps no more than a small buffer between writes.
        outbound.removeAll(keepingCapacity: outbound.capacity <= 4096)
        outboundOffset = 0
        watch(readInterest, hangup: !readEnded && !readPaused)
        if closeWhenDrained { close(); return }
        onDrained()
    }

    private func watch(_ interest: EventLoop.Readiness, hangup: Bool) {
        guard interest != watching.interest || hangup != watching.hangup else { return }
        watching = (interest, hangup)
        loop.setInterest(fd, interest, watchHangup: hangup)
    }
}
