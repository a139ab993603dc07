// The ICE agent: RFC 8445 (full implementation, one component, UDP), with trickle (RFC 8838)
// and consent freshness (RFC 7675) — a sans-I/O machine.
//
// The caller feeds `handle(.datagram(…) | .timer, now:)` and drains `pollOutput()`; it calls
// `handle(.timer, now:)` when `nextDeadline` is reached. The agent never reads a clock, never
// opens a socket, and draws every random number from the configuration's seed.
//
// One agent is one ICE generation. An ICE restart (RFC 8445 §9) is a new agent with new
// credentials: a call makes one per epoch (one call epoch is one ICE generation, docs/SIGNALING.md
// §3), beside the old one's transport until that is closed, because an epoch's transport also
// holds its TURN allocations, which are deleted with it.

import STUN
import ZoneCore

/// An ICE agent for one data stream with one component.
public struct ICEAgent {
    /// The configuration the agent was created with.
    public let configuration: AgentConfiguration
    /// The current role (a role conflict may have changed it).
    public private(set) var role: Role
    /// The tie-breaker sent in ICE-CONTROLLING / ICE-CONTROLLED.
    public let tieBreaker: UInt64
    /// The connection state last reported.
    public private(set) var state: ConnectionState = .new
    /// Local candidates: host, server-reflexive, relayed, and peer-reflexive ones learned from
    /// responses (which are not signalled).
    public private(set) var localCandidates: [Candidate] = []
    /// Remote candidates, signalled or peer-reflexive.
    public private(set) var remoteCandidates: [Candidate] = []
    /// The selected pair.
    public private(set) var selectedPair: CandidatePair?
    /// True once server-reflexive gathering finished.
    public private(set) var isGatheringComplete = false
    /// True once the peer signalled end-of-candidates.
    public private(set) var hasRemoteEndOfCandidates = false

    private var random: SeededRandom
    private var local: KeyedCredentials
    private var remote: KeyedCredentials?
    /// The remote credentials the selected pair was checked under, for its consent checks.
    private var selectedRemote: KeyedCredentials?
    /// The USERNAME of our checks, "remote:local" (RFC 8445 §7.2.2), under the current credentials
    /// and under the selected pair's: made when the remote credentials arrive, not for every check.
    private var checkUsername = ""
    private var selectedCheckUsername = ""
    private var checklist = Checklist()
    private var transactions: [ConnectivityCheck] = []
    private var nextCheckAt: Instant
    private var firstValidAt: Instant?
    private var nominationPairID: Int?
    private var consent: ConsentFreshness?
    private var consentLost = false
    private var closed = false
    private var peerReflexiveCount = 0
    /// Relayed candidates the caller still owes before gathering can complete.
    private var relayedCandidatesPending: Int
    /// Application datagrams dropped because they came from no known remote candidate.
    public private(set) var droppedDatagrams = 0
    /// Remote candidates dropped because the agent already had `maxRemoteCandidates`.
    public private(set) var droppedRemoteCandidates = 0
    /// Datagrams that looked like STUN (RFC 8489 §5) but did not decode, or were not Binding
    /// messages: dropped.
    public private(set) var malformedMessages = 0
    /// Requests and responses of our own that could not be encoded (a USERNAME or attribute too
    /// long for STUN): not sent.
    public private(set) var unencodableMessages = 0
    private var lastNow: Instant
    private var outputs = OutputQueue<Output>()

    /// Creates an agent, announces its host candidates and starts server-reflexive gathering.
    ///
    /// - Throws: `invalidCredentials` when SASLprep refuses the password.
    public init(configuration: AgentConfiguration, now: Instant) throws(ICEError) {
        self.configuration = configuration
        var random = SeededRandom(seed: configuration.seed)
        tieBreaker = configuration.tieBreaker ?? random.next()
        self.random = random
        role = configuration.role
        local = try KeyedCredentials(configuration.credentials)
        nextCheckAt = now
        lastNow = now
        relayedCandidatesPending = configuration.expectedRelayedCandidates
        gather(now: now)
        updateDeadline()
    }

    // MARK: - Caller API

    /// The peer's ufrag and password (from its offer or answer).
    public mutating func setRemoteCredentials(_ credentials: Credentials) throws(ICEError) {
        remote = try KeyedCredentials(credentials)
        checkUsername = credentials.ufrag + ":" + local.credentials.ufrag
        updateDeadline()
    }

