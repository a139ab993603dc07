import Foundation

/// Runs `action` once on the first SIGINT or SIGTERM, until cancelled.
final class InterruptWatch: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    private let lock = NSLock()
    private var done = false
    private(set) var fired = false

    init(_ action: @escaping @Sendable () -> Void) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                lock.lock()
                let first = !done
                done = true
                if first { fired = true }
                lock.unlock()
                if first { action() }
            }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() {
        lock.lock()
        done = true
        lock.unlock()
        for source in sources { source.cancel() }
        for sig in [SIGINT, SIGTERM] { signal(sig, SIG_DFL) }
    }
}
