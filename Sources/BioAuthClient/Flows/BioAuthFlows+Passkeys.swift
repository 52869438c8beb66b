import BioAuthCore
import Foundation

extension BioAuthFlows {
    // MARK: Passkeys

    /// "Sign in with a passkey": a challenge from the server, the system's passkey sheet (the user picks a passkey
    /// and is verified), then the server's check. Without `username` any passkey the user holds for the bank can be
    /// picked; with one, only that account's. Like a password sign-in, it returns the offer to turn biometric sign-in
    /// on when the device can and it is off: a passkey signs in, but payments need this phone's own key or the PIN.
    ///
    /// - Throws: ``PasskeyProviderError`` from the sheet (`passkey_cancelled`: show nothing), ``APIProblem`` from the
    ///   server (`passkey_unknown_credential` when the passkey was revoked or is not this bank's).
    public func signInWithPasskey(username: String? = nil) async throws -> BiometricSignInOffer? {
        let provider = try passkeyProvider()
        let challenge = try await api.passkeySignInChallenge(username: username)
        let assertion = try await provider.assert(challenge.request)
        return try await signedIn(
            with: try await api.signInWithPasskey(challengeID: challenge.id, assertion, installationID: try await installationID())
        )
    }

    /// "Create a passkey" for the signed-in account, so that the user can sign in with it here, on the web and on
    /// their other devices. `name` is what the account's passkey list shows ("iPhone"). Adding a passkey is sensitive:
    /// when the server asks, one Face ID prompt steps the session up first (``withStepUp(_:_:)``).
    public func createPasskey(name: String) async throws -> RegisteredPasskey {
        let provider = try passkeyProvider()
        return try await withStepUp(.addPasskey) { token in
            let challenge = try await self.api.passkeyCreationChallenge(accessToken: token)
            let registration = try await provider.register(challenge.request)
            return try await self.api.registerPasskey(
                challengeID: challenge.id,
                registration,
                name: DisplayName.fitted(name, maxCharacters: 64, fallback: "Passkey"),
                accessToken: token
            )
        }
    }

    /// The account's passkeys.
    public func passkeys() async throws -> [RegisteredPasskey] {
        try await withAccessToken { token in try await self.api.passkeys(accessToken: token) }
    }

    /// Revokes one of the account's passkeys: it signs in nowhere from now on (after a step-up when the server asks).
    public func revokePasskey(_ passkeyID: String) async throws {
        try await withStepUp(.revokePasskey) { token in try await self.api.revokePasskey(passkeyID, accessToken: token) }
    }

    private func passkeyProvider() throws -> any PasskeyProvider {
        guard let provider = configuration.passkeys else {
            throw PasskeyProviderError(
                code: PasskeyProviderError.notAvailableCode,
                reason: "no passkey provider is configured (Configuration.passkeys)"
            )
        }
        return provider
    }
}
