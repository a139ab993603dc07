// Reading a session description, RFC 8866 §5 (line order and types) and §9 (grammar), as an
// incremental parser: bytes in, in pieces of any size; one `SessionDescription` out.
//
// Lines end in CRLF or LF (RFC 8866 §5 asks parsers to accept both). v=, o=, s= must open the
// description in that order; the other session lines may come in any order before the first
// m= (real stacks follow RFC order, hand-written files sometimes do not). Lines and attributes
// this layer does not know are kept, never fatal; lines it knows must be well-formed.

/// An incremental session description parser: `feed` bytes as they arrive, then `finish`.
///
/// Feeding a description whole, a line at a time or split at arbitrary byte offsets gives the
/// same result, or the same error. After an error the parser stays failed and rethrows it.
///
///     var parser = SDPParser(type: .offer)
///     try parser.feed(firstChunk)
///     try parser.feed(secondChunk)
///     let offer = try parser.finish()
public struct SDPParser: Sendable {
    /// What the parser has read so far; each case carries exactly what is known at that point.
    private enum State: Sendable {
        /// Nothing yet: the first line must be `v=0`.
        case expectingVersion
        /// Read `v=0`: `o=` must follow.
        case expectingOrigin
        /// Read `o=`: `s=` must follow.
        case expectingSessionName(SDPOrigin)
        /// In the session part, before any `m=`.
        case sessionLevel(SessionDescription)
        /// In a media section: the session so far and the section being read.
        case mediaLevel(SessionDescription, MediaDescription)
        /// Failed; every further call rethrows this.
        case failed(SDPParseError)
        /// `finish` succeeded with this description.
        case finished(SessionDescription)
    }

    /// The type given to the description (the text does not say).
    public let type: SDPType
    /// The longest line accepted, in bytes; longer lines are an error rather than a memory sink.
    public let maximumLineLength: Int

    private var state: State = .expectingVersion
    /// The bytes of the line being received, without its line break.
    private var pending: [UInt8] = []
    /// The number of lines completed so far.
    private var lineNumber = 0
    /// The first blank line since the last non-blank one: blank lines at the end are harmless,
    /// a blank line with more lines after it is an error reported at the blank line.
    private var blankLineNumber: Int?

    public init(type: SDPType, maximumLineLength: Int = 16_384) {
        self.type = type
        self.maximumLineLength = maximumLineLength
    }