    /// A remote candidate, at any time (RFC 8838 trickle).
    public mutating func addRemoteCandidate(_ candidate: Candidate) {
        guard !closed else { return }
        if let i = remoteCandidates.firstIndex(where: { $0.address == candidate.address }) {
            // Signalled after we learned it as peer-reflexive: keep the pairs, take the real type.
            if remoteCandidates[i].kind == .peerReflexive { remoteCandidates[i] = candidate }
            return
        }
        guard remoteCandidates.count < configuration.maxRemoteCandidates else {
            droppedRemoteCandidates += 1
            return
        }
        remoteCandidates.append(candidate)
        for localCandidate in localCandidates where localCandidate.kind != .peerReflexive {
            checklist.add(local: localCandidate, remote: candidate, role: role)
        }
        updateState(now: lastNow)
    }

    /// The peer will send no more candidates (RFC 8838 §8.2).
    public mutating func endOfRemoteCandidates() {
        hasRemoteEndOfCandidates = true
        updateState(now: lastNow)
    }

    /// A relayed candidate the caller allocated on the TURN server `server` (RFC 8445 §5.1.1.2):
    /// announced, and paired with every remote candidate (§6.1.2). Checks and data on its pairs
    /// are transmitted "from" `relayed`; the caller relays them and feeds what the TURN server
    /// delivers for it as datagrams "to" `relayed`.
    public mutating func addLocalRelayedCandidate(relayed: Endpoint, server: Endpoint) {
        guard !closed else { return }
        if relayedCandidatesPending > 0 { relayedCandidatesPending -= 1 }
        defer {
            completeGatheringIfDone()
            updateState(now: lastNow)
        }
        guard !localCandidates.contains(where: { $0.address == relayed }) else { return }
        let index = localCandidates.count { $0.kind == .relay }
        let candidate = Candidate.relayed(relayed, server: server,
                                          localPreference: Priority.hostLocalPreference(index: index))
        localCandidates.append(candidate)
        push(.event(.localCandidate(candidate)))
        for remoteCandidate in remoteCandidates {
            checklist.add(local: candidate, remote: remoteCandidate, role: role)
        }
    }

    /// One of the relayed candidates the configuration announced will not come (the allocation
    /// failed), so gathering need not wait for it.
    public mutating func relayedCandidateUnavailable() {
        guard !closed else { return }
        if relayedCandidatesPending > 0 { relayedCandidatesPending -= 1 }
        completeGatheringIfDone()
        updateState(now: lastNow)
    }

    /// Sends application data on the selected pair.
    public mutating func send(_ bytes: [UInt8]) throws(ICEError) {
        guard !closed else { throw ICEError(.closed, "the ICE agent is closed") }
        guard !consentLost else { throw ICEError(.consentExpired, "consent expired on the selected pair") }
        guard let pair = selectedPair else { throw ICEError(.noSelectedPair, "no candidate pair is selected yet") }
        push(.transmit(bytes, from: pair.sendFrom, to: pair.sendTo))
    }

    /// Stops the agent: no more checks, transmits or events after `.closed`.
    public mutating func close() {
        guard !closed else { return }
        closed = true
        transactions.removeAll()
        consent = nil
        updateState(now: lastNow)
    }

    /// Feeds an input at `now`.
    public mutating func handle(_ input: Input, now: Instant) {
        guard !closed else { return }
        lastNow = max(lastNow, now)
        switch input {
        case .timer:
            onTimer(now: now)
        case .datagram(let bytes, let from, let to):
            onDatagram(bytes, from: from, to: to, now: now)
        }
        nominateIfReady(now: now)
        updateState(now: now)
    }

    /// The next output, or nil when there is nothing to do until the next input.
    public mutating func pollOutput() -> Output? {
        outputs.pop()
    }

    /// When to call `handle(.timer, now:)` next; nil when nothing is scheduled. Worked out after
    /// every change (`updateState` ends every input).
    public private(set) var nextDeadline: Instant?

