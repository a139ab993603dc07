// Which compression function SHA1 and SHA256 run: the x86 SHA extensions (SHA-NI, through the
// CDigests shim) where the CPU has them, else the portable Swift code in SHA1.swift and
// SHA256.swift. Both give the same digests; the extensions do a block in a fraction of the time.
#if canImport(Glibc)
import Glibc
#endif
#if arch(x86_64) || arch(i386)
import CDigests
#endif

/// How a SHA-1 or SHA-256 value compresses its blocks.
public enum DigestImplementation: Sendable, Equatable, CustomStringConvertible {
    /// The Swift code (FIPS 180-4 as written): any CPU.
    case portable
    /// SHA1RNDS4 / SHA256RNDS2 and their message-schedule instructions: x86 CPUs with the SHA extensions.
    case shaExtensions

    /// Whether this CPU has the SHA extensions (and the SSE4.1 and SSSE3 the shim also uses),
    /// asked of CPUID once per process. Always false off x86.
    public static let cpuHasSHAExtensions: Bool = {
        #if arch(x86_64) || arch(i386)
        return zr_cpu_has_sha_extensions() != 0
        #else
        return false
        #endif
    }()

    /// Whether `ZONERTC_PORTABLE_DIGESTS=1` was in the environment when first asked (read once):
    /// new hashes then take the portable path even where the extensions exist, to compare the two.
    public static let portableForced: Bool = {
        guard let value = getenv("ZONERTC_PORTABLE_DIGESTS") else { return false }
        return String(cString: value) == "1"
    }()

    /// What `SHA1()` and `SHA256()` use: the extensions if the CPU has them and they are not turned off.
    public static let preferred: DigestImplementation =
        cpuHasSHAExtensions && !portableForced ? .shaExtensions : .portable

    /// `requested` if this CPU can run it, else `.portable`.
    @usableFromInline
    static func runnable(_ requested: DigestImplementation) -> DigestImplementation {
        requested == .shaExtensions && !cpuHasSHAExtensions ? .portable : requested
    }

    public var description: String {
        switch self {
        case .portable: "portable"
        case .shaExtensions: "SHA extensions"
        }
    }
}
