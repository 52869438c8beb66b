import BioAuthCore
import Foundation

/// Sensitive actions and the step-up that answers them (docs/PROTOCOL.md, "Step-up"): on `step_up_required` the flows
/// show one prompt that names the action ("Confirm with Face ID to change your password"), sign a step-up of this
/// session with the device key, and run the call once more. A cancel is a quiet no: the call ends with the prompt's
/// `BiometricError` (`userCancel`), which `BioAuthModel` shows no message for.
extension BioAuthFlows {
    /// Runs `call` with a valid access token; when the server answers `step_up_required` with a level this phone's device
    /// key meets, steps the session up for `action` (one prompt) and runs `call` once more. Any other answer, a level
    /// only a new sign-in meets, or a second `step_up_required` is thrown.
    ///
    /// Use it for the app's own calls to the bank's API too, when that API enforces RFC 9470 over introspection and
    /// answers with BioAuth's problem document.
    public func withStepUp<T: Sendable>(_ action: StepUpAction, _ call: @Sendable (String) async throws -> T) async throws -> T {
        do {
            return try await withAccessToken(call)
        } catch let problem as APIProblem where problem.code == .stepUpRequired {
            guard let demand = problem.stepUp, demand.deviceKeyMeetsIt, await session.snapshot.biometricSignIn.binding != nil else {
                throw problem
            }
            try await stepUp(for: demand.action == .any ? action : demand.action)
            return try await withAccessToken(call)
        }
    }

    /// Raises this session with a fresh biometric: one prompt that names `action`, the device key's signature over a
    /// `stepup` payload bound to this session and `action`, sent to the server. The step-up counts for that action (for
    /// every action of the table with `StepUpAction.any`) until the server's step-up lifetime ends, 5 minutes by default.
    ///
    /// - Throws: ``BiometricError`` from the prompt (`userCancel` when the user says no), ``APIProblem`` from the server,
    ///   ``SessionError`` when the app is not signed in and unlocked or biometric sign-in is off.
    public func stepUp(for action: StepUpAction = .any) async throws {
        let binding = try await usableBinding(signedOut: false)
        let challenge: ServerChallenge
        do {
            challenge = try await withAccessToken { token in try await self.api.stepUpChallenge(keyID: binding.publicKey.keyID, accessToken: token) }
        } catch let problem as APIProblem {
            throw try await handleServerRefusal(problem)
        }
        guard let tokens = try await storedTokens() else { throw APIProblem(.unauthenticated, detail: "Sign in first.") }
        let context = try await evaluate(.stepUp(action), biometry: binding.biometry)
        let counter = try await nextCounter()
        let proof = try await sign(
            .stepUp,
            challenge,
            tag: binding.keyTag,
            keyID: binding.publicKey.keyID,
            counter: counter,
            context: context,
            transactionHash: try CanonicalStepUp(sessionID: tokens.sessionID, action: action).hash
        )
        let assertion = try await appAttestAssertion(for: proof.payload)
        do {
            _ = try await withAccessToken { token in
                try await self.api.stepUp(
                    challengeID: challenge.id,
                    keyID: binding.publicKey.keyID,
                    counter: counter,
                    signature: proof.signature,
                    action: action,
                    appAttestAssertion: assertion,
                    accessToken: token
                )
            }
        } catch let problem as APIProblem {
            throw try await handleServerRefusal(problem)
        }
    }

    /// Changes the account password (after a step-up when the server asks for one). Every session of the account ends
    /// with it, this one too: the app is signed out, biometric sign-in stays on.
    public func changePassword(current: String, new: String) async throws {
        try await withStepUp(.changePassword) { token in try await self.api.changePassword(current: current, new: new, accessToken: token) }
        try await endLocalSession()
    }

    /// Sets or changes the payment PIN with the account password, after a step-up when the server asks for one ("Confirm
    /// with Face ID to change your payment PIN").
    public func setPaymentPIN(_ pin: String, currentPassword: String) async throws {
        try await withStepUp(.setPaymentPIN) { token in
            try await self.api.setPaymentPIN(pin, currentPassword: currentPassword, accessToken: token)
        }
    }

    /// Ten new recovery codes for the customer to write down or print (shown once; the set before is void), after a
    /// step-up when the server asks ("Confirm with Face ID to create recovery codes"). Each, with the password, binds a
    /// new phone when this one is lost (``enableBiometricSignIn(recoveryCode:)``).
    public func createRecoveryCodes() async throws -> [String] {
        try await withStepUp(.createRecoveryCodes) { token in try await self.api.createRecoveryCodes(accessToken: token) }
    }

    /// Revokes one of the account's devices (another phone, a lost iPad), after a step-up when the server asks for one.
    /// Its sessions end and its key is refused from now on; turning Face ID off on this phone is
    /// ``disableBiometricSignIn()``.
    public func revokeDevice(_ deviceID: String) async throws {
        try await withStepUp(.revokeDevice) { token in try await self.api.revokeDevice(deviceID, accessToken: token) }
    }
}
