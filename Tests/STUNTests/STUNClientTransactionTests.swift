// The one STUN client transaction (RFC 8489 §6.2.1): its schedule with the RFC's values, with
// ICE's shorter ones, a single send, cancellation, and a response ending it.

import Testing
import ZoneCore
@testable import STUN

@Suite struct STUNClientTransactionTests {
    let start = Instant.seconds(100)
    let request: [UInt8] = [0, 1, 0, 0]

    /// Fires the timer at every deadline until the transaction times out; returns the sends
    /// (as offsets from `start`) and the instant of the timeout.
    func run(_ transaction: inout STUNClientTransaction) -> (sends: [Double], timedOutAt: Double?) {
        var sends: [Double] = []
        var timedOutAt: Double?
        var now = start
        for output in transaction.drainOutputs() where output == .transmit(request) {
            sends.append((now - start).milliseconds)
        }
        while let deadline = transaction.nextDeadline {
            now = deadline
            for output in transaction.outputs(after: .timer, now: now) {
                switch output {
                case .transmit: sends.append((now - start).milliseconds)
                case .timedOut: timedOutAt = (now - start).milliseconds
                }
            }
        }
        return (sends, timedOutAt)
    }

    @Test("RFC 8489 §6.2.1's example: sends at 0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5 s; timeout at 39.5 s")
    func rfcSchedule() {
        var transaction = STUNClientTransaction(request: request, timing: STUNTransactionTiming(), now: start)
        let (sends, timedOutAt) = run(&transaction)
        #expect(sends == [0, 500, 1500, 3500, 7500, 15500, 31500])
        #expect(timedOutAt == 39500)
        #expect(transaction.phase == .timedOut && transaction.transmissions == 7)
    }

    @Test("ICE's check timing: the doubling stops at the cap, the final wait is Rm × RTO")
    func doublesUpToTheCapThenTimesOut() {
        let timing = STUNTransactionTiming(initialRTO: .milliseconds(100), maxRTO: .milliseconds(1600),
                                           maxRetransmits: 7)
        var transaction = STUNClientTransaction(request: request, timing: timing, now: start)
        let (sends, timedOutAt) = run(&transaction)
        #expect(sends == [0, 100, 300, 700, 1500, 3100, 4700, 6300])
        #expect(timedOutAt == 7900)
        transaction.handle(.timer, now: start + .seconds(100))
        #expect(transaction.pollOutput() == nil)  // reported once, stays timed out
    }

    @Test("Rc = 1: one send, then the final wait")
    func singleSend() {
        let timing = STUNTransactionTiming(initialRTO: .milliseconds(200), maxRetransmits: 0, finalWait: 4)
        var transaction = STUNClientTransaction(request: request, timing: timing, now: start)
        let (sends, timedOutAt) = run(&transaction)
        #expect(sends == [0])
        #expect(timedOutAt == 800)
    }

    @Test("an early timer does nothing; a late one schedules from when it fired")
    func earlyAndLateTimers() {
        var transaction = STUNClientTransaction(request: request, timing: STUNTransactionTiming(), now: start)
        _ = transaction.drainOutputs()
        #expect(transaction.outputs(after: .timer, now: start + .milliseconds(499)) == [])
        #expect(transaction.outputs(after: .timer, now: start + .milliseconds(700)) == [.transmit(request)])
        #expect(transaction.nextDeadline == start + .milliseconds(1700))
    }

    @Test("cancelled: nothing more is sent, but it times out when it would have")
    func cancelKeepsTheSchedule() {
        var transaction = STUNClientTransaction(request: request, timing: STUNTransactionTiming(), now: start)
        _ = transaction.drainOutputs()
        transaction.handle(.cancel, now: start + .milliseconds(100))
        var outputs: [STUNClientTransaction.Output] = []
        while let deadline = transaction.nextDeadline {
            outputs += transaction.outputs(after: .timer, now: deadline)
            if outputs.last == .timedOut { #expect(deadline == start + .milliseconds(39500)) }
        }
        #expect(outputs == [.timedOut])
        #expect(transaction.isCancelled && transaction.transmissions == 7)
    }

    @Test("a response ends it: no deadline, no more sends, no timeout")
    func responseEndsIt() {
        var transaction = STUNClientTransaction(request: request, timing: STUNTransactionTiming(), now: start)
        #expect(transaction.drainOutputs() == [.transmit(request)])
        transaction.handle(.responded, now: start + .milliseconds(20))
        #expect(transaction.phase == .responded && transaction.nextDeadline == nil)
        #expect(transaction.outputs(after: .timer, now: start + .seconds(60)) == [])
    }

    @Test("outputs not polled wait, in order: every send due, then the timeout, each polled once")
    func unpolledOutputsKeepTheirOrder() {
        let timing = STUNTransactionTiming(initialRTO: .milliseconds(100), maxRetransmits: 2, finalWait: 2)
        var transaction = STUNClientTransaction(request: request, timing: timing, now: start)
        while let deadline = transaction.nextDeadline { transaction.handle(.timer, now: deadline) }
        #expect(transaction.drainOutputs() == [.transmit(request), .transmit(request), .transmit(request), .timedOut])
        #expect(transaction.pollOutput() == nil)
    }

    @Test("a copy polls its own outputs: draining one leaves the other's due")
    func copiesPollSeparately() {
        let original = STUNClientTransaction(request: request, timing: STUNTransactionTiming(), now: start)
        var drained = original
        var kept = original
        #expect(drained.drainOutputs() == [.transmit(request)])
        #expect(kept.drainOutputs() == [.transmit(request)])
    }
}
