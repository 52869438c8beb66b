import BioAuthCore
import Foundation

/// The device half of the secure environment check (安全环境校验): Apple's App Attest.
///
/// `BioAuthApple`'s `DeviceCheckAppAttestProvider` wraps `DCAppAttestService`; `BioAuthTesting`'s
/// `SimulatedAppAttestProvider` does the same with a test CA that a test deployment trusts, so the whole path
/// runs on Linux. ``BioAuthFlows`` attests a new key when biometric sign-in is turned on and sends an assertion
/// with every biometric sign-in and payment; the client-data hash is always SHA-256 of the signed payload the
/// device key signs in the same request.
public protocol AppAttestProvider: Sendable {
    /// Whether this device can attest (`false` on the Simulator and on devices without App Attest).
    var isSupported: Bool { get async }

    /// Makes a new App Attest key; returns its key id (32 bytes).
    func generateKey() async throws -> Data

    /// Asks Apple to attest `keyID`, binding `clientDataHash`; returns the attestation object (CBOR).
    func attestKey(_ keyID: Data, clientDataHash: Data) async throws -> Data

    /// Signs `clientDataHash` with `keyID`; returns the assertion object (CBOR).
    func generateAssertion(_ keyID: Data, clientDataHash: Data) async throws -> Data
}

/// An App Attest call on the device failed.
public struct AppAttestProviderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable code: `app_attest_unsupported`, `app_attest_invalid_key` (the key is gone: turn biometric sign-in
    /// off and on again), `app_attest_service_unavailable` (try again later), `app_attest_failed`.
    public let code: String
    /// A diagnostic without secrets.
    public let reason: String

    /// An error with `code`.
    public init(code: String, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }

    /// The device can't run App Attest.
    public static let unsupported = "app_attest_unsupported"
    /// The App Attest key is gone (a restore, a reinstall): turn biometric sign-in off and on again.
    public static let invalidKey = "app_attest_invalid_key"
    /// Apple's service did not answer: try again later.
    public static let serviceUnavailable = "app_attest_service_unavailable"
    /// Any other failure.
    public static let failed = "app_attest_failed"
    /// Every code.
    public static let codes = [unsupported, invalidKey, serviceUnavailable, failed]

    /// What to offer the user: the bank (the device can't run the check it requires), nothing but the message's
    /// "turn biometric sign-in off and on" (the key is gone), later (Apple's service is down), or again.
    public var recovery: RecoveryAction {
        switch code {
        case Self.unsupported: .contactBank
        case Self.invalidKey: .none
        case Self.serviceUnavailable: .tryLater
        default: .retry
        }
    }

    /// The message to show, in `language`, naming the sensor.
    public func message(in language: Language, biometry: BiometryKind = .none) -> String {
        let known = Self.codes.contains(code) ? code : Self.failed
        return Localizer.string("refusal.\(known)", language: language, biometry: biometry, signedIn: false)
    }

    /// `DCErrorDomain`.
    public static let deviceCheckDomain = "com.apple.devicecheck.error"

    /// The error for a `DCError` code: 1 feature unsupported, 2 invalid input, 3 invalid key, 4 server
    /// unavailable, anything else (0 unknown system failure) a plain failure.
    public init(deviceCheckCode code: Int) {
        switch code {
        case 1: self.init(code: Self.unsupported, reason: "App Attest is not supported on this device (DCError 1)")
        case 3: self.init(code: Self.invalidKey, reason: "the App Attest key is invalid; attest a new one (DCError 3)")
        case 4: self.init(code: Self.serviceUnavailable, reason: "Apple's App Attest service is unavailable; try again later (DCError 4)")
        default: self.init(code: Self.failed, reason: "App Attest failed (DCError \(code))")
        }
    }
}
