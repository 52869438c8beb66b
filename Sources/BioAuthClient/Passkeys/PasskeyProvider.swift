import BioAuthCore
import Foundation

/// What the server asks a passkey provider to create (from `POST /v1/passkeys/registration-options`).
public struct PasskeyRegistrationRequest: Sendable, Equatable {
    /// The relying party id, e.g. `bank.example`; the app's associated domains must include `webcredentials:` it.
    public var relyingPartyID: String
    /// The single-use challenge.
    public var challenge: Data
    /// The account's user handle (random; it says nothing about the account).
    public var userID: Data
    /// The account's username, which the passkey is shown under.
    public var userName: String
    /// Credentials the account has already: the provider must not make a second one on the same authenticator.
    public var excludedCredentialIDs: [Data]

    /// A request as the server's options give it.
    public init(relyingPartyID: String, challenge: Data, userID: Data, userName: String, excludedCredentialIDs: [Data] = []) {
        self.relyingPartyID = relyingPartyID
        self.challenge = challenge
        self.userID = userID
        self.userName = userName
        self.excludedCredentialIDs = excludedCredentialIDs
    }
}

/// A new passkey, as the server verifies it (WebAuthn's RegistrationResponseJSON members).
public struct PasskeyRegistration: Sendable, Equatable {
    /// The credential id.
    public var credentialID: Data
    /// The client data the authenticator signed over (its hash).
    public var clientDataJSON: Data
    /// The CBOR attestation object: the authenticator data with the new public key, and the attestation statement.
    public var attestationObject: Data
    /// How the authenticator can be reached (`internal`, `hybrid`, …).
    public var transports: [String]

    /// A registration as the provider returns it.
    public init(credentialID: Data, clientDataJSON: Data, attestationObject: Data, transports: [String] = ["internal"]) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.transports = transports
    }
}

/// What the server asks a passkey provider to sign (from `POST /v1/sessions/passkey/options`).
public struct PasskeyAssertionRequest: Sendable, Equatable {
    /// The relying party id.
    public var relyingPartyID: String
    /// The single-use challenge.
    public var challenge: Data
    /// The credentials allowed; empty lets the user pick any passkey they have for the relying party.
    public var allowedCredentialIDs: [Data]

    /// A request as the server's options give it.
    public init(relyingPartyID: String, challenge: Data, allowedCredentialIDs: [Data] = []) {
        self.relyingPartyID = relyingPartyID
        self.challenge = challenge
        self.allowedCredentialIDs = allowedCredentialIDs
    }
}

/// A passkey's signature, as the server verifies it (WebAuthn's AuthenticationResponseJSON members).
public struct PasskeyAssertion: Sendable, Equatable {
    /// The id of the passkey that signed.
    public var credentialID: Data
    /// The client data the authenticator signed over (its hash).
    public var clientDataJSON: Data
    /// The authenticator data: rp id hash, flags (user present, user verified, backup), signature counter.
    public var authenticatorData: Data
    /// The signature over authenticatorData ‖ SHA-256(clientDataJSON).
    public var signature: Data
    /// The user handle stored with the passkey.
    public var userHandle: Data?

    /// An assertion as the provider returns it.
    public init(credentialID: Data, clientDataJSON: Data, authenticatorData: Data, signature: Data, userHandle: Data?) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }
}

/// Creates passkeys and signs with them: the platform's passkey UI on Apple devices (`BioAuthApple`'s
/// `AuthorizationPasskeyProvider`, over AuthenticationServices), a software authenticator in tests
/// (`BioAuthTesting`'s `SimulatedPasskeyProvider`).
///
/// Passkeys sign a user in; they never authorize a payment. A synced passkey can be used from any device the user's
/// password manager reaches, so a payment keeps requiring this device's own key (or the payment PIN).
public protocol PasskeyProvider: Sendable {
    /// Creates a passkey for `request` (the system shows its sheet and verifies the user).
    func register(_ request: PasskeyRegistrationRequest) async throws -> PasskeyRegistration

    /// Signs `request`'s challenge with a passkey the user picks (the system verifies the user).
    func assert(_ request: PasskeyAssertionRequest) async throws -> PasskeyAssertion
}

/// A passkey operation on the device did not complete.
public struct PasskeyProviderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable code: `passkey_cancelled` (the user closed the sheet: show nothing), `passkey_not_available` (no
    /// passkey for this site on this device: offer password sign-in), `passkey_not_allowed` (the app's associated
    /// domains do not cover the relying party, or the request was refused), `passkey_failed`.
    public let code: String
    /// A diagnostic without secrets.
    public let reason: String

    /// An error with one of the codes below.
    public init(code: String, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }

    /// The user closed the sheet: show nothing.
    public static let cancelledCode = "passkey_cancelled"
    /// No passkey for this site on this device (or none that may be used): offer the password.
    public static let notAvailableCode = "passkey_not_available"
    /// The app's associated domains do not cover the relying party, or the system refused the request.
    public static let notAllowedCode = "passkey_not_allowed"
    /// Anything else.
    public static let failedCode = "passkey_failed"
    /// Every code.
    public static let codes = [cancelledCode, notAvailableCode, notAllowedCode, failedCode]

    /// What to offer the user: nothing after a cancel or a refusal, the password when there is no passkey, else again.
    public var recovery: RecoveryAction {
        switch code {
        case Self.cancelledCode, Self.notAllowedCode: .none
        case Self.notAvailableCode: .usePassword
        default: .retry
        }
    }

    /// The message to show, in `language` (``BioAuthScreens/message(for:biometry:signedIn:)`` shows none after a
    /// cancel).
    public func message(in language: Language, biometry: BiometryKind = .none) -> String {
        let known = Self.codes.contains(code) ? code : Self.failedCode
        return Localizer.string("refusal.\(known)", language: language, biometry: biometry, signedIn: false)
    }

    /// The error for an `ASAuthorizationError` code: 1001 canceled, 1004 failed, 1003 not handled (no credential),
    /// 1006 matched excluded credential, 1005 not interactive, anything else a plain failure.
    public init(authorizationErrorCode code: Int) {
        switch code {
        case 1001: self.init(code: Self.cancelledCode, reason: "the user cancelled (ASAuthorizationError 1001)")
        case 1003, 1005: self.init(code: Self.notAvailableCode, reason: "no passkey was available for this request (ASAuthorizationError \(code))")
        case 1006: self.init(code: Self.notAllowedCode, reason: "this device already holds a passkey for the account (ASAuthorizationError 1006)")
        default: self.init(code: Self.failedCode, reason: "the passkey request failed (ASAuthorizationError \(code))")
        }
    }
}
