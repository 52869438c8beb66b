import ArgumentParser

/// `bioauth admin`: operations on the database a server uses, for operators and scripts.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Operations on the server's database: purge what has aged out.",
        subcommands: [PurgeCommand.self]
    )
}
