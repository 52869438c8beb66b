import AsyncHTTPClient
import BioAuthServer
import Foundation
import NIOCore

/// The demo's third actor: the bank's own backend, calling BioAuth as a service client (OAuth 2.0 client credentials)
/// over HTTP, as a bank's server would, in any language, from docs/PROTOCOL.md.
struct BankBackend {
    let server: URL
    let credentials: ServiceClients.Credentials
    let http: HTTPClient

    /// A failed call: the status and the problem's code.
    struct Failure: Error, CustomStringConvertible {
        let status: Int
        let body: String
        var description: String { "HTTP \(status): \(body)" }
    }

    /// `POST /oauth/token` with the client's id and secret in HTTP Basic: a service token.
    func token() async throws -> String {
        let answer = try await call(
            "POST",
            "oauth/token",
            body: Data("grant_type=client_credentials".utf8),
            contentType: "application/x-www-form-urlencoded",
            authorization: "Basic " + Data("\(credentials.clientID):\(credentials.secret)".utf8).base64EncodedString()
        )
        guard let token = answer["access_token"] as? String else { throw Failure(status: 200, body: "no access_token") }
        return token
    }

    /// `POST /v1/service/payees`: registers a payee under the name prompts will show.
    func registerPayee(_ id: String, name: String, token: String) async throws {
        _ = try await json("POST", "v1/service/payees", ["payeeId": id, "name": name, "verification": "verified"], token: token)
    }

    /// `POST /v1/service/webhook-endpoints`: subscribes `url` to `events`; returns the signing secret.
    func subscribe(_ url: URL, events: [String], token: String) async throws -> String {
        let answer = try await json("POST", "v1/service/webhook-endpoints", ["url": url.absoluteString, "events": events], token: token)
        guard let secret = answer["secret"] as? String else { throw Failure(status: 201, body: "no secret") }
        return secret
    }

    /// `POST /v1/service/payments`: asks `account` to pay a registered payee; returns the payment id.
    func requestPayment(
        account: String,
        amountMinor: Int,
        currency: String,
        payee: String,
        idempotencyKey: String,
        token: String
    )
        async throws -> String
    {
        let answer = try await json(
            "POST",
            "v1/service/payments",
            ["accountId": account, "amountMinor": amountMinor, "currency": currency, "payeeId": payee],
            token: token,
            idempotencyKey: idempotencyKey
        )
        guard let id = answer["paymentId"] as? String else { throw Failure(status: 201, body: "no paymentId") }
        return id
    }

    /// `POST /v1/service/binding-codes`: a one-time code that binds one new device of `account`, for the bank to hand the
    /// customer after its own identity check.
    /// With `recovery`, a lost phone's code: the device it binds replaces every other.
    func bindingCode(for account: String, recovery: Bool = false, token: String) async throws -> String {
        let answer = try await json("POST", recovery ? "v1/service/recovery-codes" : "v1/service/binding-codes", ["accountId": account], token: token)
        guard let code = answer["code"] as? String else { throw Failure(status: 201, body: "no code") }
        return code
    }

    /// `POST /oauth/introspect`: what the bank's API gateway learns about a customer's access token.
    func introspect(_ accessToken: String, token: String) async throws -> [String: Any] {
        let form = "token=" + (accessToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        return try await call(
            "POST",
            "oauth/introspect",
            body: Data(form.utf8),
            contentType: "application/x-www-form-urlencoded",
            authorization: "Bearer \(token)"
        )
    }

    /// `POST /bc-authorize` (OpenID CIBA) with `client`'s id and secret: asks `loginHint` to approve `bindingMessage` (or, without
    /// one, a sign-in). The answer: `auth_req_id`, `expires_in`, `interval`, and `match_number` for a sign-in.
    func backchannel(_ client: ServiceClients.Credentials, loginHint: String, bindingMessage: String?) async throws -> [String: Any] {
        var form = "scope=openid&login_hint=" + Self.formEncoded(loginHint)
        if let bindingMessage { form += "&binding_message=" + Self.formEncoded(bindingMessage) }
        return try await call(
            "POST",
            "bc-authorize",
            body: Data(form.utf8),
            contentType: "application/x-www-form-urlencoded",
            authorization: Self.basic(client)
        )
    }

    /// `POST /oauth/token` with CIBA's grant: the outcome of `authRequestID`, or the OAuth `error` while there is none
    /// (`authorization_pending`, `slow_down`, `access_denied`, `expired_token`).
    func collect(_ client: ServiceClients.Credentials, authRequestID: String) async throws -> Result<[String: Any], Failure> {
        let form = "grant_type=" + Self.formEncoded("urn:openid:params:grant-type:ciba") + "&auth_req_id=" + Self.formEncoded(authRequestID)
        do {
            return .success(
                try await call(
                    "POST",
                    "oauth/token",
                    body: Data(form.utf8),
                    contentType: "application/x-www-form-urlencoded",
                    authorization: Self.basic(client)
                )
            )
        } catch let failure as Failure {
            return .failure(failure)
        }
    }

    private static func basic(_ client: ServiceClients.Credentials) -> String {
        "Basic " + Data("\(client.clientID):\(client.secret)".utf8).base64EncodedString()
    }

    private static func formEncoded(_ value: String) -> String { value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "" }

    private func json(
        _ method: String,
        _ path: String,
        _ body: [String: any Sendable],
        token: String,
        idempotencyKey: String? = nil
    )
        async throws -> [String: Any]
    {
        try await call(
            method,
            path,
            body: try JSONSerialization.data(withJSONObject: body),
            contentType: "application/json",
            authorization: "Bearer \(token)",
            idempotencyKey: idempotencyKey
        )
    }

    private func call(
        _ method: String,
        _ path: String,
        body: Data,
        contentType: String,
        authorization: String,
        idempotencyKey: String? = nil
    ) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: server.appendingPathComponent(path).absoluteString)
        request.method = .init(rawValue: method)
        request.headers.add(name: "Content-Type", value: contentType)
        request.headers.add(name: "Authorization", value: authorization)
        if let idempotencyKey { request.headers.add(name: "Idempotency-Key", value: idempotencyKey) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await http.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(response.status.code) else { throw Failure(status: Int(response.status.code), body: String(buffer: bytes)) }
        return (try JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:]
    }
}
