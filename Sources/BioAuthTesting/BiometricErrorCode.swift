import BioAuthClient

/// The `BiometricError` code `body` throws, or `nil` when it returns; any other error is thrown on, so a test that
/// expects a biometric failure fails on any other.
///
/// ```swift
/// import BioAuthClient
/// import BioAuthTesting
/// import Testing
/// // Partial: assumes flows: BioAuthFlows
///
/// #expect(try await biometricErrorCode { try await flows.signInWithBiometrics() } == .userCancel)
/// ```
public func biometricErrorCode(_ body: () async throws -> Void) async throws -> BiometricError.Code? {
    do {
        try await body()
        return nil
    } catch let error as BiometricError {
        return error.code
    }
}