    /// Reads more bytes; complete lines are parsed now, a partial last line waits for more.
    /// Calling it after a successful `finish` is a programming error.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(SDPParseError) {
        switch state {
        case .failed(let error): throw error
        case .finished: preconditionFailure("SDPParser.feed called after finish")
        default: break
        }
        let chunk = Array(bytes)[...]
        var start = chunk.startIndex
        while start < chunk.endIndex {
            let lineFeed = SDPGrammar.firstIndex(of: SDPGrammar.lineFeed, in: chunk[start...])
            pending.append(contentsOf: chunk[start..<(lineFeed ?? chunk.endIndex)])
            if pending.count > maximumLineLength {
                // Quote no more than the limit, so the error is the same however the input was cut.
                let error = SDPParseError(
                    kind: .lineTooLong, lineNumber: lineNumber + 1,
                    line: String(decoding: pending.prefix(min(120, maximumLineLength)), as: UTF8.self),
                    detail: "the line is longer than \(maximumLineLength) bytes")
                state = .failed(error)
                throw error
            }
            guard let lineFeed else { break }
            try completeLine()
            start = lineFeed + 1
        }
    }

    /// Parses the last line if it had no line break and returns the description.
    public mutating func finish() throws(SDPParseError) -> SessionDescription {
        switch state {
        case .failed(let error): throw error
        case .finished(let description): return description
        default: break
        }
        if !pending.isEmpty { try completeLine() }
        let end = lineNumber + 1
        let result: Result<SessionDescription, SDPParseError>
        switch state {
        case .expectingVersion:
            result = .failure(
                SDPParseError(
                    kind: .empty, lineNumber: end, line: "",
                    detail: lineNumber == 0 ? "the description is empty" : "the description has only blank lines"))
        case .expectingOrigin:
            result = .failure(
                SDPParseError(kind: .missingLine, lineNumber: end, line: "", detail: "the description ends before o="))
        case .expectingSessionName:
            result = .failure(
                SDPParseError(kind: .missingLine, lineNumber: end, line: "", detail: "the description ends before s="))
        case .sessionLevel(let session):
            result =
                session.timing.isEmpty
                ? .failure(
                    SDPParseError(
                        kind: .missingLine, lineNumber: end, line: "", detail: "the description has no t= line"))
                : .success(Self.normalized(session))
        case .mediaLevel(var session, let media):
            session.media.append(media)
            result = .success(Self.normalized(session))
        case .failed(let error):
            result = .failure(error)
        case .finished(let description):
            result = .success(description)
        }
        switch result {
        case .success(let description):
            state = .finished(description)
            return description
        case .failure(let error):
            state = .failed(error)
            throw error
        }
    }

    // MARK: Lines

    /// Parses `pending` as one line (dropping the CR of a CRLF) and clears it.
    private mutating func completeLine() throws(SDPParseError) {
        lineNumber += 1
        var bytes = pending[...]
        pending.removeAll(keepingCapacity: true)
        if bytes.last == SDPGrammar.carriageReturn { bytes = bytes[bytes.startIndex..<bytes.endIndex - 1] }
        if bytes.isEmpty {
            if blankLineNumber == nil { blankLineNumber = lineNumber }
            return
        }
        if let blank = blankLineNumber {
            throw fail(
                SDPLineFailure(.malformedLine, "a blank line inside the description"), lineNumber: blank, line: "")
        }
        guard let line = String(validating: bytes, as: UTF8.self) else {
            throw fail(
                SDPLineFailure(.invalidCharacter, "the line is not valid UTF-8"),
                line: String(decoding: bytes, as: UTF8.self))
        }
        if SDPGrammar.contains(bytes, 0) || SDPGrammar.contains(bytes, SDPGrammar.carriageReturn) {
            throw fail(SDPLineFailure(.invalidCharacter, "the line contains a NUL or a carriage return"), line: line)
        }
        do {
            try parse(bytes, line: line)
        } catch {
            throw fail(error, line: line)
        }
    }

    /// Records a failure on the current line (or `lineNumber`) and returns the error to throw.
    private mutating func fail(_ failure: SDPLineFailure, lineNumber: Int? = nil, line: String) -> SDPParseError {
        let error = SDPParseError(
            kind: failure.kind, lineNumber: lineNumber ?? self.lineNumber, line: line, detail: failure.detail,
            candidateError: failure.candidateError)
        state = .failed(error)
        return error
    }

    /// Parses one line of the form `<letter>=<value>` in the current state.
    private mutating func parse(_ bytes: ArraySlice<UInt8>, line: String) throws(SDPLineFailure) {
        guard bytes.count >= 2, let letter = bytes.first, SDPGrammar.isAlpha(letter),
            bytes[bytes.startIndex + 1] == SDPGrammar.equals
        else {
            throw SDPLineFailure(.malformedLine, "expected <letter>=<value>")
        }
        let type = Character(Unicode.Scalar(letter))
        let value = bytes[(bytes.startIndex + 2)..<bytes.endIndex]

        switch state {
        case .expectingVersion:
            guard type == "v" else { throw SDPLineFailure(.missingVersion, "the first line must be v=0") }
            guard value.count == 1 && value.first == UInt8(ascii: "0") else {
                throw SDPLineFailure(.unsupportedVersion, "only SDP version 0 exists (RFC 8866 §5.1)")
            }
            state = .expectingOrigin
        case .expectingOrigin:
            guard type == "o" else { throw SDPLineFailure(.missingLine, "expected the o= line after v=0") }
            state = .expectingSessionName(try SDPOrigin.parse(value))
        case .expectingSessionName(let origin):
            guard type == "s" else { throw SDPLineFailure(.missingLine, "expected the s= line after o=") }
            state = .sessionLevel(
                SessionDescription(
                    type: self.type, origin: origin, sessionName: SDPGrammar.string(value), timing: []))
        case .sessionLevel(var session):
            state = .expectingVersion  // `session` is the only reference while it is changed
            if let media = try sessionLine(type, value, line: line, session: &session) {
                state = .mediaLevel(session, media)
            } else {
                state = .sessionLevel(session)
            }
        case .mediaLevel(var session, var media):
            state = .expectingVersion
            if let next = try mediaLine(type, value, line: line, media: &media) {
                session.media.append(media)
                state = .mediaLevel(session, next)
            } else {
                state = .mediaLevel(session, media)
            }
        case .failed, .finished:
            // feed and finish never get here in these states.
            break
        }
    }

    /// A line of the session part; returns the new section when the line is `m=`.
    private func sessionLine(
        _ type: Character, _ value: ArraySlice<UInt8>, line: String, session: inout SessionDescription
    ) throws(SDPLineFailure) -> MediaDescription? {
        switch type {
        case "v": throw SDPLineFailure(.duplicateLine, "a second v= line")
        case "o": throw SDPLineFailure(.duplicateLine, "a second o= line")
        case "s": throw SDPLineFailure(.duplicateLine, "a second s= line")
        case "c":
            guard session.connection == nil else {
                throw SDPLineFailure(.duplicateLine, "a second session-level c= line")
            }
            session.connection = try SDPConnection.parse(value)
        case "b": session.bandwidths.append(try SDPBandwidth.parse(value))
        case "t": session.timing.append(try SDPTiming.parse(value))
        case "a":
            let attribute = try SDPAttribute.parse(value, line: line)
            if SDPAttribute.scope(of: attribute.name) == .mediaOnly {
                throw SDPLineFailure(
                    .misplacedAttribute, "a=\(attribute.name) belongs in a media section, but no m= line came before it"
                )
            }
            session.attributes.append(attribute)
        case "m":
            guard !session.timing.isEmpty else {
                throw SDPLineFailure(.missingLine, "the session part has no t= line before the first m= line")
            }
            return try MediaDescription.parseMediaLine(value)
        default:
            session.otherLines.append(SDPLine(type: type, value: SDPGrammar.string(value)))
        }
        return nil
    }

    /// A line of a media section; returns the next section when the line is `m=`.
    private func mediaLine(
        _ type: Character, _ value: ArraySlice<UInt8>, line: String, media: inout MediaDescription
    ) throws(SDPLineFailure) -> MediaDescription? {
        switch type {
        case "v": throw SDPLineFailure(.duplicateLine, "a second v= line")
        case "o", "s", "t", "r", "z", "u", "e", "p":
            throw SDPLineFailure(.misplacedLine, "a \(type)= line belongs in the session part, not after an m= line")
        case "c":
            guard media.connection == nil else {
                throw SDPLineFailure(.duplicateLine, "a second c= line in this section")
            }
            media.connection = try SDPConnection.parse(value)
        case "b": media.bandwidths.append(try SDPBandwidth.parse(value))
        case "a":
            let attribute = try SDPAttribute.parse(value, line: line)
            if SDPAttribute.scope(of: attribute.name) == .sessionOnly {
                throw SDPLineFailure(
                    .misplacedAttribute, "a=\(attribute.name) belongs in the session part, not in a media section")
            }
            media.attributes.append(attribute)
        case "m":
            return try MediaDescription.parseMediaLine(value)
        default:
            media.otherLines.append(SDPLine(type: type, value: SDPGrammar.string(value)))
        }
        return nil
    }

    /// Kept lines in printing order (see `SDPLine.rank`), so printing and parsing again gives
    /// an equal description.
    private static func normalized(_ session: SessionDescription) -> SessionDescription {
        func sorted(_ lines: [SDPLine]) -> [SDPLine] {
            lines.enumerated().sorted { ($0.element.rank, $0.offset) < ($1.element.rank, $1.offset) }.map(\.element)
        }
        var session = session
        session.otherLines = sorted(session.otherLines)
        for index in session.media.indices {
            session.media[index].otherLines = sorted(session.media[index].otherLines)
        }
        return session
    }
}

