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

    /// The SDP text, every line ended by CRLF.
    public var description: String {
        // One string grown in place (every offer and answer is printed), not a copy per line.
        var text = ""
        text.reserveCapacity(2048)
        for line in lines {
            text += line
            text += "\r\n"
        }
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
