// swift-tools-version:6.1
// ZoneRTC depends on no other Swift package: the toolchain and our own C shims only.
import PackageDescription

/// The PostgreSQL backend, built only with `--traits PostgreSQL` (plain `swift build` needs no libpq headers).
let postgres = Target.Dependency.target(name: "PostgresStore", condition: .when(traits: ["PostgreSQL"]))

let package = Package(
    name: "ZoneRTC",
    products: [
        .executable(name: "zonertc", targets: ["zonertc"]),
        .library(name: "ZoneCore", targets: ["ZoneCore"]),
        .library(name: "RecordStore", targets: ["RecordStore"]),
        .library(name: "SDP", targets: ["SDP"]),
        .library(name: "Signaling", targets: ["Signaling"]),
        .library(name: "STUN", targets: ["STUN"]),
        .library(name: "ICE", targets: ["ICE"]),
        .library(name: "Media", targets: ["Media"]),
    ],
    // Optional system libraries, each off by default so that plain `swift build` needs no headers:
    // `WebRTC` brings OpenSSL (DTLS) and libsrtp2 (SRTP) into the `DTLS` module; `PostgreSQL` brings
    // libpq into `PostgresStore` (the record store on PostgreSQL).
    traits: [
        .trait(name: "WebRTC", description: "DTLS-SRTP through the system OpenSSL and libsrtp2"),
        .trait(name: "PostgreSQL", description: "the record store on PostgreSQL (needs libpq)"),
        .default(enabledTraits: []),
    ],
    targets: [
        .target(name: "CSystem"),
        // SHA-1 and SHA-256 on the x86 SHA extensions, enabled per function (no build flags); ZoneCore's
        // SHA1/SHA256 call it when the CPU has them and keep their Swift code otherwise.
        .target(name: "CDigests"),
        .target(name: "ZoneCore", dependencies: ["CDigests"]),
        .target(name: "Net", dependencies: ["CSystem", "ZoneCore"]),
        // The call page's web/ files are compiled into the binary (no resource bundle beside it).
        // OpenSSL only under the trait: the server-to-server key check (ECDSAP256Verifier.swift).
        .target(name: "StoreServer", dependencies: ["RecordStore", "Net", "ZoneCore",
                                                    .target(name: "COpenSSL", condition: .when(traits: ["WebRTC"]))],
                exclude: ["CallPage/package.json"], resources: [.embedInCode("CallPage/web")]),
        .target(name: "RecordStore", dependencies: ["ZoneCore"]),
        // Session descriptions (RFC 8866) and what WebRTC puts in them: parsed, written and negotiated. Its own
        // module so that DTLS (fingerprints, setup roles) needs nothing of signaling or the store.
        .target(name: "SDP", dependencies: ["ZoneCore"]),
        .target(name: "Signaling", dependencies: ["SDP", "ZoneCore", "RecordStore"]),
        // Headless Chromium: where it is, the flags a loopback call needs, ffmpeg's verdict on what it sent
        // (call --browser, the browser tests).
        .target(name: "Browser", dependencies: ["Media"]),
        .target(name: "STUN", dependencies: ["ZoneCore"]),
        .target(name: "TURN", dependencies: ["STUN", "ZoneCore"]),
        .target(name: "Relay", dependencies: ["TURN", "STUN", "Net", "ZoneCore", "CSystem"]),
        .target(name: "ICE", dependencies: ["STUN", "ZoneCore"]),
        .target(name: "Media", dependencies: ["ZoneCore"]),
        // Only depended upon under the trait, so a build without it never reads their headers.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        // DTLS and SRTP; without the trait an empty module (its sources are under `#if WebRTC`).
        .target(name: "DTLS", dependencies: [
            "SDP", "STUN", "ZoneCore",
            .target(name: "COpenSSL", condition: .when(traits: ["WebRTC"])),
            .target(name: "CSRTP", condition: .when(traits: ["WebRTC"])),
        ]),
        // The call as sans-I/O machines only: no socket, no clock, no epoll (the simulator links it).
        .target(name: "Peer", dependencies: ["SDP", "Signaling", "ICE", "TURN", "STUN", "Media", "RecordStore",
                                             "ZoneCore", "DTLS"]),
        // The real-socket driver of a call (PeerRunner: PeerCall on Net's epoll loop and the wall clock).
        .target(name: "PeerNet", dependencies: ["Peer", "Net", "Signaling", "ICE", "RecordStore", "ZoneCore"]),
        // The real-socket drivers of the media machines (MediaSender/MediaReceiver on Net).
        .target(name: "MediaNet", dependencies: ["Media", "Net", "ZoneCore"]),
        .target(name: "Simulation", dependencies: ["Peer", "SDP", "Signaling", "ICE", "TURN", "STUN", "RecordStore",
                                                   "ZoneCore"]),
        .target(name: "Harness", dependencies: ["Simulation", "Signaling", "RecordStore", "ZoneCore"]),
        // libpq as a system library; only the PostgreSQL trait pulls it (and PostgresStore) in.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(name: "PostgresStore", dependencies: [
            "RecordStore", "StoreServer", "ZoneCore", .target(name: "CLibPQ", condition: .when(traits: ["PostgreSQL"])),
        ]),
        .executableTarget(name: "zonertc", dependencies: ["ZoneCore", "RecordStore", "StoreServer", "Relay", "TURN",
                                                          "Peer", "PeerNet", "SDP", "Signaling", "Net", "Media",
                                                          "MediaNet", "Simulation", "Harness", "Browser", postgres]),
        .executableTarget(
            name: "zonertc-bench",
            dependencies: ["ZoneCore", "RecordStore", "STUN", "ICE", "StoreServer", "Peer", "Net", "DTLS", postgres,
                           // The SRTP anchors (OpenSSL's AES-GCM alone, libsrtp2 alone) beside SRTPSession.
                           .target(name: "COpenSSL", condition: .when(traits: ["WebRTC"])),
                           .target(name: "CSRTP", condition: .when(traits: ["WebRTC"]))],
            path: "Bench/ZoneBench"
        ),
        // What the tests share: spawning real processes, waiting without sleeping, and the one
        // decoder split check (whole / byte at a time / seeded random splits).
        .target(name: "TestSupport", dependencies: ["CSystem", "Net", "ZoneCore"], path: "Tests/TestSupport"),
        .target(name: "TestNetwork", dependencies: ["Simulation", "ZoneCore"], path: "Tests/TestNetwork"),
        // The test drivers of the signaling machine: a store client's requests carried out one at a
        // time, and push notifications collected for a driver that steps.
        .target(name: "CallTestSupport", dependencies: ["Signaling", "RecordStore", "ZoneCore"],
                path: "Tests/CallTestSupport"),
        // A store behind a daemon, and a client that routes writes, reads and push apart.
        .target(name: "StoreTestSupport", dependencies: ["RecordStore", "StoreServer"], path: "Tests/StoreTestSupport"),
        .testTarget(name: "ZoneCoreTests", dependencies: ["ZoneCore", "TestSupport"]),
        .testTarget(name: "RecordStoreTests", dependencies: ["RecordStore", "StoreServer", "ZoneCore", "TestSupport",
                                                             "StoreTestSupport",
                                                             postgres]),
        // Runs the built `zonertc` binary as a user would.
        .testTarget(name: "CLITests", dependencies: ["RecordStore", "StoreServer", "SDP", "Signaling", "ZoneCore",
                                                   "Media", "Net", "TestSupport", "Browser", postgres]),
        // CloudKit Web Services Reference, page by page, against the store served three ways: the
        // JSON API in-process, the daemon over HTTP, and two daemons on PostgreSQL (trait).
        .testTarget(name: "CloudKitConformanceTests", dependencies: ["StoreServer", "RecordStore", "Net", "ZoneCore",
                                                                    "TestSupport", "StoreTestSupport", postgres,
                                                                    .target(name: "COpenSSL",
                                                                            condition: .when(traits: ["WebRTC"]))]),
        .testTarget(name: "StoreServerTests", dependencies: ["StoreServer", "RecordStore", "Net", "ZoneCore",
                                                           "TestSupport"]),
        .testTarget(name: "SignalingTests", dependencies: ["SDP", "Signaling", "RecordStore", "ZoneCore", "TestSupport",
                                                         "CallTestSupport"]),
        .testTarget(name: "PeerNetTests", dependencies: ["PeerNet", "Peer", "Net", "Signaling", "RecordStore", "ZoneCore",
                                                       "StoreTestSupport"]),
        .testTarget(name: "NetTests", dependencies: ["Net", "ZoneCore"]),
        .testTarget(name: "TURNTests", dependencies: ["TestNetwork", "TURN", "STUN", "ZoneCore"]),
        .testTarget(name: "RelayTests", dependencies: ["Relay", "TURN", "STUN", "Net", "ZoneCore", "TestSupport"]),
        .testTarget(name: "STUNTests", dependencies: ["STUN", "ZoneCore", "TestSupport"]),
        .testTarget(name: "ICETests", dependencies: ["TestNetwork", "ICE", "STUN", "ZoneCore"]),
        .testTarget(name: "MediaTests", dependencies: ["TestNetwork", "Media", "ZoneCore", "TestSupport"]),
        // Under `#if WebRTC`: without the trait the suite has no DTLS tests to run.
        .testTarget(name: "DTLSTests", dependencies: ["DTLS", "SDP", "STUN", "Net", "ZoneCore",
                                                         "TestSupport", "TestNetwork"]),
        .testTarget(name: "SimulationTests", dependencies: ["Simulation", "Peer", "SDP", "Signaling", "ICE", "RecordStore",
                                                         "Media", "ZoneCore"]),
        .testTarget(name: "HarnessTests", dependencies: ["Harness", "Simulation", "Signaling", "ZoneCore"]),
        .testTarget(name: "PeerTests", dependencies: ["TestNetwork", "CallTestSupport", "Peer", "SDP", "Signaling", "ICE",
                                                    "TURN", "STUN", "Media", "RecordStore", "ZoneCore"]),
        // Our STUN, TURN and ICE against real programs (coturn, aioice); see docs/INTEROP.md.
        .testTarget(name: "InteropTests", dependencies: ["Peer", "ICE", "TURN", "STUN", "Net", "ZoneCore", "TestSupport"]),
    ]
)

// Release builds optimize across module boundaries: a simulated call crosses a dozen of our modules
// on every event (the trial, the call, signaling, the store engine, ICE, TURN, STUN, ZoneCore), and
// without this only small functions are inlined or specialized across them. `sim converge` runs about
// 6 % more calls per CPU second with it (docs/SIMULATOR.md "Speed"). A flag, not a setting, as SwiftPM
// has none for it; the cost is that a package depending on ours by version would refuse the flag.
let crossModuleOptimization = SwiftSetting.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings = (target.swiftSettings ?? []) + [crossModuleOptimization]
}
