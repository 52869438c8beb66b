// swift-tools-version:6.0
// The libFuzzer harnesses that need package dependencies (swift-crypto, swift-certificates): the App Attest verifier
// and the signed-payload and transaction encoders. A package of its own, so that the code under test (BioAuthCore and
// the verifier, symbolic links to the main package's folders, compiled here unchanged) builds with coverage
// instrumentation without the rest of the server's dependencies. Built and run by scripts/fuzz.sh.
import PackageDescription

let package = Package(
    name: "BioAuthFuzz",
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        .target(name: "BioAuthCore", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        .target(
            name: "AppAttestVerification",
            dependencies: [
                "BioAuthCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The entry every harness hands over to libFuzzer through.
        .target(name: "FuzzDriver"),
        .executableTarget(name: "AppAttestFuzz", dependencies: ["AppAttestVerification", "BioAuthCore", "FuzzDriver"]),
        .executableTarget(name: "EncoderFuzz", dependencies: ["BioAuthCore", "FuzzDriver"]),
    ]
)
