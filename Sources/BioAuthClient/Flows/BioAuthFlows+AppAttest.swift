import BioAuthCore
import Foundation

extension BioAuthFlows {
    /// A new App Attest key attested over the register payload, or `nil` when no provider is configured or the
    /// device can't attest (the server decides whether that is acceptable).
    func appAttestation(for payload: SignedPayload) async throws -> (keyID: Data, attestation: Data)? {
        guard let provider = configuration.appAttest, await provider.isSupported else { return nil }
        let keyID = try await provider.generateKey()
        let attestation = try await provider.attestKey(keyID, clientDataHash: payload.appAttestClientDataHash)
        return (keyID, attestation)
    }

    /// An assertion over `payload` with the attested key, or `nil` when there is no provider or no attested key.
    func appAttestAssertion(for payload: SignedPayload) async throws -> Data? {
        guard let provider = configuration.appAttest, let keyID = try await store.data(forKey: Self.appAttestKey) else { return nil }
        return try await provider.generateAssertion(keyID, clientDataHash: payload.appAttestClientDataHash)
    }
}
