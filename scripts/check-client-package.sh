#!/usr/bin/env bash
# An app that adds BioAuth gets only the client. This makes a throwaway app package in a temporary folder that depends
# on this repository by path exactly as README.md tells an app to (`traits: []`), with a library that uses
# BioAuthClient and BioAuthApple and a test target that uses BioAuthTesting; it resolves, lists what SwiftPM resolved,
# fails if anything outside the client's own dependencies appears (a server-side package, a build plugin, the OpenAPI
# generator), and builds the app with its tests.
#
#   scripts/check-client-package.sh            resolve, check and build
#   scripts/check-client-package.sh --resolve  resolve and check only (seconds)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

# What the client products may pull in: swift-crypto; the OpenAPI runtime, its URLSession transport and what they
# need; swift-certificates and swift-asn1 for BioAuthTesting's simulated App Attest. A new entry is a decision.
allowed="bioauth swift-crypto swift-asn1 swift-certificates swift-openapi-runtime swift-openapi-urlsession swift-http-types swift-collections"

app="$(mktemp -d)"
trap 'rm -rf "$app"' EXIT
mkdir -p "$app/Sources/BankApp" "$app/Tests/BankAppTests"
# A package's identity is its folder's (or URL's) last component; an app that adds the repository by URL knows it as
# "bioauth", so the path it depends on here ends the same way.
ln -s "$repo" "$app/bioauth"
cat > "$app/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "BankApp",
    platforms: [.iOS(.v15), .macOS(.v13)],
    dependencies: [
        .package(path: "bioauth", traits: [])
    ],
    targets: [
        .target(
            name: "BankApp",
            dependencies: [
                .product(name: "BioAuthCore", package: "bioauth"),
                .product(name: "BioAuthClient", package: "bioauth"),
                .product(name: "BioAuthApple", package: "bioauth"),
            ]
        ),
        .testTarget(
            name: "BankAppTests",
            dependencies: ["BankApp", .product(name: "BioAuthTesting", package: "bioauth")]
        ),
    ]
)
MANIFEST
cat > "$app/Sources/BankApp/SignIn.swift" <<'SWIFT'
import BioAuthApple
import BioAuthClient
import BioAuthCore

/// The reason a bank app's sign-in prompt gives, in the user's language.
public func signInReason(biometry: BiometryKind, language: Language) -> String {
    PromptCopy(language: language).prompt(for: .signIn, biometry: biometry).reason
}
SWIFT
cat > "$app/Tests/BankAppTests/SignInTests.swift" <<'SWIFT'
import BioAuthClient
import BioAuthTesting
import Testing

@testable import BankApp

@Test func aSimulatedPhoneOffersFaceID() async throws {
    let phone = SimulatedAuthenticator()
    let availability = await phone.availability(for: .biometrics)
    #expect(!signInReason(biometry: .faceID, language: .simplifiedChinese).isEmpty)
    _ = availability
}
SWIFT

cd "$app"
# Every package SwiftPM resolved for the app, by identity.
resolved_packages() {
    swift package resolve >/dev/null 2>&1
    swift package show-dependencies --format json | python3 -c '
import json, sys
seen = set()
def walk(node):
    for dep in node.get("dependencies", []):
        seen.add(dep["identity"])
        walk(dep)
walk(json.load(sys.stdin))
print(" ".join(sorted(seen)))
'
}

# The check can fail: with the package's default traits (the "Server" trait on) the server's packages do appear.
sed -i 's/\.package(path: "bioauth", traits: \[\])/.package(path: "bioauth")/' Package.swift
with_server="$(resolved_packages)"
if [[ " $with_server " != *" hummingbird "* || " $with_server " != *" postgres-kit "* ]]; then
    echo "check-client-package: with the Server trait on, the server's packages should resolve; got: $with_server" >&2
    exit 1
fi
sed -i 's/\.package(path: "bioauth")/.package(path: "bioauth", traits: [])/' Package.swift
rm -rf .build Package.resolved

resolved="$(resolved_packages)"
echo "check-client-package: an app that adds BioAuth with traits: [] resolves: $resolved"
unexpected=""
for identity in $resolved; do
    [[ " $allowed " == *" $identity "* ]] || unexpected="$unexpected $identity"
done
if [[ -n "$unexpected" ]]; then
    echo "check-client-package: an app would also resolve:$unexpected (only the client's dependencies may appear)" >&2
    exit 1
fi
if [[ "${1:-}" == "--resolve" ]]; then
    exit 0
fi
swift build --build-tests 2>&1 | tail -3
swift test --skip-build 2>&1 | tail -3
echo "check-client-package: the app built with BioAuthClient, BioAuthApple and BioAuthTesting and nothing server-side."
