import BioAuthClient
import BioAuthCore
import BioAuthServer
import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The bank's call centre asks through OpenID CIBA; the customer's app lists the request, shows who asks and what, and
/// approves it with Face ID; the call centre collects a signed approval it verifies offline.
@Suite("Approvals on the phone (CIBA), end to end")
struct ApprovalEndToEndTests {
    @Test("the call centre's operation and a sign-in with number matching, approved with the SDK; the prompts name who asks and what")
    func approveWithTheSDK() async throws {
        try await TestBackend.withCallCentre(
            displayName: "Bank Call Centre",
            { backend, basic in
                let phone = Phone(backend)
                let flows = try await phone.enrolled()

                // The call centre asks the customer to approve a change.
                let message = "Raise the daily transfer limit to ¥50,000"
                let form =
                    "scope=openid&login_hint=alice&binding_message=" + (message.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
                let asked = try await ServicePaymentEndToEndTests.json(backend.server.url, "POST", "/bc-authorize", basic: basic, form: form)
                let handle = try #require(asked["auth_req_id"] as? String)

                let pending = try await flows.pendingApprovals()
                let request = try #require(pending.first)
                #expect(pending.count == 1 && request.bindingMessage == message && request.requester == "Bank Call Centre")
                await phone.sensor.script(.match)
                let approved = try await flows.approve(request)
                #expect(approved.status == "approved" && approved.signedApproval?.bindingMessage == message)
                #expect(
                    await phone.sensor.presentedPrompts.last?.reason
                        == "Approve: Raise the daily transfer limit to ¥50,000 — asked by Bank Call Centre"
                )

                let collected = try await ServicePaymentEndToEndTests.json(
                    backend.server.url,
                    "POST",
                    "/oauth/token",
                    basic: basic,
                    form: "grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba&auth_req_id=\(handle)"
                )
                let signed = try JSONDecoder().decode(
                    SignedApproval.self,
                    from: JSONSerialization.data(withJSONObject: try #require(collected["signedApproval"] as? [String: Any]))
                )
                let keys = try await phone.api.receiptKeys()
                #expect(keys.contains { signed.isValid(signedBy: $0) }, "the call centre verifies it offline")

                // A sign-in at the branch: the terminal shows the number, the customer picks it on the phone.
                let signIn = try await ServicePaymentEndToEndTests.json(
                    backend.server.url,
                    "POST",
                    "/bc-authorize",
                    basic: basic,
                    form: "scope=openid&login_hint=alice"
                )
                let number = try #require(signIn["match_number"] as? Int)
                let signInRequest = try #require(try await flows.pendingApprovals().first)
                #expect(signInRequest.kind == .signIn && signInRequest.numberChoices.contains(number))
                await phone.sensor.script(.match)
                let signedIn = try await flows.approve(signInRequest, number: number)
                #expect(signedIn.status == "approved" && signedIn.signedApproval?.number == number)
                #expect(await phone.sensor.presentedPrompts.last?.reason == "Sign in at Bank Call Centre?")
                let session = try await ServicePaymentEndToEndTests.json(
                    backend.server.url,
                    "POST",
                    "/oauth/token",
                    basic: basic,
                    form: "grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba&auth_req_id=\(try #require(signIn["auth_req_id"] as? String))"
                )
                #expect(session["access_token"] is String)

                // Denying needs no biometric; a number that is not offered is refused here, before anything is signed.
                _ = try await ServicePaymentEndToEndTests.json(
                    backend.server.url,
                    "POST",
                    "/bc-authorize",
                    basic: basic,
                    form: "scope=openid&login_hint=alice"
                )
                let third = try #require(try await flows.pendingApprovals().first)
                let notOffered = try #require((10...99).first { !third.numberChoices.contains($0) })
                await #expect(throws: APIProblem.self) { try await flows.approve(third, number: notOffered) }
                #expect(try await flows.deny(third.id).status == "denied")
                #expect(try await flows.pendingApprovals().isEmpty)
            }
        )
    }
}

/// Scan to sign in, on the phone: the app opens only its own bank's codes.
@Suite("Scanned sign-in codes, end to end")
struct ScannedCodeEndToEndTests {
    @Test("a live code under any other address is refused on the phone before anything is sent; the bank's own URL opens it")
    func onlyTheBanksOwnCodes() async throws {
        try await TestBackend.run(
            configure: { configuration in
                configuration.passkeys.webPageEnabled = true
                configuration.passkeys.origins = ["https://www.bank.example"]
            },
            { backend in
                let recorder = RecordingTransport(to: backend.server.url)
                let phone = Phone(backend, transport: recorder)
                let flows = try await phone.enrolled()
                let shown = try await ServicePaymentEndToEndTests.json(backend.server.url, "POST", "/v1/qr-sign-ins")
                let url = try #require(shown["url"] as? String)
                let code = String(try #require(url.split(separator: "/").last))
                for scanned in ["https://evil.example/web/q/\(code)", code, "javascript:alert(1)//\(code)", "\(url)?again"] {
                    let refused = await problemCode { _ = try await flows.openScannedURL(scanned) }
                    #expect(refused == .qrCodeNotFound, "\(scanned)")
                }
                #expect(!recorder.sent.contains("scanQRSignIn"), "nothing was sent for a code under another address")
                let opened = try await flows.openScannedURL(url)
                #expect(opened.kind == .signIn && recorder.sent.contains("scanQRSignIn"))
            }
        )
    }
}

/// Passes requests to the server and remembers which operations were sent.
final class RecordingTransport: ClientTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var operations: [String] = []
    private let server: ForwardingTransport

    init(to url: URL) { server = ForwardingTransport(to: url) }

    /// The operation ids sent so far.
    var sent: [String] { lock.withLock { operations } }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        lock.withLock { operations.append(operationID) }
        return try await server.send(request, body: body, baseURL: baseURL, operationID: operationID)
    }
}
