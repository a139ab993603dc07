// swift-tools-version:6.1
// ZoneRTC depends on no other Swift package: the toolchain and our own C shims only.
import PackageDescription

let package = Package(
    name: "ZoneRTC",
    products: [
        .executable(name: "zonertc", targets: ["zonertc"]),
        .library(name: "ZoneCore", targets: ["ZoneCore"]),
        .library(name: "RecordStore", targets: ["RecordStore"]),
        .library(name: "STUN", targets: ["STUN"]),
    ],
    targets: [
        .target(name: "ZoneCore"),
        .target(name: "RecordStore", dependencies: ["ZoneCore"]),
        .target(name: "STUN", dependencies: ["ZoneCore"]),
        .executableTarget(name: "zonertc", dependencies: ["ZoneCore", "RecordStore"]),
        .executableTarget(
            name: "zonertc-bench",
            dependencies: ["ZoneCore", "RecordStore", "STUN"],
            path: "Bench/ZoneBench"
        ),
        .testTarget(name: "ZoneCoreTests", dependencies: ["ZoneCore"]),
        .testTarget(name: "RecordStoreTests", dependencies: ["RecordStore", "ZoneCore"]),
        .testTarget(name: "STUNTests", dependencies: ["STUN", "ZoneCore"]),
    ]
)
