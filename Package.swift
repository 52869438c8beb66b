// swift-tools-version:6.1
import PackageDescription

// Two parts in one package. The client (BioAuthCore, BioAuthClient, BioAuthApple, BioAuthTesting) needs swift-crypto,
// the OpenAPI runtime and its URLSession transport, swift-http-types and, for BioAuthTesting's simulated App Attest,
// swift-certificates. Everything else (the server, `bioauth`, the tests) is behind the "Server" trait, which is on by
// default here, so `swift run bioauth demo` and `swift test` need no flag. An app adds the package with `traits: []`
// and SwiftPM then neither resolves nor builds a server-side package (README, "Adding BioAuth to an app";
// scripts/check-client-package.sh proves it in CI). The OpenAPI code of both sides is generated ahead of time and
// committed (scripts/generate-openapi.sh), so no build plugin runs.
let server = TargetDependencyCondition.when(traits: ["Server"])

let package = Package(
    name: "BioAuth",
    defaultLocalization: "en",
    platforms: [.iOS(.v15), .macOS(.v13)],
    products: [
        .library(name: "BioAuthCore", targets: ["BioAuthCore"]),
        .library(name: "BioAuthClient", targets: ["BioAuthClient"]),
        .library(name: "BioAuthApple", targets: ["BioAuthApple"]),
        .library(name: "BioAuthTesting", targets: ["BioAuthTesting"]),
        .library(name: "BioAuthServer", targets: ["BioAuthServer"]),
        .executable(name: "bioauth", targets: ["bioauth"]),
    ],
    traits: [
        .trait(name: "Server", description: "The server, the bioauth command and the tests, with their dependencies"),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "4.5.2"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        // Server metrics: recorded through swift-metrics, exported in Prometheus's text format.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // Documentation: `swift package generate-documentation` (DocC catalogs in Sources/*/*.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        // Tests only: property-based tests of the encoders.
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
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
            dependencies: [
                "BioAuthCore",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            resources: [.process("Resources")]
        ),
        // Apple backends: LAContext, Keychain, Secure Enclave, app lifecycle, SwiftUI. Every file that uses an Apple
        // framework is under `#if canImport(...)`, so on Linux this target holds only the lifecycle event queue;
        // scripts/apple-check.sh compiles and runs the rest against stand-ins for the frameworks (Tests/AppleSDK).
        .target(
            name: "BioAuthApple",
            dependencies: ["BioAuthClient"]
        ),
        // Simulated authenticator, software key store and stores for tests and for app developers' tests.
        .target(
            name: "BioAuthTesting",
            dependencies: [
                "BioAuthClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The server: accounts, sessions, device binding, challenges, audit, over HTTP (Hummingbird) and SQL (SQLKit).
        .target(
            name: "BioAuthServer",
            dependencies: [
                "BioAuthCore",
                .product(name: "Hummingbird", package: "hummingbird", condition: server),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth", condition: server),
                // Operators' second factor (TOTP, RFC 6238), and the operator console's templates.
                .product(name: "HummingbirdOTP", package: "hummingbird-auth", condition: server),
                .product(name: "Mustache", package: "swift-mustache", condition: server),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: server),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird", condition: server),
                .product(name: "SQLiteKit", package: "sqlite-kit", condition: server),
                .product(name: "SQLKit", package: "sql-kit", condition: server),
                .product(name: "PostgresKit", package: "postgres-kit", condition: server),
                .product(name: "NIOCore", package: "swift-nio", condition: server),
                .product(name: "NIOPosix", package: "swift-nio", condition: server),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: server),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: server),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: server),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: server),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: server),
                .product(name: "Logging", package: "swift-log", condition: server),
                .product(name: "X509", package: "swift-certificates", condition: server),
                .product(name: "SwiftASN1", package: "swift-asn1", condition: server),
                // Passkeys: RSA (RS256, PS256) credential and attestation keys.
                .product(name: "_CryptoExtras", package: "swift-crypto", condition: server),
                .product(name: "CoreMetrics", package: "swift-metrics", condition: server),
                // Webhook deliveries to the bank's receivers.
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: server),
                // The server runs on Linux and macOS; swift-prometheus needs iOS 16, which the client products do not.
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(platforms: [.linux, .macOS], traits: ["Server"])),
            ],
            resources: [.copy("openapi.yaml"), .copy("Console/Templates"), .copy("Passkeys/Web")]
        ),
        .executableTarget(
            name: "bioauth",
            dependencies: [
                "BioAuthClient",
                "BioAuthTesting",
                "BioAuthServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: server),
                .product(name: "Hummingbird", package: "hummingbird", condition: server),
                .product(name: "Logging", package: "swift-log", condition: server),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: server),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: server),
                .product(name: "Crypto", package: "swift-crypto", condition: server),
                // bioauth bench: a pooled HTTP client for enrolment and health checks, NIO for the load
                // generator's own connections and a free loopback port for a server process, latency histograms.
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: server),
                .product(name: "NIOCore", package: "swift-nio", condition: server),
                .product(name: "NIOPosix", package: "swift-nio", condition: server),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: server),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: server),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client", condition: server),
                .product(name: "Histogram", package: "hdrhistogram-swift", condition: server),
            ]
        ),
        // What the tests need from the machine (browsers, ZBar, ICU, PostgreSQL): a test is enabled by exactly its tools.
        .target(name: "TestTools", path: "Tests/TestTools"),
        .testTarget(
            name: "BioAuthCoreTests",
            dependencies: ["BioAuthCore", "TestTools", .product(name: "PropertyBased", package: "swift-property-based", condition: server)],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "BioAuthClientTests", dependencies: ["BioAuthClient", "BioAuthTesting"]),
        .testTarget(
            name: "BioAuthCommandTests",
            dependencies: [
                "bioauth", "BioAuthServer", "BioAuthClient", "BioAuthTesting", "TestTools",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: server),
                .product(name: "NIOCore", package: "swift-nio", condition: server),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: server),
                .product(name: "Crypto", package: "swift-crypto", condition: server),
                .product(name: "NIOPosix", package: "swift-nio", condition: server),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: server),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: server),
                .product(name: "Logging", package: "swift-log", condition: server),
                .product(name: "SQLKit", package: "sql-kit", condition: server),
            ]
        ),
        .testTarget(
            name: "BioAuthEndToEndTests",
            dependencies: [
                "BioAuthClient", "BioAuthTesting", "BioAuthServer",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: server),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession", condition: server),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: server),
                .product(name: "Logging", package: "swift-log", condition: server),
            ]
        ),
        .testTarget(
            name: "BioAuthServerTests",
            dependencies: [
                "BioAuthServer",
                "BioAuthTesting",
                "TestTools",
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: server),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth", condition: server),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: server),
                .product(name: "X509", package: "swift-certificates", condition: server),
                .product(name: "PostgresKit", package: "postgres-kit", condition: server),
                .product(name: "SQLiteKit", package: "sqlite-kit", condition: server),
            ],
            resources: [.copy("Fixtures")]
        ),
    ]
)
