import ArgumentParser

/// The `bioauth` command line.
@main
struct BioAuthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bioauth",
        abstract: "BioAuth: biometric sign-in and payment for iOS apps, with the server that makes it secure.",
        subcommands: [DemoCommand.self, ServeCommand.self, DeviceCommand.self, BenchCommand.self, AdminCommand.self]
    )
}
