// swift-tools-version:6.1
// ZoneRTC depends on no other Swift package: the toolchain and our own C shims only.
import PackageDescription

let package = Package(
    name: "ZoneRTC",
    products: [
        .executable(name: "zonertc", targets: ["zonertc"]),
        .library(name: "ZoneCore", targets: ["ZoneCore"]),
        .library(name: "RecordStore", targets: ["RecordStore"]),
        .library(name: "Signaling", targets: ["Signaling"]),
    ],
    targets: [
        .target(name: "ZoneCore"),
        .target(name: "RecordStore", dependencies: ["ZoneCore"]),
        .target(name: "Signaling", dependencies: ["ZoneCore", "RecordStore"]),
        .executableTarget(name: "zonertc", dependencies: ["ZoneCore", "RecordStore"]),
        .executableTarget(
            name: "zonertc-bench",
            dependencies: ["ZoneCore", "RecordStore"],
            path: "Bench/ZoneBench"
        ),
        .testTarget(name: "ZoneCoreTests", dependencies: ["ZoneCore"]),
        .testTarget(name: "RecordStoreTests", dependencies: ["RecordStore", "ZoneCore"]),
        // Runs the built `zonertc` binary as a user would.
        .testTarget(name: "CLITests", dependencies: ["RecordStore", "ZoneCore"]),
        .testTarget(name: "SignalingTests", dependencies: ["Signaling", "RecordStore", "ZoneCore"]),
    ]
)