    private mutating func updateDeadline() {
        guard !closed else {
            nextDeadline = nil
            return
        }
        var next: Instant?
        func consider(_ instant: Instant?) {
            guard let instant else { return }
            if next == nil || instant < next! { next = instant }
        }
        for i in transactions.indices { consider(transactions[i].transaction.nextDeadline) }
        if remote != nil && checklist.hasPendingChecks { consider(nextCheckAt) }
        if role == .controlling, nominationPairID == nil, case .none = selectedPair,
           checklist.pairs.indices.contains(where: { checklist.pairs[$0].valid }) {
            consider(configuration.nomination.decisionDeadline(firstValidAt: firstValidAt))
        }
        if let consent, !consentLost {
            consider(consent.nextCheck)
            consider(consent.lastResponse
                + (state == .disconnected ? consent.configuration.expiry : consent.configuration.disconnectedAfter))
        }
        nextDeadline = next
    }

    /// The pairs, in checklist order (highest priority first).
    public var pairs: [CandidatePair] { checklist.ordered(role: role) }

    // MARK: - Gathering

    /// Announces host candidates and sends a Binding request to every STUN server from every host
    /// candidate of the same family (RFC 8445 §5.1.1).
    private mutating func gather(now: Instant) {
        for (index, address) in configuration.hostAddresses.enumerated() {
            let candidate = Candidate.host(address, localPreference: Priority.hostLocalPreference(index: index))
            guard !localCandidates.contains(where: { $0.address == address }) else { continue }
            localCandidates.append(candidate)
            push(.event(.localCandidate(candidate)))
        }
        for base in configuration.hostAddresses {
            for server in configuration.stunServers where server.family == base.family {
                let id = STUNTransactionID.random(using: &random)
                let request = STUNMessage(method: .binding, messageClass: .request, transactionID: id)
                guard let bytes = try? request.encode(fingerprint: true) else {
                    unencodableMessages += 1
                    continue
                }
                start(ConnectivityCheck(
                    transactionID: id, purpose: .serverReflexive(server: server, base: base), bytes: bytes,
                    from: base, to: server, responseKey: nil, now: now, timing: configuration.gatheringTiming))
            }
        }
        completeGatheringIfDone()
    }

    private mutating func completeGatheringIfDone() {
        guard !isGatheringComplete else { return }
        let pending = transactions.contains { if case .serverReflexive = $0.purpose { true } else { false } }
        if !pending && relayedCandidatesPending == 0 {
            isGatheringComplete = true
            push(.event(.gatheringComplete))
        }
    }

    private mutating func serverReflexiveResponse(_ message: STUNMessage, server: Endpoint, base: Endpoint) {
        defer { completeGatheringIfDone() }
        guard message.messageClass == .successResponse,
              let mapped = message.xorMappedAddress ?? message.mappedAddress,
              mapped != base,
              !localCandidates.contains(where: { $0.address == mapped && $0.base == base }),
              let host = localCandidates.first(where: { $0.kind == .host && $0.address == base })
        else { return }
        let localPreference = UInt16(truncatingIfNeeded: host.priority >> 8)
        let candidate = Candidate.serverReflexive(mapped, base: base, server: server, localPreference: localPreference)
        localCandidates.append(candidate)
        push(.event(.localCandidate(candidate)))
        // Paired as its base (RFC 8445 §6.1.2.4): the host pairs already cover it.
    }

    // MARK: - Timers

    private mutating func onTimer(now: Instant) {
        var i = 0
        while i < transactions.count {
            transactions[i].transaction.handle(.timer, now: now)
            if drainTransaction(at: i) { i += 1 } else { transactionTimedOut(transactions.remove(at: i)) }
        }
        if now >= nextCheckAt, remote != nil, let id = checklist.nextPairToCheck(role: role) {
            let useCandidate = role == .controlling && configuration.nomination.nominatesEveryCheck
            sendCheck(pairID: id, useCandidate: useCandidate, now: now)
            nextCheckAt = now + configuration.pacing
        }
        if var c = consent, !consentLost, let pair = selectedPair {
            if c.checkDue(now: now, random: &random) {
                sendConsentCheck(on: pair, now: now)
            }
            consent = c
        }
    }

