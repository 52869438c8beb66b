import BioAuthClient
import BioAuthCore
import BioAuthServer
import Foundation
import Logging
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The bank's backend asks for a payment; the customer's app finds it pending and pays it with Face ID, and the prompt
/// shows the payee's registered name.
@Suite("Payments the bank's backend asks for, end to end")
struct ServicePaymentEndToEndTests {
    @Test("the app lists the backend's payment as pending and pays it; the prompt names the registered payee")
    func payWhatTheBackendAsked() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-service-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let databasePath = folder.appendingPathComponent("bioauth.sqlite").path
        try await TestBackend.run(
            configure: { $0.databasePath = databasePath },
            { backend in
                // The operator makes the backend's credentials (bioauth admin service create does this).
                let database = try await openDatabase(databasePath, logger: Logger(label: "e2e"))
                let credentials = try await ServiceClients(database: database).create(
                    name: "core-banking",
                    scopes: ["payees:write", "payments:write"]
                )
                try await database.close()

                let phone = Phone(backend)
                let flows = try await phone.enrolled()
                let token = try await flows.accessToken()
                let me = try await Self.json(backend.server.url, "GET", "/v1/me", bearer: token)
                let account = try #require(me["accountId"] as? String)

                // The backend: a service token, a registered payee, a payment request naming only the payee's id.
                let basic = Data("\(credentials.clientID):\(credentials.secret)".utf8).base64EncodedString()
                let issued = try await Self.json(backend.server.url, "POST", "/oauth/token", basic: basic, form: "grant_type=client_credentials")
                let service = try #require(issued["access_token"] as? String)
                _ = try await Self.json(
                    backend.server.url,
                    "POST",
                    "/v1/service/payees",
                    bearer: service,
                    body: [
                        "payeeId": "merchant-coffee-042", "name": "Coffee Shop", "verification": "verified",
                    ]
                )
                let requested = try await Self.json(
                    backend.server.url,
                    "POST",
                    "/v1/service/payments",
                    bearer: service,
                    body: [
                        "accountId": account, "amountMinor": 8800, "currency": "CNY", "payeeId": "merchant-coffee-042",
                    ],
                    idempotencyKey: "invoice-1"
                )
                let paymentID = try #require(requested["paymentId"] as? String)

                // The app: finds it pending, pays it with Face ID.
                let pending = try await phone.api.payments(status: "pending", accessToken: try await flows.accessToken())
                #expect(pending.map(\.id) == [paymentID] && pending.first?.payeeName == "Coffee Shop")
                await phone.sensor.script(.match)
                let paid = try await flows.pay(paymentID)
                #expect(paid.status == "authorized" && paid.receipt?.payeeName == "Coffee Shop")
                #expect(await phone.sensor.presentedPrompts.last?.reason == "Pay ¥88.00 to Coffee Shop")
                #expect(try await phone.api.payments(status: "pending", accessToken: try await flows.accessToken()).isEmpty)
            }
        )
    }

    /// A JSON request with a bearer token, or a form with HTTP Basic; the JSON answer (2xx expected).
    static func json(
        _ base: URL,
        _ method: String,
        _ path: String,
        bearer: String? = nil,
        basic: String? = nil,
        body: [String: any Sendable]? = nil,
        form: String? = nil,
        idempotencyKey: String? = nil
    ) async throws -> [String: Any] {
        var request = URLRequest(url: base.appendingPathComponent(String(path.dropFirst())))
        request.httpMethod = method
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let basic { request.setValue("Basic \(basic)", forHTTPHeaderField: "Authorization") }
        if let idempotencyKey { request.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        } else if let form {
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(form.utf8)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        try #require((200..<300).contains(status), "\(method) \(path): \(status) \(String(decoding: data, as: UTF8.self))")
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
