// Our sans-I/O TURN client on a real UDP socket, driven on the dedicated thread by the wall
// clock: outputs go to the socket, datagrams and timers come back in. Everything the server
// sent is kept decoded, so a test can see which answers (401, 438…) came.

import Net
import STUN
import TURN
import ZoneCore

final class TURNClientDriver {
    let socket: UDPSocket
    var client: TURNClient
    let clock = WallClock()
    private(set) var events: [TURNClient.Event] = []
    /// STUN messages received from the server, in order.
    private(set) var fromServer: [STUNMessage] = []

    init(socket: UDPSocket, configuration: TURNClientConfiguration) {
        self.socket = socket
        client = TURNClient(configuration: configuration, now: WallClock().now())
    }

    /// Runs until `condition` holds (true) or `timeout` passes (false).
    @discardableResult
    func run(timeout: Duration, until condition: (TURNClientDriver) -> Bool) -> Bool {
        let end = clock.now() + timeout
        while true {
            flush()
            if condition(self) { return true }
            guard clock.now() < end else { return false }
            let wake = min(end, client.nextDeadline ?? end)
            let (datagrams, _) = SocketWait.wait([socket], until: wake, clock: clock)
            let now = clock.now()
            for datagram in datagrams {
                if let message = try? STUNMessage(decoding: datagram.bytes) { fromServer.append(message) }
                client.handle(.datagram(datagram.bytes, from: datagram.from), now: now)
            }
            if let deadline = client.nextDeadline, deadline <= now { client.handle(.timer, now: now) }
        }
    }

    func flush() {
        while let output = client.pollOutput() {
            switch output {
            case .transmit(let bytes, let to): _ = socket.send(bytes, to: to)
            case .event(let event): events.append(event)
            }
        }
    }

    /// Payloads received from peers.
    var received: [(bytes: [UInt8], from: Endpoint)] {
        events.compactMap { if case .data(let b, let f) = $0 { (b, f) } else { nil } }
    }

    /// Error codes the server answered with, in order.
    var errorCodes: [Int] { fromServer.compactMap { $0.errorCode?.code } }
}