    private mutating func transactionTimedOut(_ transaction: ConnectivityCheck) {
        switch transaction.purpose {
        case .serverReflexive:
            completeGatheringIfDone()
        case .consent:
            break  // consent is judged by time since the last response, not per transaction
        case .check(let pairID, let useCandidate, _):
            guard !transaction.isCancelled else { return }
            if checklist[pairID].state != .succeeded {
                checklist[pairID].state = .failed
            } else if useCandidate, configuration.nomination.nominatesEveryCheck == false {
                // A regular nomination went unanswered: the pair leaves the valid list.
                checklist[pairID].state = .failed
                checklist[pairID].valid = false
            }
            if nominationPairID == pairID { nominationPairID = nil }
        }
    }

    // MARK: - Sending checks

    private mutating func sendCheck(pairID: Int, useCandidate: Bool, now: Instant) {
        guard let remote else { return }
        let id = STUNTransactionID.random(using: &random)
        // PRIORITY: what a peer-reflexive candidate learned from this check would get (§7.1.1).
        let localPreference = UInt16(truncatingIfNeeded: checklist[pairID].local.priority >> 8)
        let priority = Priority.candidate(kind: .peerReflexive, localPreference: localPreference)
        let request = ConnectivityCheck.request(
            transactionID: id, username: checkUsername, priority: priority, role: role, tieBreaker: tieBreaker,
            useCandidate: useCandidate)
        guard let bytes = try? request.encode(key: remote.key, fingerprint: true) else {
            unencodableMessages += 1
            checklist[pairID].state = .failed
            return
        }
        let check = ConnectivityCheck(
            transactionID: id,
            purpose: .check(pairID: pairID, useCandidate: useCandidate, roleWhenSent: role),
            bytes: bytes, from: checklist[pairID].sendFrom, to: checklist[pairID].sendTo, responseKey: remote.key,
            now: now, timing: checkTiming())
        if checklist[pairID].state != .succeeded { checklist[pairID].state = .inProgress }
        start(check)
    }

    /// The retransmission timing of a connectivity check (RFC 8445 §14.3): RTO = MAX(floor,
    /// Ta × (number of waiting and in-progress pairs)), so that a long checklist does not
    /// retransmit faster than pacing lets new checks out. The floor is the configured initial RTO
    /// (RFC 8445 recommends 500 ms on the Internet; loopback and the simulator use less).
    private func checkTiming() -> STUNTransactionTiming {
        var timing = configuration.checkTiming
        var busy = 0
        for i in checklist.pairs.indices where checklist[i].state == .waiting || checklist[i].state == .inProgress {
            busy += 1
        }
        let paced = configuration.pacing * busy
        if paced > timing.initialRTO {
            timing.initialRTO = paced
            timing.maxRTO = max(timing.maxRTO, paced)
        }
        return timing
    }

    private mutating func sendConsentCheck(on pair: CandidatePair, now: Instant) {
        guard let remoteCredentials = selectedRemote else { return }
        let id = STUNTransactionID.random(using: &random)
        let localPreference = UInt16(truncatingIfNeeded: pair.local.priority >> 8)
        let request = ConnectivityCheck.request(
            transactionID: id, username: selectedCheckUsername,
            priority: Priority.candidate(kind: .peerReflexive, localPreference: localPreference),
            role: role, tieBreaker: tieBreaker, useCandidate: false)
        guard let bytes = try? request.encode(key: remoteCredentials.key, fingerprint: true) else {
            unencodableMessages += 1
            return
        }
        start(ConnectivityCheck(
            transactionID: id, purpose: .consent, bytes: bytes, from: pair.sendFrom, to: pair.sendTo,
            responseKey: remoteCredentials.key, now: now, timing: configuration.checkTiming))
    }

    /// Adds `check` to the transactions in flight and sends its request.
    private mutating func start(_ check: ConnectivityCheck) {
        transactions.append(check)
        _ = drainTransaction(at: transactions.count - 1)
    }

    /// Passes on what the transaction at `index` wants sent; false once it has timed out.
    private mutating func drainTransaction(at index: Int) -> Bool {
        var alive = true
        while let output = transactions[index].transaction.pollOutput() {
            switch output {
            case .transmit(let bytes):
                push(.transmit(bytes, from: transactions[index].from, to: transactions[index].to))
            case .timedOut: alive = false
            }
        }
        return alive
    }

    // MARK: - Receiving

