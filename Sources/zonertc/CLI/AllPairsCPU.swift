import Foundation
import Harness

/// The process's CPU time when a frame had come from every other member (`--peers`) for the first time.
final class AllPairsCPU: @unchecked Sendable {
    private let others: Int?
    private let lock = NSLock()
    private var senders: Set<String> = []
    private var at: Double?

    init(others: Int?) { self.others = others }

    func frame(from user: String) {
        guard let others else { return }
        lock.withLock {
            guard at == nil, senders.insert(user).inserted, senders.count >= others else { return }
            at = CPUTime.now()
        }
    }

    var reached: Double? { lock.withLock { at } }
}
