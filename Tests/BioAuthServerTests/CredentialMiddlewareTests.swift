import Foundation
import HTTPTypes
import Testing

@testable import BioAuthServer

/// Who may call an operation is decided before its body is read, for every operation the contract protects: the
/// contract the server serves is walked, so a new protected operation is checked without a new test.
@Suite("Credentials before bodies")
struct CredentialMiddlewareTests {
    /// One operation of the contract: its method, path template, id and whether it needs a bearer token.
    struct Operation: CustomStringConvertible {
        var method: HTTPRequest.Method
        var path: String
        var id: String
        var bearer: Bool
        var description: String { "\(method) \(path) (\(id))" }
    }

    /// The operations of the contract's `paths`, read line by line (paths at two spaces, methods at four, their own
    /// fields at six; deeper `operationId`s are links to other operations).
    static func operations(in document: String) -> [Operation] {
        var operations: [Operation] = []
        var path: String?
        for line in document.split(separator: "\n").prefix(while: { !$0.hasPrefix("components:") }) {
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("    "), !line.hasPrefix("     "),
                let method = HTTPRequest.Method(String(line.dropFirst(4).dropLast()).uppercased()),
                line.hasSuffix(":"), let path
            {
                operations.append(Operation(method: method, path: path, id: "", bearer: false))
            } else if line.hasPrefix("      operationId:"), !operations.isEmpty, operations[operations.count - 1].id.isEmpty {
                operations[operations.count - 1].id = String(line.dropFirst("      operationId:".count)).trimmingCharacters(in: .whitespaces)
            } else if line.hasPrefix("      security:"), line.contains("bearerAuth"), !operations.isEmpty {
                operations[operations.count - 1].bearer = true
            }
        }
        return operations
    }

    /// `template` with every `{parameter}` replaced by an id no object has.
    static func concrete(_ template: String) -> String {
        template.replacingOccurrences(of: #"\{[A-Za-z]+\}"#, with: "01a2aaaa-0000-7000-8000-000000000000", options: .regularExpression)
    }

    @Test(
        "every protected operation of the contract refuses a missing, a wrong-kind or an under-scoped credential before reading a malformed body",
        arguments: StorageBackend.available
    )
    func everyOperation(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let contract = try await api.call(.get, "/openapi.yaml", headers: [.accept: "application/yaml"])
            let operations = Self.operations(in: contract.raw)
            #expect(operations.count > 30, "the contract's operations were found")
            let protected = operations.filter(\.bearer)
            #expect(Set(protected.map(\.id)) == Set(CredentialMiddleware.required.keys), "every bearer operation, and only those, is in the table")

            try await api.createAccount()
            let user = try await api.signIn()
            let clients = ServiceClients(database: api.database, clock: api.clock)
            // A client holding every scope but the one asked for, per scope.
            let allScopes = Array(ServiceClients.scopes)
            var tokensWithout: [String: String] = [:]
            for scope in allScopes {
                let client = try await clients.create(
                    name: "without-\(scope.replacingOccurrences(of: ":", with: "-"))",
                    scopes: allScopes.filter { $0 != scope }
                )
                let token = try #require(try await api.serviceToken(client)["access_token"])
                tokensWithout[scope] = token
            }
            let anyService = try #require(tokensWithout.values.first)
            let snapshot = try await api.snapshot()

            for operation in protected {
                let path = Self.concrete(operation.path)
                let required = try #require(CredentialMiddleware.required[operation.id])
                // No credential at all, and a body that is not JSON.
                let bare = try await api.call(operation.method, path, body: "{not json")
                switch required {
                case .session:
                    #expect(bare.status == 401 && bare.code == "unauthenticated", "\(operation): \(bare.raw)")
                    let wrongKind = try await api.call(operation.method, path, body: "{not json", token: anyService)
                    #expect(wrongKind.status == 401 && wrongKind.code == "unauthenticated", "\(operation) with a service token: \(wrongKind.raw)")
                case .service(let scope):
                    #expect(bare.status == 401 && bare.code == "invalid_service_token", "\(operation): \(bare.raw)")
                    let wrongKind = try await api.call(operation.method, path, body: "{not json", token: user.access)
                    #expect(wrongKind.code == "invalid_service_token", "\(operation) with a customer's token: \(wrongKind.raw)")
                    let scopedToken = try #require(tokensWithout[scope])
                    let underScoped = try await api.call(operation.method, path, body: "{not json", token: scopedToken)
                    #expect(
                        underScoped.status == 403 && underScoped.code == "insufficient_scope",
                        "\(operation) without \(scope): \(underScoped.raw)"
                    )
                }
            }
            #expect(try await api.snapshot() == snapshot, "no refused request wrote anything")
        }
    }
}
