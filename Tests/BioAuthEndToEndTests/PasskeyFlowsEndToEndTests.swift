import BioAuthClient
import BioAuthCore
import BioAuthServer
import BioAuthTesting
import Foundation
import Testing

@Suite("Passkey flows end to end over a real socket")
struct PasskeyFlowsEndToEndTests {
    @Test(
        "Create a passkey after a password sign-in, sign out, Sign in with a passkey (no username); the Face ID offer follows, and the passkey pays nothing"
    )
    func createAndSignIn() async throws {
        try await TestBackend.run(
            configure: { $0.passkeys.origins = ["https://bank.example"] },
            { backend in
                var phone = Phone(backend)
                let provider = SimulatedPasskeyProvider()
                phone.passkeys = provider
                let flows = try await phone.launch()
                _ = try await flows.createAccount(username: "alice", password: "correct horse")
                _ = try await flows.signIn(username: "alice", password: "correct horse")
                try await flows.declineBiometricSignIn()
                let created = try await flows.createPasskey(name: "Alice's iPhone")
                #expect(created.name == "Alice's iPhone" && created.backupEligible)
                #expect(try await flows.passkeys().map(\.id) == [created.id])

                try await flows.signOut()
                let offer = try await flows.signInWithPasskey()
                #expect(offer?.title == "Sign in with Face ID?", "as after a password sign-in: the device key is offered")
                try await flows.declineBiometricSignIn()
                #expect(await flows.snapshot.state == .unlocked)
                let token = try await flows.accessToken()
                #expect(try await phone.api.passkeys(accessToken: token).first?.lastUsedAt != nil)

                // A passkey session cannot pay by itself: the phone has no device key, so Face ID payment is refused here
                // before anything is signed, and the PIN (not set) is the only other way.
                let payment = try await phone.api.createPayment(
                    amount: Money(minorUnits: 8800, currency: .cny),
                    payeeID: "merchant-coffee-042",
                    idempotencyKey: "p-1",
                    accessToken: token
                )
                await #expect(throws: (any Error).self) { _ = try await flows.pay(payment.id) }
                #expect(await problemCode { _ = try await flows.pay(payment.id, pin: "258046") } == .pinNotSet)

                // Revoked: the next passkey sign-in is refused by the server.
                try await flows.revokePasskey(created.id)
                try await flows.signOut()
                #expect(await problemCode { _ = try await flows.signInWithPasskey(username: "alice") } == .passkeyUnknownCredential)
            }
        )
    }

    @Test("without a passkey provider, or when the user closes the sheet, nothing is sent and the error says why")
    func noProvider() async throws {
        try await TestBackend.run(
            configure: { $0.passkeys.origins = ["https://bank.example"] },
            { backend in
                let flows = try await Phone(backend).launch()
                await #expect { _ = try await flows.signInWithPasskey() } throws: {
                    ($0 as? PasskeyProviderError)?.code == PasskeyProviderError.notAvailableCode
                }
                var phone = Phone(backend)
                phone.passkeys = SimulatedPasskeyProvider()
                let empty = try await phone.launch()
                await #expect { _ = try await empty.signInWithPasskey() } throws: {
                    ($0 as? PasskeyProviderError)?.code == PasskeyProviderError.notAvailableCode
                }
            }
        )
    }
}