    private mutating func onDatagram(_ bytes: [UInt8], from: Endpoint, to: Endpoint, now: Instant) {
        let isSTUN = bytes.withUnsafeBytes { STUNMessageHeader.looksLikeSTUN($0) }
        guard isSTUN else {
            // Application data only from where a peer can be: the selected pair, or a remote
            // candidate, to one of our bases (anyone else could inject into the stream).
            let selected = selectedPair.map { $0.sendTo == from && $0.sendFrom == to } ?? false
            guard selected || (isLocalBase(to) && remoteCandidates.contains(where: { $0.address == from })) else {
                droppedDatagrams += 1
                return
            }
            push(.event(.data(bytes, from: from)))
            return
        }
        // The layout is kept: MESSAGE-INTEGRITY is checked without scanning the message again.
        guard let layout = try? STUNMessageLayout(scanning: bytes),
              let message = try? STUNMessage(decoding: bytes, layout: layout), message.method == .binding
        else {
            malformedMessages += 1
            return
        }
        switch message.messageClass {
        case .request:
            onRequest(message, bytes: bytes, layout: layout, from: from, to: to, now: now)
        case .successResponse, .errorResponse:
            onResponse(message, bytes: bytes, layout: layout, from: from, to: to, now: now)
        case .indication:
            break  // keepalives (RFC 8445 §11): nothing to do
        }
    }

    /// True when `address` is the base of a host or relayed candidate: an address we receive on.
    private func isLocalBase(_ address: Endpoint) -> Bool {
        localCandidates.contains { $0.address == address && ($0.kind == .host || $0.kind == .relay) }
    }

    /// An incoming Binding request (RFC 8445 §7.3, RFC 8489 §9.1.3).
    private mutating func onRequest(_ message: STUNMessage, bytes: [UInt8], layout: STUNMessageLayout, from: Endpoint,
                                    to: Endpoint, now: Instant) {
        // Only our bases answer (RFC 8445 §7.3): a relay-only agent has no host candidates, and
        // must not reveal a direct path by answering on the sockets its TURN clients use.
        guard isLocalBase(to) else { return }
        let unknown = message.unknownComprehensionRequiredAttributes
        guard unknown.isEmpty else {
            let response = message.errorResponse(code: STUNErrorCode.unknownAttribute,
                                                 attributes: [.unknownAttributes(unknown)])
            reply(response, key: nil, from: to, to: from)
            return
        }
        // RFC 8489 §9.1.3: no USERNAME or no MESSAGE-INTEGRITY → 400.
        guard let username = message.username, message.contains(.messageIntegrity) else {
            reply(message.errorResponse(code: STUNErrorCode.badRequest), key: nil, from: to, to: from)
            return
        }
        // USERNAME is "local:remote" from our side (RFC 8445 §7.3.1): an unknown ufrag → 401.
        guard CheckUsername(username).localPartIs(local.credentials.ufrag) else {
            reply(message.errorResponse(code: STUNErrorCode.unauthenticated), key: nil, from: to, to: from)
            return
        }
        let credentials = local
        let authentic = (try? STUNIntegrity.verify(bytes, layout: layout, key: credentials.key)) != nil
        guard authentic else {
            reply(message.errorResponse(code: STUNErrorCode.unauthenticated), key: nil, from: to, to: from)
            return
        }
        // RFC 8445 §7.1.3: every check carries exactly one role attribute.
        let controlling = message.iceControlling
        let controlled = message.iceControlled
        guard (controlling == nil) != (controlled == nil) else {
            reply(message.errorResponse(code: STUNErrorCode.badRequest), key: credentials.key, from: to, to: from)
            return
        }
        switch RoleConflictResolution.forRequest(role: role, tieBreaker: tieBreaker, remoteControlling: controlling,
                                                 remoteControlled: controlled) {
        case .none:
            break
        case .switchRole:
            switchRole()
        case .respond487:
            reply(message.errorResponse(code: STUNErrorCode.roleConflict), key: credentials.key, from: to, to: from)
            return
        }
        reply(message.successResponse(attributes: [.xorMappedAddress(from)]), key: credentials.key, from: to, to: from)

        // A source we do not know is a peer-reflexive remote candidate (RFC 8445 §7.3.1.3).
        if !remoteCandidates.contains(where: { $0.address == from }) {
            peerReflexiveCount += 1
            let candidate = Candidate.remote(kind: .peerReflexive, address: from, priority: message.priority ?? 0,
                                             foundation: "prflx\(peerReflexiveCount)")
            remoteCandidates.append(candidate)
        }
        var pairID = checklist.pairID(base: to, remote: from)
        if pairID == nil,
           let base = localCandidates.first(where: { $0.address == to && ($0.kind == .host || $0.kind == .relay) }),
           let remoteCandidate = remoteCandidates.first(where: { $0.address == from }) {
            pairID = checklist.add(local: base, remote: remoteCandidate, role: role)
        }
        guard let pairID else { return }

        // Triggered check (RFC 8445 §7.3.1.4).
        switch checklist[pairID].state {
        case .succeeded:
            break
        case .inProgress:
            // RFC 8445 §7.3.1.4: cancel the check in flight (no more retransmissions, and no
            // failure if it goes unanswered, though a response still counts) and check again.
            for i in transactions.indices where transactions[i].isCheck(pairID: pairID) {
                transactions[i].transaction.handle(.cancel, now: now)
            }
            checklist.trigger(pairID)
        case .frozen, .waiting, .failed:
            checklist.trigger(pairID)
        }
        // Nomination by the controlling peer (RFC 8445 §7.3.1.5).
        if message.useCandidate, role == .controlled {
            if checklist[pairID].state == .succeeded, let validID = checklist[pairID].validPairID {
                nominate(validID, now: now)
            } else {
                checklist[pairID].nominateOnSuccess = true
            }
        }
    }

