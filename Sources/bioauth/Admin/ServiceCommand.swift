import ArgumentParser
import BioAuthCore
import BioAuthServer
import Foundation

/// `bioauth admin service`: the bank's backend services that call BioAuth with OAuth 2.0 client credentials.
struct ServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service",
        abstract: "Service clients: the bank's backends, which get service tokens at POST /oauth/token.",
        subcommands: [Create.self, List.self, DisplayName.self, NotificationEndpoint.self, RotateSecret.self, FinishRotation.self, Disable.self]
    )

    /// `{"client_id": …, "client_secret": …}` on one line, as RFC 7591 names them, for scripts.
    static func json(_ credentials: ServiceClients.Credentials) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(["client_id": credentials.clientID, "client_secret": credentials.secret]), as: UTF8.self)
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Makes a service client; prints its id and secret, once (the database keeps only a hash)."
        )
        @Argument(help: "A name: 1-64 of A-Z a-z 0-9 . _ -") var name: String
        @Option(help: "A scope to grant (repeat): sessions:introspect, payments:write, payees:write, webhooks:write, approvals:write.")
        var scope: [String] = []
        @Flag(help: "Print {\"client_id\": …, \"client_secret\": …} as one JSON object, for a script.") var json = false
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            let credentials = try await admin.withClients(environment: environment) { try await $0.create(name: name, scopes: scope) }
            if json { return try ServiceCommand.json(credentials) }
            return """
                client_id:     \(credentials.clientID)
                client_secret: \(credentials.secret)
                Store the secret now in the service's secret store: it is not shown again.
                """
        }
        func run() async throws { print(try await execute()) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lists the service clients (never their secrets).")
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            let clients = try await admin.withClients(environment: environment) { try await $0.list() }
            guard !clients.isEmpty else { return "no service clients" }
            return clients.map { client in
                let state = client.disabledAt == nil ? (client.secrets == 2 ? "rotating" : "active") : "disabled"
                return "\(client.id)  \(client.name)  \(state)  \(client.scopes.joined(separator: " "))"
            }.joined(separator: "\n")
        }
        func run() async throws { print(try await execute()) }
    }

    struct DisplayName: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "display-name",
            abstract: "Sets the name customers' phones show for the client's approval requests (\"Bank Call Centre\")."
        )
        @Argument(help: "The client id.") var clientID: String
        @Argument(help: "At most 64 characters under the display-name rule of docs/PROTOCOL.md; omit it to show the client's name again.")
        var name: String?
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            try await admin.withClients(environment: environment) { try await $0.setDisplayName(clientID: clientID, to: name) }
            return name.map { "\(clientID)'s approval requests show \"\($0)\"" } ?? "\(clientID)'s approval requests show its name"
        }
        func run() async throws { print(try await execute()) }
    }

    struct NotificationEndpoint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "notification-endpoint",
            abstract: "Sets where OpenID CIBA's ping mode notifies the client (it must then send client_notification_token)."
        )
        @Argument(help: "The client id.") var clientID: String
        @Argument(
            help:
                "https:// (http:// only to loopback, for a test on one machine: the server then needs --outbound-allow 127.0.0.1, as for any destination inside the network); omit it to remove the endpoint (the client polls)."
        )
        var url: String?
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            try await admin.withClients(environment: environment) { try await $0.setNotificationEndpoint(clientID: clientID, to: url) }
            return url.map { "\(clientID) is pinged at \($0) (CIBA ping mode)" } ?? "\(clientID) polls (CIBA poll mode)"
        }
        func run() async throws { print(try await execute()) }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Adds a second secret; both work until finish-rotation. Prints the new secret, once."
        )
        @Argument(help: "The client id.") var clientID: String
        @Flag(help: "Print {\"client_id\": …, \"client_secret\": …} (the new secret) as one JSON object, for a script.") var json = false
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            let credentials = try await admin.withClients(environment: environment) { try await $0.rotateSecret(clientID: clientID) }
            if json { return try ServiceCommand.json(credentials) }
            return """
                client_id:         \(credentials.clientID)
                new client_secret: \(credentials.secret)
                Both secrets work now. Once the service uses the new one: bioauth admin service finish-rotation \(credentials.clientID)
                """
        }
        func run() async throws { print(try await execute()) }
    }

    struct FinishRotation: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Keeps only the newest secret; the older one stops working.")
        @Argument(help: "The client id.") var clientID: String
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            try await admin.withClients(environment: environment) { try await $0.finishRotation(clientID: clientID) }
            return "\(clientID): only the newest secret works now"
        }
        func run() async throws { print(try await execute()) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disables a client: its secrets and tokens stop working at once.")
        @Argument(help: "The client id.") var clientID: String
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            try await admin.withClients(environment: environment) { try await $0.disable(clientID: clientID) }
            return "\(clientID): disabled"
        }
        func run() async throws { print(try await execute()) }
    }
}

extension AdminOptions {
    /// Runs `body` with the service clients of the database.
    func withClients<R>(environment: [String: String], _ body: (ServiceClients) async throws -> R) async throws -> R {
        try await withDatabase(environment: environment) { executor, _ in try await body(ServiceClients(database: executor)) }
    }
}
