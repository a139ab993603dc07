#if WebRTC
import COpenSSL

// OpenSSL reports why a call failed on a per-thread error queue; a reason a person can act on is
// the queue's text (e.g. "sslv3 alert bad certificate"). Each machine call starts with the
// queue cleared so what it reads afterwards belongs to that call (SSL_get_error(3)).

enum OpenSSLError {
    /// The queued errors' texts joined with "; " (empty when none), and the queue cleared.
    static func drainReasons() -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // "error:0A000410:SSL routines::sslv3 alert handshake failure": keep what follows the codes.
            let reason = text.split(separator: ":", omittingEmptySubsequences: false).last.map(String.init) ?? text
            if reasons.count < 4 { reasons.append(reason.isEmpty ? text : reason) }
        }
        return reasons.joined(separator: "; ")
    }
}
#endif
