import BioAuthCore
import Foundation

extension BioAuthFlows {
    /// This installation's id, made once and kept.
    func installationID() async throws -> String {
        if let data = try await store.data(forKey: Self.installationKey), let id = String(data: data, encoding: .utf8), !id.isEmpty {
            return id
        }
        let id = UUID().uuidString.lowercased()
        try await store.set(Data(id.utf8), forKey: Self.installationKey)
        return id
    }

    func storedTokens() async throws -> SessionTokens? {
        guard let data = try await store.data(forKey: Self.tokensKey) else { return nil }
        return try? JSONDecoder().decode(SessionTokens.self, from: data)
    }

    func save(_ tokens: SessionTokens) async throws {
        try await store.set(try JSONEncoder().encode(tokens), forKey: Self.tokensKey)
    }

    /// Runs `body` with a valid access token: refreshed first when it expired by the clock, and refreshed
    /// once more when the server says it expired. A session the server ended is ended here too.
    func withAccessToken<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        guard var tokens = try await storedTokens() else {
            throw APIProblem(.unauthenticated, detail: "Sign in first.")
        }
        if tokens.accessTokenExpiresAt <= clock.now { tokens = try await refresh(tokens) }
        do {
            return try await body(tokens.accessToken)
        } catch let problem as APIProblem where problem.code == .tokenExpired {
            tokens = try await refresh(tokens)
            return try await body(tokens.accessToken)
        } catch let problem as APIProblem where Self.verdict(of: problem.code) == .sessionGone {
            try await endLocalSession()
            throw problem
        }
    }

    private func refresh(_ tokens: SessionTokens) async throws -> SessionTokens {
        do {
            let fresh = try await api.refresh(tokens.refreshToken)
            try await save(fresh)
            configuration.observer?(.refreshed)
            return fresh
        } catch let problem as APIProblem where Self.verdict(of: problem.code) == .sessionGone {
            try await endLocalSession()
            throw problem
        }
    }

    /// The next signature counter, written down before it is used so that a crash never reuses one.
    func nextCounter() async throws -> UInt64 {
        let current = try await store.data(forKey: Self.counterKey).flatMap { UInt64(String(decoding: $0, as: UTF8.self)) } ?? 0
        guard current < SignedPayload.maxCounter else {
            // Only a damaged store gets here (one signature a second would take 2.9e11 years); never wrap or trap.
            throw SessionError(.corruptState, reason: "the key's signature counter is exhausted; turn biometric sign-in off and on again")
        }
        let next = current + 1
        try await store.set(Data(String(next).utf8), forKey: Self.counterKey)
        return next
    }

    /// The binding, when biometric sign-in is on, the key is still usable and the session is where it must be.
    func usableBinding(signedOut: Bool) async throws -> DeviceBinding {
        let snapshot = await session.snapshot
        guard let binding = snapshot.biometricSignIn.binding else {
            throw BiometricError(.keyNotFound, reason: "biometric sign-in is not on")
        }
        if signedOut {
            guard snapshot.state == .signedOut else { throw SessionError(.invalidTransition, reason: "already signed in") }
        } else {
            try requireInUse(snapshot)
        }
        try await session.requireUsableKey(binding, in: keyStore)
        return binding
    }

    /// The app must be signed in and unlocked (a locked app is unlocked first).
    func requireInUse(_ snapshot: SessionSnapshot) throws {
        guard snapshot.state == .unlocked || snapshot.state == .offeringBiometricSignIn else {
            throw SessionError(.invalidTransition, reason: snapshot.state == .locked ? "unlock the app first" : "sign in first")
        }
    }

    /// Shows the prompt for `purpose`.
    func evaluate(_ purpose: PromptPurpose, biometry: BiometryKind) async throws -> AuthenticationContext {
        let prompt = PromptCopy(language: configuration.language).prompt(for: purpose, biometry: biometry)
        configuration.observer?(.prompted(reason: prompt.reason))
        return try await authenticator.evaluate(prompt)
    }

    /// Signs the payload for `challenge` with the key under `tag`. A key lost to an enrollment change turns
    /// biometric sign-in off.
    func sign(
        _ purpose: SignedPayload.Purpose,
        _ challenge: ServerChallenge,
        tag: String,
        keyID: Data,
        counter: UInt64,
        context: AuthenticationContext,
        transactionHash: Data = Data()
    ) async throws -> SignedProof {
        if let expected = configuration.expectedRelyingPartyID, challenge.relyingPartyID != expected {
            throw APIProblem(.unexpectedResponse, detail: "the challenge is for \(challenge.relyingPartyID), not \(expected)")
        }
        guard challenge.purpose == purpose else {
            throw APIProblem(.unexpectedResponse, detail: "the server sent a \(challenge.purpose) challenge for a \(purpose) signature")
        }
        let payload = try SignedPayload(
            purpose: purpose,
            relyingPartyID: challenge.relyingPartyID,
            challenge: challenge.challenge,
            keyID: keyID,
            counter: counter,
            transactionHash: transactionHash
        )
        let signature: Data
        do {
            signature = try await keyStore.sign(payload.bytes, tag: tag, context: context)
        } catch let error as BiometricError where error.code == .keyInvalidated {
            if await session.snapshot.biometricSignIn.binding?.keyTag == tag { try await session.handle(.enrollmentChanged) }
            throw error
        }
        configuration.observer?(.signed(challengeID: challenge.id, payload: payload, signature: signature))
        return SignedProof(payload: payload, signature: signature)
    }

    /// A refusal that means this device can no longer sign in with its key turns biometric sign-in off here.
    func handleServerRefusal(_ problem: APIProblem) async throws -> APIProblem {
        if problem.code == .deviceRevoked || problem.code == .deviceNotFound {
            try await store.removeValue(forKey: Self.tokensKey)
            try await session.handle(.deviceRevoked)
        } else if problem.code == .appAttestMissing, await session.snapshot.biometricSignIn.binding != nil {
            // A key registered before the deployment required App Attest has no attested key beside it and will be
            // refused forever: turn it off with the reason, so that turning it on again attests a new one.
            try await session.handle(.secureEnvironmentRequired)
        }
        return problem
    }
}

/// What the device key signed, and its signature.
struct SignedProof: Sendable {
    let payload: SignedPayload
    let signature: Data
}
