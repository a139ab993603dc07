// Reading the ICE candidate attribute, RFC 8839 §5.1:
//
//   candidate-attribute = "candidate" ":" foundation SP component-id SP transport SP priority SP
//                         connection-address SP port SP cand-type [SP rel-addr] [SP rel-port]
//                         *(SP cand-extension)
//
// plus `tcptype` (RFC 6544 §4.5), which the grammar treats as an extension.
import ZoneCore

extension ICECandidate {
    /// Parses `candidate:…` (as trickled) or `a=candidate:…` (an SDP line). Surrounding
    /// whitespace and a trailing line break are ignored.
    public init(parsing text: String) throws(CandidateParseError) {
        var bytes = Array(text.utf8)[...]
        while let first = bytes.first, isSurroundingSpace(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, isSurroundingSpace(last) { bytes = bytes.dropLast() }
        let attributeLinePrefix = Array("a=candidate:".utf8)
        let bare = Array("candidate:".utf8)
        if bytes.starts(with: attributeLinePrefix) {
            bytes = bytes.dropFirst(attributeLinePrefix.count)
        } else if bytes.count >= bare.count, SDPGrammar.equalsIgnoringCase(bytes.prefix(bare.count), "candidate:") {
            bytes = bytes.dropFirst(bare.count)
        } else {
            throw CandidateParseError(
                kind: .missingPrefix, field: nil, token: nil, input: text,
                detail: "expected the text to start with \"candidate:\" or \"a=candidate:\"")
        }
        self = try CandidateReader(input: text).read(bytes)
    }
}

private func isSurroundingSpace(_ c: UInt8) -> Bool {
    c == SDPGrammar.space || c == UInt8(ascii: "\t") || c == SDPGrammar.carriageReturn || c == SDPGrammar.lineFeed
}

/// Reads the value of a candidate attribute (the part after `candidate:`); `input` is the text
/// quoted in errors. The SDP parser calls this directly on the bytes of an `a=candidate` line.
struct CandidateReader {
    let input: String

    func read(_ value: ArraySlice<UInt8>) throws(CandidateParseError) -> ICECandidate {
        let tokens = SDPGrammar.fields(value)
        let fixed: [(CandidateParseError.Field, String)] = [
            (.foundation, "the candidate is empty"),
            (.component, "the candidate ends after the foundation"),
            (.transport, "the candidate ends after the component"),
            (.priority, "the candidate ends after the transport"),
            (.connectionAddress, "the candidate ends after the priority"),
            (.port, "the candidate ends after the connection address"),
            (.typKeyword, "the candidate ends after the port"),
            (.candidateType, "the candidate ends after \"typ\""),
        ]
        if tokens.count < fixed.count {
            let (field, detail) = fixed[tokens.count]
            throw failure(.missingField, field, nil, "missing: " + detail)
        }

        let foundation = tokens[0]
        guard foundation.count >= 1, foundation.count <= 32, SDPGrammar.all(foundation, SDPGrammar.isICEChar) else {
            throw failure(.invalidField, .foundation, foundation, "must be 1 to 32 letters, digits, '+' or '/'")
        }
        guard tokens[1].count <= 3, let component = SDPGrammar.decimal(tokens[1], as: UInt16.self),
            component >= 1, component <= 256
        else {
            throw failure(.invalidField, .component, tokens[1], "must be a number from 1 to 256")
        }
        let transport: ICECandidate.Transport
        if SDPGrammar.equalsIgnoringCase(tokens[2], "udp") {
            transport = .udp
        } else if SDPGrammar.equalsIgnoringCase(tokens[2], "tcp") {
            transport = .tcp
        } else {
            throw failure(.invalidField, .transport, tokens[2], "must be UDP or TCP")
        }
        guard let priority = SDPGrammar.decimal(tokens[3], as: UInt32.self) else {
            throw failure(.invalidField, .priority, tokens[3], "must be a number from 0 to 4294967295")
        }
        let address = try readAddress(tokens[4], field: .connectionAddress)
        let port = try readPort(tokens[5], field: .port)
        guard SDPGrammar.equalsIgnoringCase(tokens[6], "typ") else {
            throw failure(.invalidField, .typKeyword, tokens[6], "expected \"typ\" after the port")
        }
        guard let type = candidateType(tokens[7]) else {
            throw failure(.invalidField, .candidateType, tokens[7], "must be host, srflx, prflx or relay")
        }

        var candidate = ICECandidate(
            foundation: SDPGrammar.string(foundation), component: component, transport: transport,
            priority: priority, address: address, port: port, type: type)
        var index = fixed.count
        while index < tokens.count {
            let name = tokens[index]
            guard index + 1 < tokens.count else {
                throw failure(.missingExtensionValue, field(named: name), name, "has no value")
            }
            try apply(name: name, value: tokens[index + 1], to: &candidate)
            index += 2
        }
        return candidate
    }

