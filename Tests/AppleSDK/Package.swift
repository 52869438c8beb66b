// swift-tools-version:6.1
// BioAuthApple compiled and run on Linux against stand-ins for Apple's frameworks: LocalAuthentication, Security,
// CryptoKit (Secure Enclave), DeviceCheck and AuthenticationServices (passkeys; its delegate protocols' isolation as
// Xcode 26's SDK or, with BIOAUTH_APPLE_SDK=xcode16, as Xcode 16's), each declaring what the iOS 18 SDK declares to Swift for the parts
// BioAuth uses (the source of each declaration is at the top of its file), UIKit's app and device, and SwiftUI's
// declarations for type-checking (with Combine's ObservableObject), built as SDK modules are (Swift 5 mode,
// library evolution), with a scripted phone behind them (AppleDeviceSimulation) that behaves as iOS documents.
// BioAuthApple's own files are the main package's (a symbolic link), compiled as the module BioAuthAppleUnderTest (target
// names must differ from the main package's) in Swift 6 mode with warnings as errors.
// The stand-ins are named as Apple's modules, so any package in this build that checks `canImport(Security)` would
// compile its Apple-only code against them: only BioAuthClient and swift-crypto (whose Apple paths depend on the OS,
// not on canImport) are in the graph. Test-only: nothing here is part of a product users build. Run by
// scripts/apple-check.sh.
import PackageDescription

let sdk: [SwiftSetting] = [.swiftLanguageMode(.v5), .unsafeFlags(["-enable-library-evolution"])]
// BIOAUTH_APPLE_SDK=xcode16: the declarations whose isolation Xcode 26's SDK changed, as Xcode 16's SDK gives them
// (scripts/apple-check.sh builds both).
let xcode16: [SwiftSetting] = Context.environment["BIOAUTH_APPLE_SDK"] == "xcode16" ? [.define("BIOAUTH_SDK_XCODE16")] : []

let package = Package(
    name: "AppleSDK",
    dependencies: [
        // The client products only, as an app adds them (README, "Adding BioAuth to an app").
        .package(name: "BioAuth", path: "../..", traits: []),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        .target(name: "AppleDeviceSimulation", path: "Stubs/AppleDeviceSimulation"),
        .target(name: "LocalAuthentication", dependencies: ["AppleDeviceSimulation"], path: "Stubs/LocalAuthentication", swiftSettings: sdk),
        .target(name: "Security", dependencies: ["AppleDeviceSimulation"], path: "Stubs/Security", swiftSettings: sdk),
        .target(
            name: "CryptoKit",
            dependencies: ["AppleDeviceSimulation", "LocalAuthentication", "Security", .product(name: "Crypto", package: "swift-crypto")],
            path: "Stubs/CryptoKit",
            swiftSettings: sdk
        ),
        .target(name: "DeviceCheck", dependencies: ["AppleDeviceSimulation"], path: "Stubs/DeviceCheck", swiftSettings: sdk),
        .target(name: "UIKit", path: "Stubs/UIKit", swiftSettings: sdk),
        .target(name: "Combine", path: "Stubs/Combine", swiftSettings: sdk),
        .target(name: "SwiftUI", dependencies: ["Combine", "UIKit"], path: "Stubs/SwiftUI", swiftSettings: sdk),
        .target(
            name: "AuthenticationServices",
            dependencies: ["AppleDeviceSimulation", "UIKit"],
            path: "Stubs/AuthenticationServices",
            swiftSettings: sdk + xcode16
        ),
        .target(
            name: "BioAuthAppleUnderTest",
            dependencies: [
                .product(name: "BioAuthClient", package: "BioAuth"), .product(name: "BioAuthCore", package: "BioAuth"),
                "LocalAuthentication", "Security", "CryptoKit", "DeviceCheck", "UIKit", "SwiftUI", "AuthenticationServices",
            ],
            path: "Sources/BioAuthApple",
            swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]
        ),
        .testTarget(
            name: "AppleAdapterTests",
            dependencies: [
                "BioAuthAppleUnderTest", "AppleDeviceSimulation", "LocalAuthentication", "Security", "DeviceCheck", "UIKit",
                "AuthenticationServices",
                .product(name: "BioAuthClient", package: "BioAuth"), .product(name: "BioAuthCore", package: "BioAuth"),
            ],
            // Swift Testing declares an overlay for Testing + UIKit that exists only in Apple's toolchains.
            swiftSettings: [.unsafeFlags(["-Xfrontend", "-disable-cross-import-overlays"])]
        ),
    ]
)
