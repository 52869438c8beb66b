// swift-tools-version:6.0
// The OpenAPI generator as a command, for scripts/generate-openapi.sh only: the client's and the server's code generated
// from openapi.yaml is committed, so neither BioAuth's build nor an app's depends on the generator or runs a plugin.
import PackageDescription

let package = Package(
    name: "openapi-generator",
    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator.git", exact: "1.14.3")]
)
