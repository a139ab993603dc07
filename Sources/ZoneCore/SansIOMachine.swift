// The one contract of every protocol machine in ZoneRTC (docs/ARCHITECTURE.md "The one rule"): inputs go
// in with the current instant, outputs are drained one at a time until there are none, and the
// machine says when it next wants `now` to move on. No machine touches a socket, a file or a
// clock, so the real driver and the simulator run the same code. The shape follows str0m's
// `handle_input` / `poll_output`.

/// A sans-I/O state machine.
///
/// A driver feeds every input with `handle(_:now:)`, then calls `pollOutput()` until it returns
/// nil, and arranges to feed the machine's timer input once `nextDeadline` has passed. Outputs
/// are handed out in the order the machine produced them; a composite machine passes every
/// output of its parts on, in order, through one place (nothing polled is dropped). A machine that
/// owns others (a call owns its transports) may be noncopyable: it has one owner, its driver.
public protocol SansIOMachine: ~Copyable {
    /// Something that happened: a datagram, a reply, a timer, a request of the user.
    associatedtype Input
    /// Something the machine wants done or reported.
    associatedtype Output

    /// Feeds one input at `now`.
    mutating func handle(_ input: Input, now: Instant)

    /// The oldest output not yet taken, or nil until the next input.
    mutating func pollOutput() -> Output?

    /// When the machine next wants its timer input, if ever.
    var nextDeadline: Instant? { get }
}

extension SansIOMachine where Self: ~Copyable {
    /// Every output now pending, in order — for tests and for drivers that batch.
    @inlinable
    public mutating func drainOutputs() -> [Output] {
        var outputs: [Output] = []
        while let output = pollOutput() { outputs.append(output) }
        return outputs
    }

    /// Feeds `input` and returns every output it caused, in order — for tests written one step
    /// per line (`#expect(machine.outputs(after: .x, now: t) == [...])`).
    @inlinable
    public mutating func outputs(after input: Input, now: Instant) -> [Output] {
        handle(input, now: now)
        return drainOutputs()
    }
}
