// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "BioAuth",
    defaultLocalization: "en",
    platforms: [.iOS(.v15), .macOS(.v12)],
    products: [
        .library(name: "BioAuthCore", targets: ["BioAuthCore"]),
        .library(name: "BioAuthClient", targets: ["BioAuthClient"]),
        .library(name: "BioAuthTesting", targets: ["BioAuthTesting"]),
        .executable(name: "bioauth", targets: ["bioauth"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // Wire types and encodings shared by the client and the server. No NIO, no Security.
        .target(
            name: "BioAuthCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        // The client SDK: biometric model, prompt copy, session state machine, app lock, stores.
        .target(
            name: "BioAuthClient",
            dependencies: ["BioAuthCore"],
            resources: [.process("Resources")]
        ),
        // Simulated authenticator, software key store and stores for tests and for app developers' tests.
        .target(
            name: "BioAuthTesting",
            dependencies: [
                "BioAuthClient",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "bioauth",
            dependencies: [
                "BioAuthClient",
                "BioAuthTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "BioAuthCoreTests", dependencies: ["BioAuthCore"]),
        .testTarget(name: "BioAuthClientTests", dependencies: ["BioAuthClient", "BioAuthTesting"]),
        .testTarget(name: "BioAuthCommandTests", dependencies: ["bioauth"]),
    ]
)
