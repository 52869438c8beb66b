import Foundation
import HTTPTypes
import Testing

@testable import BioAuthServer

/// The operations of the contract the server serves, read line by line: paths at two spaces, methods at four, their own
/// fields at six (a deeper `operationId` is a link to another operation).
struct ContractOperation: CustomStringConvertible {
    var method: HTTPRequest.Method
    var path: String
    var id = ""
    /// The security scheme it names: `bearerAuth`, `clientBasic`, or nil for none.
    var security: String?
    /// Its whole text in the contract.
    var text = ""

    var description: String { "\(method) \(path) (\(id))" }

    /// Whether the contract requires an `Idempotency-Key` header.
    var requiresIdempotencyKey: Bool { text.contains("- name: Idempotency-Key") && text.contains("required: true") }

    /// The media types under its 2xx responses.
    var successMediaTypes: Set<String> {
        var types: Set<String> = []
        var inSuccess = false
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let status = trimmed.split(separator: ":").first, status.count == 5, status.hasPrefix("\"2") {
                inSuccess = true
            } else if trimmed.hasPrefix("\"") || trimmed.hasPrefix("default:") || trimmed == "links:" {
                inSuccess = false
            } else if inSuccess, trimmed.hasSuffix(":"), trimmed.contains("/") {
                types.insert(String(trimmed.dropLast()))
            }
        }
        return types
    }

    static func all(in document: String) -> [ContractOperation] {
        var operations: [ContractOperation] = []
        var path: String?
        for line in document.split(separator: "\n").prefix(while: { !$0.hasPrefix("components:") }) {
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
                continue
            }
            if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":"),
                let method = HTTPRequest.Method(String(line.dropFirst(4).dropLast()).uppercased()), let path
            {
                operations.append(ContractOperation(method: method, path: path))
                continue
            }
            guard !operations.isEmpty else { continue }
            operations[operations.count - 1].text += line + "\n"
            if line.hasPrefix("      operationId:"), operations[operations.count - 1].id.isEmpty {
                operations[operations.count - 1].id = String(line.dropFirst("      operationId:".count)).trimmingCharacters(in: .whitespaces)
            } else if line.hasPrefix("      security:") {
                operations[operations.count - 1].security =
                    line.contains("bearerAuth") ? "bearerAuth" : line.contains("clientBasic") ? "clientBasic" : nil
            }
        }
        return operations
    }

    /// The contract as the server serves it.
    static func served(by api: API) async throws -> [ContractOperation] {
        let contract = try await api.call(.get, "/openapi.yaml", headers: [.accept: "application/yaml"])
        let operations = all(in: contract.raw)
        #expect(operations.count > 40, "the contract's operations were found")
        return operations
    }
}

/// One table decides, per operation, what the middlewares do before its handler runs (`HTTP/OperationPolicy.swift`). It is
/// held to the contract the server serves, so an operation the contract gains without a row fails here.
@Suite("The per-operation policy table")
struct OperationPolicyTests {
    @Test("every operation of the contract has exactly one row, and the rows are the contract's operations")
    func everyOperationHasARow() async throws {
        try await TestServer.run { api in
            let operations = try await ContractOperation.served(by: api)
            let ids = operations.map(\.id)
            #expect(Set(ids).count == ids.count, "operation ids are unique")
            #expect(
                Set(ids) == Set(OperationPolicy.table.keys),
                "missing: \(Set(ids).subtracting(OperationPolicy.table.keys)), extra: \(Set(OperationPolicy.table.keys).subtracting(ids))"
            )
        }
    }

    @Test("each row agrees with the contract: its security scheme, its success media type, its required Idempotency-Key, its cookies")
    func rowsAgreeWithTheContract() async throws {
        try await TestServer.run { api in
            for operation in try await ContractOperation.served(by: api) {
                let policy = try #require(OperationPolicy.of(operation.id), "\(operation) has no row")
                switch policy.credential {
                case .none: #expect(operation.security == nil, "\(operation): the contract names \(operation.security ?? "")")
                case .session, .service: #expect(operation.security == "bearerAuth", "\(operation)")
                case .client: #expect(operation.security == "clientBasic", "\(operation)")
                }
                #expect(policy.oauthProblems == (operation.security == "clientBasic"), "\(operation): OAuth endpoints speak OAuth")
                let types = operation.successMediaTypes
                #expect(types.count <= 1, "\(operation): one success media type, not \(types)")
                #expect(policy.produces?.description == types.first, "\(operation): the contract says \(types)")
                #expect(policy.idempotencyKey == operation.requiresIdempotencyKey, "\(operation)")
                #expect(policy.cookies == operation.text.lowercased().contains("cookie"), "\(operation): cookies")
            }
        }
    }

    @Test("an operation the table lacks is refused as a server error, never served without a credential")
    func missingRowFailsClosed() async throws {
        try await TestServer.run { api in
            let middleware = CredentialMiddleware(service: api.service, logger: .init(label: "test"))
            await #expect(throws: APIError.self) {
                _ = try await middleware.intercept(
                    HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: "/v1/new"),
                    body: nil,
                    metadata: .init(),
                    operationID: "anOperationAddedWithoutARow"
                ) { _, _, _ in (HTTPResponse(status: .ok), nil) }
            }
        }
    }
}
