import Foundation
import HTTPTypes
import Testing

@testable import BioAuthServer

/// Who may call an operation is decided before its body is read, for every operation the contract protects: the
/// contract the server serves is walked, so a new protected operation is checked without a new test.
@Suite("Credentials before bodies")
struct CredentialMiddlewareTests {
    /// HTTP Basic of a client's id and secret.
    static func basic(_ credentials: ServiceClients.Credentials) -> String {
        "Basic " + Data("\(credentials.clientID):\(credentials.secret)".utf8).base64EncodedString()
    }

    /// `template` with every `{parameter}` replaced by an id no object has.
    static func concrete(_ template: String) -> String {
        template.replacingOccurrences(of: #"\{[A-Za-z]+\}"#, with: "01a2aaaa-0000-7000-8000-000000000000", options: .regularExpression)
    }

    @Test(
        "every protected operation of the contract refuses a missing, a wrong-kind or an under-scoped credential before reading a malformed body (HTTP Basic included)",
        arguments: StorageBackend.available
    )
    func everyOperation(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let protected = try await ContractOperation.served(by: api).filter {
                OperationPolicy.of($0.id)?.credential != OperationPolicy.Credential.none
            }

            try await api.createAccount()
            let user = try await api.signIn()
            let clients = ServiceClients(database: api.database, clock: api.clock)
            // A client holding every scope but the one asked for, per scope.
            let allScopes = Array(ServiceClients.scopes)
            var tokensWithout: [String: String] = [:]
            var clientsWithout: [String: ServiceClients.Credentials] = [:]
            for scope in allScopes {
                let client = try await clients.create(
                    name: "without-\(scope.replacingOccurrences(of: ":", with: "-"))",
                    scopes: allScopes.filter { $0 != scope }
                )
                let token = try #require(try await api.serviceToken(client)["access_token"])
                tokensWithout[scope] = token
                clientsWithout[scope] = client
            }
            let wrong = ServiceClients.Credentials(clientID: try #require(clientsWithout.values.first).clientID, secret: "not-the-secret")
            let anyService = try #require(tokensWithout.values.first)
            let snapshot = try await api.snapshot()

            for operation in protected {
                let path = Self.concrete(operation.path)
                let required = try #require(OperationPolicy.of(operation.id)).credential
                // No credential at all, and a body that is not JSON.
                let bare = try await api.call(operation.method, path, body: "{not json")
                switch required {
                case .none:
                    Issue.record("\(operation) was filtered as protected")
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
                case .client(let scope):
                    // Client credentials first, whatever the body: JSON (even `{}`), a form with bad %-escapes, none.
                    #expect(bare.status == 401 && bare.code == "invalid_client", "\(operation): \(bare.raw)")
                    let json = try await api.call(operation.method, path, body: "{}")
                    #expect(json.status == 401 && json.code == "invalid_client", "\(operation) with {}: \(json.raw)")
                    for (name, authorization) in [
                        ("a bearer token", "Bearer \(user.access)"), ("a wrong secret", Self.basic(wrong)), ("garbage", "Basic %%%"),
                    ] {
                        let refused = try await api.call(
                            operation.method,
                            path,
                            body: "grant_type=%zz&scope=%",
                            headers: [.contentType: "application/x-www-form-urlencoded", .authorization: authorization]
                        )
                        #expect(refused.status == 401 && refused.code == "invalid_client", "\(operation) with \(name): \(refused.raw)")
                        #expect(refused["error"] == "invalid_client", "OAuth's member too: \(refused.raw)")
                    }
                    if let scope {
                        let unscoped = try await api.call(
                            operation.method,
                            path,
                            body: "{not a form",
                            headers: [
                                .contentType: "application/x-www-form-urlencoded", .authorization: Self.basic(try #require(clientsWithout[scope])),
                            ]
                        )
                        #expect(unscoped.status == 400 && unscoped.code == "unauthorized_client", "\(operation) without \(scope): \(unscoped.raw)")
                    }
                }
            }
            // A refused client's id and secret count toward its address's limit, and a known client's refusal is audited.
            var after = try await api.snapshot()
            var before = snapshot
            for table in ["rate_limits", "audit_events"] { (after[table], before[table]) = (nil, nil) }
            #expect(after == before, "no refused request wrote anything else")
            let kinds = Set(try await api.auditKinds().dropFirst(snapshot["audit_events"]?.count ?? 0))
            #expect(kinds == ["service_token_issued:failure"], "\(kinds)")
        }
    }
}
