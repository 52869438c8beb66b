#if canImport(AuthenticationServices) && canImport(UIKit)
import AuthenticationServices
import BioAuthClient
import Foundation
import UIKit

/// ``PasskeyProvider`` over AuthenticationServices: the system's passkey sheet (iCloud Keychain or the user's chosen
/// password manager), with user verification required.
///
/// The app needs the Associated Domains entitlement with `webcredentials:<relying party id>` (for example
/// `webcredentials:bank.example`), and the relying party's server must serve `/.well-known/apple-app-site-association`
/// listing the app under `webcredentials.apps`. Without both, every request fails (`passkey_not_allowed` or
/// `passkey_failed`). The client data iOS makes then carries the origin `https://<relying party id>`, which the BioAuth
/// server must list in `--passkey-origins`.
///
/// Not run on a device: compiled on Linux against stand-ins for the SDK's declarations and run against a scripted
/// passkey sheet (docs/APPLE.md, "Proven on Linux").
public struct AuthorizationPasskeyProvider: PasskeyProvider {
    private let anchor: @MainActor @Sendable () -> ASPresentationAnchor

    /// A provider whose sheets are presented over the window `anchor` returns (the key window of the scene asking).
    public init(anchor: @escaping @MainActor @Sendable () -> ASPresentationAnchor) {
        self.anchor = anchor
    }

    public func register(_ request: PasskeyRegistrationRequest) async throws -> PasskeyRegistration {
        try await perform {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: request.relyingPartyID)
            let registration = provider.createCredentialRegistrationRequest(
                challenge: request.challenge,
                name: request.userName,
                userID: request.userID
            )
            registration.userVerificationPreference = .required
            if #available(iOS 17.4, macOS 14.4, *) {
                registration.excludedCredentials = request.excludedCredentialIDs.map {
                    ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0)
                }
            }
            return registration
        } read: { credential in
            guard let registration = credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration,
                let attestationObject = registration.rawAttestationObject
            else { throw PasskeyProviderError(code: PasskeyProviderError.failedCode, reason: "the system returned no passkey registration") }
            // A platform passkey is reachable on this device and, through the hybrid transport, from others nearby.
            return PasskeyRegistration(
                credentialID: registration.credentialID,
                clientDataJSON: registration.rawClientDataJSON,
                attestationObject: attestationObject,
                transports: ["hybrid", "internal"]
            )
        }
    }

    public func assert(_ request: PasskeyAssertionRequest) async throws -> PasskeyAssertion {
        try await perform {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: request.relyingPartyID)
            let assertion = provider.createCredentialAssertionRequest(challenge: request.challenge)
            assertion.userVerificationPreference = .required
            assertion.allowedCredentials = request.allowedCredentialIDs.map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
            return assertion
        } read: { credential in
            guard let assertion = credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion,
                let authenticatorData = assertion.rawAuthenticatorData, let signature = assertion.signature
            else { throw PasskeyProviderError(code: PasskeyProviderError.failedCode, reason: "the system returned no passkey assertion") }
            return PasskeyAssertion(
                credentialID: assertion.credentialID,
                clientDataJSON: assertion.rawClientDataJSON,
                authenticatorData: authenticatorData,
                signature: signature,
                userHandle: assertion.userID
            )
        }
    }

    /// Runs one request through an `ASAuthorizationController` on the main actor; its credential is read in the delegate
    /// callback, so that only `Sendable` values go on.
    @MainActor
    private func perform<Value: Sendable>(
        _ makeRequest: () -> ASAuthorizationRequest,
        read: @escaping @Sendable (any ASAuthorizationCredential) throws -> Value
    ) async throws -> Value {
        try await PasskeyAuthorizationSession(anchor: anchor(), read: read).run(makeRequest())
    }
}

/// The delegate and presentation context of one passkey request: reads the credential and resumes its caller when the
/// controller reports.
///
/// The protocols' isolation differs between SDKs (Xcode 26's declares them `@MainActor`, Xcode 16's nonisolated), so the
/// three methods are `nonisolated`, which conforms under both: each reads what it was given where it is called, then
/// goes on on the main actor with `Sendable` values only. AuthenticationServices calls them on the main thread, which
/// `MainActor.assumeIsolated` checks rather than assumes.
@MainActor
private final class PasskeyAuthorizationSession<Value: Sendable>: NSObject, ASAuthorizationControllerDelegate,
    ASAuthorizationControllerPresentationContextProviding
{
    private let anchor: ASPresentationAnchor
    private nonisolated let read: @Sendable (any ASAuthorizationCredential) throws -> Value
    private var controller: ASAuthorizationController?
    private var continuation: CheckedContinuation<Value, any Error>?

    init(anchor: ASPresentationAnchor, read: @escaping @Sendable (any ASAuthorizationCredential) throws -> Value) {
        self.anchor = anchor
        self.read = read
    }

    func run(_ request: ASAuthorizationRequest) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            self.continuation = continuation
            let controller = ASAuthorizationController(authorizationRequests: [request])
            controller.delegate = self
            controller.presentationContextProvider = self
            // The controller holds its delegate weakly; the session holds the controller until it reports.
            self.controller = controller
            controller.performRequests()
        }
    }

    nonisolated func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
        MainActor.assumeIsolated { anchor }
    }

    nonisolated func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        let outcome = Result { try read(authorization.credential) }
        MainActor.assumeIsolated { finish(outcome) }
    }

    nonisolated func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        let nsError = error as NSError
        let refusal =
            nsError.domain == ASAuthorizationErrorDomain
            ? PasskeyProviderError(authorizationErrorCode: nsError.code)
            : PasskeyProviderError(code: PasskeyProviderError.failedCode, reason: "the passkey request failed (\(nsError.domain) \(nsError.code))")
        MainActor.assumeIsolated { finish(.failure(refusal)) }
    }

    /// Resumes the caller once, and lets the controller go.
    private func finish(_ outcome: Result<Value, any Error>) {
        continuation?.resume(with: outcome)
        continuation = nil
        controller = nil
    }
}
#endif
