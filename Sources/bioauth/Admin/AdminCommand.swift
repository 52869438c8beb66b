import ArgumentParser

/// `bioauth admin`: operations on the database a server uses, for operators and scripts.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract:
            "Operations on the server's database and keys: purge what has aged out, rotate the receipt key, manage service clients, payees and operators; support a customer.",
        subcommands: [PurgeCommand.self, ReceiptKeyCommand.self, ServiceCommand.self, PayeeCommand.self, OperatorCommand.self, CustomerCommand.self]
    )
}
