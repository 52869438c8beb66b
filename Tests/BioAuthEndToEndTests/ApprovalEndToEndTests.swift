import BioAuthClient
import BioAuthCore
import BioAuthServer
import Foundation
import Logging
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
