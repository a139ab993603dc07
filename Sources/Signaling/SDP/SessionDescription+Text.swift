// Writing a session description, RFC 8866 §5: lines in the order the RFC fixes, each ended by
// CRLF (RFC 8866 §5 and RFC 8829 §5.2.1 use CRLF; the parser also accepts LF).

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

    /// The SDP text, every line ended by CRLF: the lines of `lines`, written straight into one
    /// string (every offer and answer is printed; an array of lines and a string per line and
    /// attribute cost twice the text itself).
    public var description: String {
        var text = ""
        text.reserveCapacity(2048)
        text += "v=0\r\n"
        SDPText.line(&text, "o=", origin.description)
        SDPText.line(&text, "s=", sessionName)
        for line in otherLines where line.rank == 0 { SDPText.line(&text, "", line.description) }
        if let connection { SDPText.line(&text, "c=", connection.description) }
        for bandwidth in bandwidths { SDPText.line(&text, "b=", bandwidth.description) }
        for t in timing { SDPText.line(&text, "t=", t.description) }
        for line in otherLines where line.rank > 0 { SDPText.line(&text, "", line.description) }
        for attribute in attributes { attribute.writeLine(to: &text) }
        for section in media { section.write(to: &text) }
        return text
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
    func write(to text: inout String) {
        text += "m="
        text += kind.description
        text += " "
        text += String(port)
        if let portCount {
            text += "/"
            text += String(portCount)
        }
        text += " "
        text += transportProtocol
        text += " "
        for (i, format) in formats.enumerated() {
            if i > 0 { text += " " }
            text += format
        }
        text += "\r\n"
        for line in otherLines where line.rank == 0 { SDPText.line(&text, "", line.description) }
        if let connection { SDPText.line(&text, "c=", connection.description) }
        for bandwidth in bandwidths { SDPText.line(&text, "b=", bandwidth.description) }
        for line in otherLines where line.rank > 0 { SDPText.line(&text, "", line.description) }
        for attribute in attributes { attribute.writeLine(to: &text) }
    }
}

extension SDPAttribute {
    /// Writes `a=` and `description`, then CRLF, without making the value a string of its own
    /// for the attributes every description has many of.
    func writeLine(to text: inout String) {
        text += "a="
        text += name
        switch self {
        case .rtpMap(let payloadType, let encodingName, let clockRate, let channels):
            text += ":"
            text += String(payloadType)
            text += " "
            text += encodingName
            text += "/"
            text += String(clockRate)
            if let channels {
                text += "/"
                text += String(channels)
            }
        case .formatParameters(let format, let parameters):
            text += ":"
            text += format
            text += " "
            text += parameters
        case .rtcpFeedback(let payloadType, let feedback):
            text += ":"
            text += payloadType.map(String.init) ?? "*"
            text += " "
            text += feedback.description
        case .iceUsernameFragment(let value), .icePassword(let value), .mid(let value):
            text += ":"
            text += value
        default:
            if let value {
                text += ":"
                text += value
            }
        }
        text += "\r\n"
    }
}

/// Line writing shared by sessions and sections.
enum SDPText {
    @inline(__always)
    static func line(_ text: inout String, _ prefix: String, _ value: String) {
        text += prefix
        text += value
        text += "\r\n"
    }
}
