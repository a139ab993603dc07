// Writing a session description, RFC 8866 §5: lines in the order the RFC fixes, each ended by
// CRLF (RFC 8866 §5 and RFC 8829 §5.2.1 use CRLF; the parser also accepts LF).

import ZoneCore

extension SessionDescription {
    /// The description's lines, without line breaks.
    public var lines: [String] {
        var lines = ["v=0", "o=\(origin)", "s=\(sessionName)"]
        lines += otherLines.filter { $0.rank == 0 }.map(\.description)
        if let connection { lines.append("c=\(connection)") }
        lines += bandwidths.map { "b=\($0)" }
        lines += timing.map { "t=\($0)" }
        lines += otherLines.filter { $0.rank > 0 }.map(\.description)
        lines += attributes.map { "a=\($0)" }
        for section in media {
            lines += section.lines
        }
        return lines
    }

    /// The SDP text, every line ended by CRLF: the lines of `lines`, written as UTF-8 bytes into
    /// one buffer and made a string once (every offer and answer is printed).
    public var description: String {
        var text = TextBuffer(capacity: 2048)
        text.ascii("v=0\r\n")
        text.ascii("o=")
        origin.write(to: &text)
        text.ascii("\r\n")
        text.line("s=", sessionName)
        for line in otherLines where line.rank == 0 { text.line("", line.description) }
        if let connection { connection.writeLine(to: &text) }
        for bandwidth in bandwidths { text.line("b=", bandwidth.description) }
        for t in timing { text.line("t=", t.description) }
        for line in otherLines where line.rank > 0 { text.line("", line.description) }
        for i in attributes.indices { attributes[i].writeLine(to: &text) }
        for i in media.indices { media[i].write(to: &text) }
        return text.string
    }
}

extension MediaDescription {
    /// The section's lines, from `m=`, without line breaks.
    public var lines: [String] {
        let port = portCount.map { "\(self.port)/\($0)" } ?? "\(self.port)"
        var lines = ["m=\(kind) \(port) \(transportProtocol) \(formats.joined(separator: " "))"]
        lines += otherLines.filter { $0.rank == 0 }.map(\.description)
        if let connection { lines.append("c=\(connection)") }
        lines += bandwidths.map { "b=\($0)" }
        lines += otherLines.filter { $0.rank > 0 }.map(\.description)
        lines += attributes.map { "a=\($0)" }
        return lines
    }
}

extension MediaDescription {
    /// Writes the section's lines (those of `lines`), each ended by CRLF.
    func write(to text: inout TextBuffer) {
        text.ascii("m=")
        text.append(kind.description)
        text.ascii(" ")
        text.decimal(port)
        if let portCount {
            text.ascii("/")
            text.decimal(portCount)
        }
        text.ascii(" ")
        text.append(transportProtocol)
        text.ascii(" ")
        for i in formats.indices {
            if i > formats.startIndex { text.ascii(" ") }
            text.append(formats[i])
        }
        text.ascii("\r\n")
        for line in otherLines where line.rank == 0 { text.line("", line.description) }
        if let connection { connection.writeLine(to: &text) }
        for bandwidth in bandwidths { text.line("b=", bandwidth.description) }
        for line in otherLines where line.rank > 0 { text.line("", line.description) }
        for i in attributes.indices { attributes[i].writeLine(to: &text) }
    }
}

extension SDPAttribute {
    /// Writes `a=` and `description`, then CRLF, without making the value a string of its own
    /// for the attributes every description has many of.
    func writeLine(to text: inout TextBuffer) {
        text.ascii("a=")
        text.append(name)
        switch self {
        case .rtpMap(let payloadType, let encodingName, let clockRate, let channels):
            text.ascii(":")
            text.decimal(payloadType)
            text.ascii(" ")
            text.append(encodingName)
            text.ascii("/")
            text.decimal(clockRate)
            if let channels {
                text.ascii("/")
                text.decimal(channels)
            }
        case .formatParameters(let format, let parameters):
            text.ascii(":")
            text.append(format)
            text.ascii(" ")
            text.append(parameters.text)
        case .rtcpFeedback(let payloadType, let feedback):
            text.ascii(":")
            if let payloadType { text.decimal(payloadType) } else { text.ascii("*") }
            text.ascii(" ")
            feedback.write(to: &text)
        case .iceUsernameFragment(let value), .icePassword(let value), .mid(let value):
            text.ascii(":")
            text.append(value)
        default:
            if let value {
                text.ascii(":")
                text.append(value)
            }
        }
        text.ascii("\r\n")
    }
}