    /// A response to one of our transactions (RFC 8445 §7.2.5).
    private mutating func onResponse(_ message: STUNMessage, bytes: [UInt8], layout: STUNMessageLayout,
                                     from: Endpoint, to: Endpoint, now: Instant) {
        guard let index = transactions.firstIndex(where: { $0.transactionID == message.transactionID }) else { return }
        if let key = transactions[index].responseKey {
            let authentic = (try? STUNIntegrity.verify(bytes, layout: layout, key: key)) != nil
            guard authentic else { return }  // a forgery or a stray: keep waiting for the real one
        }
        let transaction = transactions.remove(at: index)
        let symmetric = from == transaction.to && to == transaction.from
        switch transaction.purpose {
        case .serverReflexive(let server, let base):
            serverReflexiveResponse(message, server: server, base: base)
        case .consent:
            if symmetric, message.messageClass == .successResponse { consent?.responded(now: now) }
        case .check(let pairID, let useCandidate, let roleWhenSent):
            // Non-symmetric addresses fail the pair (RFC 8445 §7.2.5.2.1).
            guard symmetric else {
                checklist[pairID].state = .failed
                return
            }
            if message.messageClass == .errorResponse {
                if message.errorCode?.code == STUNErrorCode.roleConflict {
                    // RFC 8445 §7.2.5.1: take the other role and check the pair again.
                    if RoleConflictResolution.roleAfter487(roleWhenSent: roleWhenSent, currentRole: role) != nil {
                        switchRole()
                    }
                    checklist.trigger(pairID)
                } else if checklist[pairID].state != .succeeded {
                    checklist[pairID].state = .failed
                }
                if nominationPairID == pairID { nominationPairID = nil }
                return
            }
            checkSucceeded(pairID: pairID, transaction: transaction, message: message, useCandidate: useCandidate,
                           now: now)
        }
    }

