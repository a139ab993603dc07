import Peer

/// `--media-security`, as `peer`, `call` and `bench call` take it: DTLS-SRTP where this build has it.
enum MediaSecurityOption {
    /// The option with `help`; its default is this build's (`dtls-srtp` with the WebRTC trait, else `none`).
    static func spec(_ help: String) -> OptionSpec {
        .value("--media-security", "MODE", help, default: MediaProtectionMode.defaultName,
               defaultInDocs: "dtls-srtp with the WebRTC trait, else none")
    }

    /// The mode `args` asks for, checked against the names `--media-security` takes.
    static func value(_ args: ParsedCommand) throws -> String {
        let name = args.string("--media-security") ?? MediaProtectionMode.defaultName
        guard MediaProtectionMode.names.contains(name) else {
            throw UsageError(message: "--media-security \(name): choose "
                             + MediaProtectionMode.names.joined(separator: " or "), command: args.spec)
        }
        return name
    }
}