    /// Stores one `name value` pair after the candidate type.
    private func apply(
        name: ArraySlice<UInt8>, value: ArraySlice<UInt8>, to candidate: inout ICECandidate
    ) throws(CandidateParseError) {
        let field = field(named: name)
        func once<T>(_ existing: T?) throws(CandidateParseError) {
            if existing != nil {
                throw failure(.duplicateExtension, field, name, "appears more than once")
            }
        }
        switch field {
        case .relatedAddress:
            try once(candidate.relatedAddress)
            candidate.relatedAddress = try readAddress(value, field: .relatedAddress)
        case .relatedPort:
            try once(candidate.relatedPort)
            candidate.relatedPort = try readPort(value, field: .relatedPort)
        case .tcpType:
            try once(candidate.tcpType)
            guard let tcpType = tcpType(value) else {
                throw failure(.invalidField, .tcpType, value, "must be active, passive or so")
            }
            candidate.tcpType = tcpType
        case .generation:
            try once(candidate.generation)
            candidate.generation = try readNumber(value, field: .generation)
        case .usernameFragment:
            try once(candidate.usernameFragment)
            guard SDPGrammar.all(value, SDPGrammar.isICEChar) else {
                throw failure(.invalidField, .usernameFragment, value, "must be letters, digits, '+' or '/'")
            }
            candidate.usernameFragment = SDPGrammar.string(value)
        case .networkID:
            try once(candidate.networkID)
            candidate.networkID = try readNumber(value, field: .networkID)
        case .networkCost:
            try once(candidate.networkCost)
            candidate.networkCost = try readNumber(value, field: .networkCost)
        default:
            guard SDPGrammar.isToken(name) else {
                throw failure(.invalidField, .extension, name, "is not a valid extension attribute name")
            }
            guard SDPGrammar.all(value, SDPGrammar.isVisible) else {
                throw failure(.invalidField, .extension, value, "has characters other than visible ASCII")
            }
            candidate.extensions.append(.init(name: SDPGrammar.string(name), value: SDPGrammar.string(value)))
        }
    }

    /// The field an extension name stands for; `.extension` for names without a field.
    /// `raddr`, `rport` and `tcptype` are grammar literals, so their case does not matter;
    /// the browser extensions are tokens and must match exactly.
    private func field(named name: ArraySlice<UInt8>) -> CandidateParseError.Field {
        if SDPGrammar.equalsIgnoringCase(name, "raddr") { return .relatedAddress }
        if SDPGrammar.equalsIgnoringCase(name, "rport") { return .relatedPort }
        if SDPGrammar.equalsIgnoringCase(name, "tcptype") { return .tcpType }
        switch SDPGrammar.string(name) {
        case "generation": return .generation
        case "ufrag": return .usernameFragment
        case "network-id": return .networkID
        case "network-cost": return .networkCost
        default: return .extension
        }
    }

    private func candidateType(_ token: ArraySlice<UInt8>) -> ICECandidate.CandidateType? {
        for type in [ICECandidate.CandidateType.host, .serverReflexive, .peerReflexive, .relay]
        where SDPGrammar.equalsIgnoringCase(token, type.rawValue) {
            return type
        }
        return nil
    }

    private func tcpType(_ token: ArraySlice<UInt8>) -> ICECandidate.TCPType? {
        for type in [ICECandidate.TCPType.active, .passive, .simultaneousOpen]
        where SDPGrammar.equalsIgnoringCase(token, type.rawValue) {
            return type
        }
        return nil
    }

    private func readPort(
        _ token: ArraySlice<UInt8>, field: CandidateParseError.Field
    ) throws(CandidateParseError) -> UInt16 {
        guard let port = SDPGrammar.decimal(token, as: UInt16.self) else {
            throw failure(.invalidField, field, token, "must be a port number from 0 to 65535")
        }
        return port
    }

    private func readNumber(
        _ token: ArraySlice<UInt8>, field: CandidateParseError.Field
    ) throws(CandidateParseError) -> UInt32 {
        guard let number = SDPGrammar.decimal(token, as: UInt32.self) else {
            throw failure(.invalidField, field, token, "must be a number from 0 to 4294967295")
        }
        return number
    }

    /// An IP address, or a host name; text that looks like an address (it has a ':' or only
    /// digits and dots) must be a valid one, so `1.2.3.256` is an error rather than a name.
    private func readAddress(
        _ token: ArraySlice<UInt8>, field: CandidateParseError.Field
    ) throws(CandidateParseError) -> ICECandidate.Address {
        let looksNumeric = SDPGrammar.all(token) { SDPGrammar.isDigit($0) || $0 == SDPGrammar.dot }
        if looksNumeric || SDPGrammar.contains(token, SDPGrammar.colon) {
            do {
                return .ip(try IPAddress(parsing: SDPGrammar.string(token)))
            } catch {
                throw failure(.invalidField, field, token, "is not a valid IP address: \(error.detail)")
            }
        }
        if let problem = hostnameProblem(token) {
            throw failure(.invalidField, field, token, "is neither an IP address nor a host name: \(problem)")
        }
        return .hostname(SDPGrammar.string(token))
    }

    /// Why `token` is not a DNS host name (RFC 1123 §2.1 letters, digits and hyphens), or nil.
    private func hostnameProblem(_ token: ArraySlice<UInt8>) -> String? {
        var name = token
        if name.last == SDPGrammar.dot { name = name.dropLast() }  // a fully qualified "a.local."
        guard name.count <= 253 else { return "longer than 253 characters" }
        for label in SDPGrammar.split(name, on: SDPGrammar.dot, omittingEmpty: false) {
            guard (1...63).contains(label.count) else { return "a label is empty or longer than 63 characters" }
            guard SDPGrammar.all(label, { SDPGrammar.isAlpha($0) || SDPGrammar.isDigit($0) || $0 == SDPGrammar.hyphen })
            else { return "only letters, digits, '-' and '.' are allowed" }
            guard label.first != SDPGrammar.hyphen, label.last != SDPGrammar.hyphen else {
                return "a label starts or ends with '-'"
            }
        }
        return nil
    }

    private func failure(
        _ kind: CandidateParseError.Kind, _ field: CandidateParseError.Field?, _ token: ArraySlice<UInt8>?,
        _ detail: String
    ) -> CandidateParseError {
        CandidateParseError(
            kind: kind, field: field, token: token.map { SDPGrammar.string($0) }, input: input, detail: detail)
    }
}