    /// A successful check (RFC 8445 §7.2.5.3): discover a peer-reflexive local candidate, add the
    /// valid pair, unfreeze the foundation, and conclude nomination.
    private mutating func checkSucceeded(pairID: Int, transaction: ConnectivityCheck, message: STUNMessage,
                                         useCandidate: Bool, now: Instant) {
        let pair = checklist[pairID]
        let mapped = message.xorMappedAddress ?? transaction.from
        var validID = pairID
        if mapped != pair.local.address {
            // RFC 8445 §7.2.5.3.1: a mapped address that is no local candidate is peer-reflexive.
            var prflx = localCandidates.first { $0.address == mapped && $0.base == transaction.from }
            if prflx == nil {
                let localPreference = UInt16(truncatingIfNeeded: pair.local.priority >> 8)
                let candidate = Candidate(
                    kind: .peerReflexive, address: mapped, base: transaction.from,
                    priority: Priority.candidate(kind: .peerReflexive, localPreference: localPreference),
                    foundation: CandidateFoundation.compute(kind: .peerReflexive, base: transaction.from.address))
                localCandidates.append(candidate)
                prflx = candidate
            }
            if let existing = checklist.pairs.first(where: {
                $0.isPeerReflexiveValid && $0.local.address == mapped && $0.remote.address == pair.remote.address
            }) {
                validID = existing.id
            } else {
                validID = checklist.addPeerReflexiveValid(local: prflx!, from: pairID)
            }
        } else {
            checklist[pairID].valid = true
        }
        checklist[pairID].state = .succeeded
        checklist[pairID].validPairID = validID
        if transaction.isCancelled { checklist.untrigger(pairID) }  // the answer came after all
        checklist.unfreeze(foundationOf: pair)
        if firstValidAt == nil { firstValidAt = now }
        if selectedPair?.sendFrom == pair.sendFrom, selectedPair?.sendTo == pair.sendTo {
            consent?.responded(now: now)
        }
        if useCandidate, role == .controlling {
            nominate(validID, now: now)
        } else if role == .controlled, checklist[pairID].nominateOnSuccess {
            nominate(validID, now: now)
        }
    }

    // MARK: - Nomination and selection

    /// Regular nomination: once the strategy picks a valid pair, check it again with USE-CANDIDATE.
    private mutating func nominateIfReady(now: Instant) {
        guard role == .controlling, remote != nil, nominationPairID == nil, case .none = selectedPair,
              let id = configuration.nomination.pairToNominate(in: checklist, role: role, firstValidAt: firstValidAt,
                                                               now: now)
        else { return }
        nominationPairID = id
        sendCheck(pairID: id, useCandidate: true, now: now)
    }

    /// Marks the valid pair `id` nominated and selects it when it beats the current selection.
    private mutating func nominate(_ id: Int, now: Instant) {
        checklist[id].nominated = true
        let pair = checklist[id]
        if let current = selectedPair, current.priority(role: role) >= pair.priority(role: role) {
            return
        }
        selectedPair = pair
        selectedRemote = remote
        selectedCheckUsername = checkUsername
        consent = ConsentFreshness(configuration: configuration.consent, now: now, random: &random)
        consentLost = false
        push(.event(.selectedPair(pair)))
    }

    private mutating func switchRole() {
        role = role.flipped
        nominationPairID = nil
    }

    // MARK: - State

    private mutating func updateState(now: Instant) {
        let newState: ConnectionState
        if closed {
            newState = .closed
        } else if consentLost {
            newState = .failed
        } else if case .some = selectedPair, let c = consent {
            switch c.status(now: now) {
            case .expired:
                consentLost = true
                consent = nil
                transactions.removeAll { $0.purpose == .consent }
                newState = .failed
            case .disconnected:
                newState = .disconnected
            case .fresh:
                let settled = hasRemoteEndOfCandidates && isGatheringComplete
                    && !checklist.hasUnfinishedPairs
                newState = settled ? .completed : .connected
            }
        } else if hasRemoteEndOfCandidates && isGatheringComplete && !checklist.hasUnfinishedPairs
                    && !transactions.contains(where: { if case .check = $0.purpose { true } else { false } })
                    && !checklist.pairs.contains(where: { $0.state == .succeeded }) {
            // Failed only when no pair succeeded (RFC 8445 §8.1.2): a controlled agent whose
            // checks succeeded is waiting for the controlling agent's nomination, not failing. And only
            // once our own gathering is done too (RFC 8838 §8): a relay-only agent whose allocation is
            // still on its way has no pairs yet, which is not all of them failed.
            newState = .failed
        } else if checklist.pairs.isEmpty {
            newState = state == .new ? .new : .checking
        } else {
            newState = .checking
        }
        if newState != state {
            state = newState
            push(.event(.stateChanged(newState)))
        }
        updateDeadline()
    }

    // MARK: - Output

    private mutating func reply(_ response: STUNMessage, key: STUNIntegrityKey?, from: Endpoint, to: Endpoint) {
        guard let bytes = try? response.encode(key: key, fingerprint: true) else {
            unencodableMessages += 1
            return
        }
        push(.transmit(bytes, from: from, to: to))
    }

    private mutating func push(_ output: Output) {
        outputs.append(output)
    }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension ICEAgent: SansIOMachine {}
