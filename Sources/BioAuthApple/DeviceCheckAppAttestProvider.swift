#if canImport(DeviceCheck)
import BioAuthClient
import DeviceCheck
import Foundation

/// ``AppAttestProvider`` over `DCAppAttestService.shared`: keys in the Secure Enclave, attested by Apple.
/// Needs the App Attest capability (`com.apple.developer.devicecheck.appattest-environment` entitlement) and a
/// registered app id; `isSupported` is false on the Simulator.
///
/// Not run on a device: compiled on Linux against stand-ins for the SDK's declarations and run against a scripted
/// phone (docs/APPLE.md, "Proven on Linux").
public struct DeviceCheckAppAttestProvider: AppAttestProvider {
    /// The shared App Attest service.
    public init() {}

    public var isSupported: Bool { DCAppAttestService.shared.isSupported }

    public func generateKey() async throws -> Data {
        let keyID = try await call { try await DCAppAttestService.shared.generateKey() }
        // The key id is the standard base64 of SHA-256 of the public key.
        guard let bytes = Data(base64Encoded: keyID), bytes.count == 32 else {
            throw AppAttestProviderError(code: AppAttestProviderError.failed, reason: "the service returned a key id that is not 32 bytes of base64")
        }
        return bytes
    }

    public func attestKey(_ keyID: Data, clientDataHash: Data) async throws -> Data {
        try await call { try await DCAppAttestService.shared.attestKey(keyID.base64EncodedString(), clientDataHash: clientDataHash) }
    }

    public func generateAssertion(_ keyID: Data, clientDataHash: Data) async throws -> Data {
        try await call { try await DCAppAttestService.shared.generateAssertion(keyID.base64EncodedString(), clientDataHash: clientDataHash) }
    }

    /// Runs `body`, mapping `DCError`s to ``AppAttestProviderError``.
    private func call<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as NSError where error.domain == AppAttestProviderError.deviceCheckDomain {
            throw AppAttestProviderError(deviceCheckCode: error.code)
        }
    }
}
#endif
