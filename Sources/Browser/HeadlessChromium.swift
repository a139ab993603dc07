// Headless Chromium for calls on one machine (docs/INTEROP.md "A browser"): where it is, and the flags a
// loopback-only call needs. Starting and stopping it is the caller's (by the PID this returns a path for:
// Debian's /usr/bin/chromium is a shell wrapper, so the real binary is started to own the PID).
import Foundation

public enum HeadlessChromium {
    /// Names looked up in PATH, in order.
    public static let names = ["chromium", "chromium-browser", "google-chrome"]

    /// Why no browser can be started.
    public struct NotFound: Error, CustomStringConvertible {
        public var description: String
    }

    /// The binary to start: `explicit` if given (it must be executable), else the first of `names` in
    /// `path`; a Debian wrapper script is replaced by the binary it runs.
    public static func locate(explicit: String? = nil,
                              path: String = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        throws(NotFound) -> String {
        let files = FileManager.default
        if let explicit {
            guard files.isExecutableFile(atPath: explicit) else {
                throw NotFound(description: "--browser-path \(explicit) is not an executable file")
            }
            return realBinary(explicit)
        }
        for name in names {
            for dir in path.split(separator: ":") where files.isExecutableFile(atPath: "\(dir)/\(name)") {
                return realBinary("\(dir)/\(name)")
            }
        }
        throw NotFound(description: "no Chromium found (looked for \(names.joined(separator: ", ")) in PATH): "
                       + "install Debian's package `chromium` (apt-get install chromium) or pass --browser-path")
    }

    /// Debian's wrapper at /usr/bin/chromium runs /usr/lib/chromium/chromium: start that one, so the PID we
    /// hold is the browser's and stopping it stops the browser.
    static func realBinary(_ path: String) -> String {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let head = FileManager.default.contents(atPath: resolved)?.prefix(2), head.elementsEqual([35, 33]) else {
            return resolved
        }
        let beside = "/usr/lib/chromium/chromium"
        let isWrapper = resolved.hasSuffix("/chromium") && FileManager.default.isExecutableFile(atPath: beside)
        return isWrapper ? beside : resolved
    }

    /// The arguments (without the binary) that open `url` headless with a fresh profile in `userDataDir`;
    /// `fakeVideo` (a Y4M file) is what the fake camera captures, else Chromium's own test pattern.
    public static func arguments(url: String, userDataDir: String, fakeVideo: String? = nil,
                                 windowSize: (Int, Int) = (1280, 720)) -> [String] {
        var flags = ["--headless=new", "--no-sandbox", "--user-data-dir=\(userDataDir)",
                     "--no-first-run", "--disable-background-networking", "--disable-component-update",
                     "--disable-default-apps", "--mute-audio", "--window-size=\(windowSize.0),\(windowSize.1)",
                     // A loopback-only host: without this Chromium gathers no candidate.
                     "--allow-loopback-in-peer-connection",
                     "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
                     // Headless pages are not visible: keep their timers and decoding at full rate.
                     "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                     "--autoplay-policy=no-user-gesture-required",
                     "--enable-logging=stderr", "--v=0"]
        if let fakeVideo { flags.append("--use-file-for-fake-video-capture=\(fakeVideo)") }
        flags.append(url)
        return flags
    }
}
