// Nomination: RFC 8445 §8.1.1 (regular nomination by the controlling agent) and RFC 5245 §8.1.1.2
// (aggressive nomination, removed by RFC 8445 but still spoken by browsers and aioice).
//
// A strategy value: the agent asks it two questions and never branches on the mode itself.

import ZoneCore

/// How the controlling agent nominates.
public enum Nomination: Hashable, Sendable {
    /// Check pairs without USE-CANDIDATE; once a valid pair exists, nominate the best valid pair
    /// (repeat its check with USE-CANDIDATE) as soon as no higher-priority pair is still being
    /// checked, or `wait` after the first pair became valid, whichever is first.
    case regular(wait: Duration)
    /// Every check carries USE-CANDIDATE: the first pair that succeeds is nominated.
    case aggressive

    /// The default: regular nomination, waiting at most 100 ms for better pairs.
    public static let `default` = Nomination.regular(wait: .milliseconds(100))

    /// True when ordinary checks carry USE-CANDIDATE.
    var nominatesEveryCheck: Bool {
        switch self {
        case .regular: false
        case .aggressive: true
        }
    }

    /// Regular nomination: the pair to nominate now, if any. `firstValidAt` is when the first pair
    /// became valid in this generation.
    func pairToNominate(in checklist: Checklist, role: Role, firstValidAt: Instant?, now: Instant) -> Int? {
        switch self {
        case .aggressive:
            return nil
        case .regular(let wait):
            guard let firstValidAt, let best = checklist.best(role: role, where: { $0.valid }) else { return nil }
            let bestPriority = checklist[best].priority(role: role)
            let betterPending = checklist.pairs.contains {
                ($0.state == .waiting || $0.state == .inProgress || $0.state == .frozen)
                    && $0.priority(role: role) > bestPriority
            }
            return (!betterPending || now >= firstValidAt + wait) ? best : nil
        }
    }

    /// When regular nomination will decide even if better pairs are still pending.
    func decisionDeadline(firstValidAt: Instant?) -> Instant? {
        switch self {
        case .aggressive: nil
        case .regular(let wait): firstValidAt.map { $0 + wait }
        }
    }
}