extension MediaDescription {
    /// Reads the value of an `m=` line: `<media> <port>[/<count>] <proto> <fmt> …`.
    static func parseMediaLine(_ value: ArraySlice<UInt8>) throws(SDPLineFailure) -> MediaDescription {
        let parts = SDPGrammar.fields(value)
        guard parts.count >= 4 else {
            throw SDPLineFailure(
                .invalidMediaLine, "m= needs media, port, protocol and at least one format, found \(parts.count) fields"
            )
        }
        guard SDPGrammar.isToken(parts[0]) else {
            throw SDPLineFailure(.invalidMediaLine, "the media type \(quote(parts[0])) is not a token")
        }
        let (portText, countText) = SDPGrammar.splitOnce(parts[1], at: SDPGrammar.slash)
        guard let port = SDPGrammar.decimal(portText, as: UInt16.self) else {
            throw SDPLineFailure(.invalidPort, "the port \(quote(portText)) is not a number from 0 to 65535")
        }
        var portCount: UInt16?
        if let countText {
            guard let count = SDPGrammar.decimal(countText, as: UInt16.self), count > 0 else {
                throw SDPLineFailure(.invalidPort, "the port count \(quote(countText)) is not a positive number")
            }
            portCount = count
        }
        let protocolParts = SDPGrammar.split(parts[2], on: SDPGrammar.slash, omittingEmpty: false)
        guard protocolParts.allSatisfy({ SDPGrammar.isToken($0) }) else {
            throw SDPLineFailure(.invalidMediaLine, "the protocol \(quote(parts[2])) is not tokens separated by '/'")
        }
        let transportProtocol = SDPGrammar.string(parts[2])
        let isRTP = isRTPProtocol(transportProtocol)
        var formats: [String] = []
        for format in parts[3...] {
            guard SDPGrammar.isToken(format) else {
                throw SDPLineFailure(.invalidMediaLine, "the format \(quote(format)) is not a token")
            }
            if isRTP { _ = try SDPAttribute.readPayloadType(format, in: "m= line") }
            formats.append(SDPGrammar.string(format))
        }
        return MediaDescription(
            kind: MediaKind(token: SDPGrammar.string(parts[0])), port: port, portCount: portCount,
            transportProtocol: transportProtocol, formats: formats, connection: nil)
    }
}

extension SessionDescription {
    /// Parses a whole description (CRLF or LF line endings).
    public init(parsing text: String, type: SDPType) throws(SDPParseError) {
        try self.init(parsing: Array(text.utf8), type: type)
    }

    /// Parses a whole description from its bytes.
    public init(parsing bytes: some Collection<UInt8>, type: SDPType) throws(SDPParseError) {
        var parser = SDPParser(type: type)
        try parser.feed(bytes)
        self = try parser.finish()
    }
}
