internal import AppleDeviceSimulation
// AuthenticationServices as the iOS 18 SDK declares it to Swift, for the passkey parts BioAuth uses, over a scripted
// passkey sheet (AppleDeviceSimulation). Declarations from developer.apple.com/documentation/authenticationservices:
// ASAuthorizationPlatformPublicKeyCredentialProvider (init(relyingPartyIdentifier:),
// createCredentialRegistrationRequest(challenge:name:userID:), createCredentialAssertionRequest(challenge:)), the
// platform registration and assertion requests (userVerificationPreference; allowedCredentials; excludedCredentials,
// iOS 17.4), ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID:), ASAuthorizationController
// (init(authorizationRequests:), weak delegate and presentationContextProvider, performRequests()), the main-actor
// protocols ASAuthorizationControllerDelegate (authorizationController(controller:didCompleteWithAuthorization:) and
// (controller:didCompleteWithError:), optional in the SDK) and ASAuthorizationControllerPresentationContextProviding
// (presentationAnchor(for:)), ASPresentationAnchor (UIWindow on iOS), ASAuthorization.credential, ASPublicKeyCredential
// (credentialID, rawClientDataJSON), the platform registration (rawAttestationObject: Data?) and assertion
// (rawAuthenticatorData, signature, userID: Data!), ASAuthorizationErrorDomain and ASAuthorizationError.Code (1000
// unknown … 1006 matchedExcludedCredential, iOS 18).
import Foundation
import UIKit

public typealias ASPresentationAnchor = UIWindow

public let ASAuthorizationErrorDomain: String = "com.apple.AuthenticationServices.AuthorizationError"

/// Authorization errors.
public struct ASAuthorizationError: Error, Hashable, @unchecked Sendable {
    public enum Code: Int, @unchecked Sendable {
        case unknown = 1000
        case canceled = 1001
        case invalidResponse = 1002
        case notHandled = 1003
        case failed = 1004
        case notInteractive = 1005
        @available(iOS 18.0, macOS 15.0, *) case matchedExcludedCredential = 1006
    }
    public let code: Code
    public init(_ code: Code) { self.code = code }
}

/// A user-verification preference (a string-backed struct in the SDK).
public struct ASAuthorizationPublicKeyCredentialUserVerificationPreference: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let preferred = Self(rawValue: "preferred")
    public static let required = Self(rawValue: "required")
    public static let discouraged = Self(rawValue: "discouraged")
}

/// Any authorization request.
open class ASAuthorizationRequest: NSObject {}

/// A credential an authorization returns.
public protocol ASAuthorizationCredential: NSObjectProtocol {}

/// A public key credential.
public protocol ASPublicKeyCredential: ASAuthorizationCredential {
    var credentialID: Data { get }
    var rawClientDataJSON: Data { get }
}

/// Identifies a platform passkey.
open class ASAuthorizationPlatformPublicKeyCredentialDescriptor: NSObject {
    open var credentialID: Data
    public init(credentialID: Data) { self.credentialID = credentialID }
}

/// A request to create a platform passkey.
open class ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest: ASAuthorizationRequest {
    open var relyingPartyIdentifier: String
    open var challenge: Data
    open var name: String
    open var userID: Data
    open var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference = .preferred
    @available(iOS 17.4, macOS 14.4, *)
    open var excludedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] {
        get { excluded }
        set { excluded = newValue }
    }
    var excluded: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] = []
    init(relyingPartyIdentifier: String, challenge: Data, name: String, userID: Data) {
        self.relyingPartyIdentifier = relyingPartyIdentifier
        self.challenge = challenge
        self.name = name
        self.userID = userID
    }
}

/// A request to sign in with a platform passkey.
open class ASAuthorizationPlatformPublicKeyCredentialAssertionRequest: ASAuthorizationRequest {
    open var relyingPartyIdentifier: String
    open var challenge: Data
    open var allowedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] = []
    open var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference = .preferred
    init(relyingPartyIdentifier: String, challenge: Data) {
        self.relyingPartyIdentifier = relyingPartyIdentifier
        self.challenge = challenge
    }
}

/// Makes platform passkey requests for one relying party.
@available(iOS 15.0, macOS 12.0, *)
open class ASAuthorizationPlatformPublicKeyCredentialProvider: NSObject {
    open var relyingPartyIdentifier: String
    public init(relyingPartyIdentifier: String) { self.relyingPartyIdentifier = relyingPartyIdentifier }

    open func createCredentialRegistrationRequest(
        challenge: Data,
        name: String,
        userID: Data
    )
        -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest
    {
        ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest(
            relyingPartyIdentifier: relyingPartyIdentifier,
            challenge: challenge,
            name: name,
            userID: userID
        )
    }

    open func createCredentialAssertionRequest(challenge: Data) -> ASAuthorizationPlatformPublicKeyCredentialAssertionRequest {
        ASAuthorizationPlatformPublicKeyCredentialAssertionRequest(relyingPartyIdentifier: relyingPartyIdentifier, challenge: challenge)
    }
}

/// A new platform passkey.
open class ASAuthorizationPlatformPublicKeyCredentialRegistration: NSObject, ASPublicKeyCredential {
    open var credentialID: Data
    open var rawClientDataJSON: Data
    open var rawAttestationObject: Data?
    init(credentialID: Data, rawClientDataJSON: Data, rawAttestationObject: Data?) {
        self.credentialID = credentialID
        self.rawClientDataJSON = rawClientDataJSON
        self.rawAttestationObject = rawAttestationObject
    }
}

/// A platform passkey's assertion.
open class ASAuthorizationPlatformPublicKeyCredentialAssertion: NSObject, ASPublicKeyCredential {
    open var credentialID: Data
    open var rawClientDataJSON: Data
    open var rawAuthenticatorData: Data!
    open var signature: Data!
    open var userID: Data!
    init(credentialID: Data, rawClientDataJSON: Data, rawAuthenticatorData: Data, signature: Data, userID: Data) {
        self.credentialID = credentialID
        self.rawClientDataJSON = rawClientDataJSON
        self.rawAuthenticatorData = rawAuthenticatorData
        self.signature = signature
        self.userID = userID
    }
}

/// A completed authorization.
open class ASAuthorization: NSObject {
    open var credential: any ASAuthorizationCredential
    init(credential: any ASAuthorizationCredential) { self.credential = credential }
}

// The two protocols' isolation differs between SDKs: the iOS 26 SDK (Xcode 26) declares them `@MainActor`, the iOS 18
// SDK of Xcode 16 leaves them nonisolated. scripts/apple-check.sh builds both variants (BIOAUTH_APPLE_SDK=xcode16 sets
// the condition below), so that the adapters are proven against each.
#if BIOAUTH_SDK_XCODE16
/// Told how an authorization ended (both methods are optional in the SDK).
public protocol ASAuthorizationControllerDelegate: NSObjectProtocol {
    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization)
    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error)
}
#else
/// Told how an authorization ended (both methods are optional in the SDK).
@MainActor
public protocol ASAuthorizationControllerDelegate: NSObjectProtocol {
    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization)
    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error)
}
#endif

extension ASAuthorizationControllerDelegate {
    public func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {}
    public func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {}
}

#if BIOAUTH_SDK_XCODE16
/// Gives the window the sheet is presented over.
public protocol ASAuthorizationControllerPresentationContextProviding: NSObjectProtocol {
    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor
}
#else
/// Gives the window the sheet is presented over.
@MainActor
public protocol ASAuthorizationControllerPresentationContextProviding: NSObjectProtocol {
    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor
}
#endif

/// Runs authorization requests: shows the system sheet and tells its delegate how it ended.
open class ASAuthorizationController: NSObject {
    open var authorizationRequests: [ASAuthorizationRequest]
    open weak var delegate: (any ASAuthorizationControllerDelegate)?
    open weak var presentationContextProvider: (any ASAuthorizationControllerPresentationContextProviding)?

    public init(authorizationRequests: [ASAuthorizationRequest]) {
        self.authorizationRequests = authorizationRequests
    }

    /// Shows the sheet. The delegate hears the outcome later, on the main actor (as iOS calls it on the main thread).
    @MainActor
    open func performRequests() {
        let outcome = answer()
        Task { @MainActor in
            guard let delegate else { return }
            switch outcome {
            case .success(let credential):
                delegate.authorizationController(controller: self, didCompleteWithAuthorization: ASAuthorization(credential: credential))
            case .failure(let error): delegate.authorizationController(controller: self, didCompleteWithError: error)
            }
        }
    }

    @MainActor
    private func answer() -> Result<any ASAuthorizationCredential, NSError> {
        guard presentationContextProvider != nil, authorizationRequests.count == 1 else {
            return .failure(NSError(domain: ASAuthorizationErrorDomain, code: ASAuthorizationError.Code.notHandled.rawValue))
        }
        let device = SimulatedDevice.current
        guard device.appActive else {
            return .failure(NSError(domain: ASAuthorizationErrorDomain, code: ASAuthorizationError.Code.notInteractive.rawValue))
        }
        func clientData(_ type: String, _ challenge: Data, _ rp: String) -> Data {
            let encoded = challenge.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            return Data(#"{"type":"\#(type)","challenge":"\#(encoded)","origin":"https://\#(rp)"}"#.utf8)
        }
        switch authorizationRequests[0] {
        case let request as ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest:
            let (answer, passkey) = device.passkeySheet(
                .init(
                    kind: "registration",
                    relyingPartyID: request.relyingPartyIdentifier,
                    challenge: request.challenge,
                    userVerification: request.userVerificationPreference.rawValue,
                    credentialIDs: request.excluded.map(\.credentialID)
                ),
                userID: request.userID
            )
            guard answer == .approve, let passkey else { return .failure(Self.error(answer)) }
            return .success(
                ASAuthorizationPlatformPublicKeyCredentialRegistration(
                    credentialID: passkey.credentialID,
                    rawClientDataJSON: clientData("webauthn.create", request.challenge, request.relyingPartyIdentifier),
                    rawAttestationObject: Data("attestation-object".utf8) + passkey.credentialID
                )
            )
        case let request as ASAuthorizationPlatformPublicKeyCredentialAssertionRequest:
            let (answer, passkey) = device.passkeySheet(
                .init(
                    kind: "assertion",
                    relyingPartyID: request.relyingPartyIdentifier,
                    challenge: request.challenge,
                    userVerification: request.userVerificationPreference.rawValue,
                    credentialIDs: request.allowedCredentials.map(\.credentialID)
                ),
                userID: nil
            )
            guard answer == .approve, let passkey else { return .failure(Self.error(answer)) }
            return .success(
                ASAuthorizationPlatformPublicKeyCredentialAssertion(
                    credentialID: passkey.credentialID,
                    rawClientDataJSON: clientData("webauthn.get", request.challenge, request.relyingPartyIdentifier),
                    rawAuthenticatorData: Data("authenticator-data".utf8),
                    signature: Data("signature".utf8) + request.challenge,
                    userID: passkey.userID
                )
            )
        default:
            return .failure(NSError(domain: ASAuthorizationErrorDomain, code: ASAuthorizationError.Code.notHandled.rawValue))
        }
    }

    private static func error(_ answer: SimulatedDevice.PasskeyAnswer) -> NSError {
        if case .fail(let code) = answer { return NSError(domain: ASAuthorizationErrorDomain, code: code) }
        return NSError(domain: ASAuthorizationErrorDomain, code: ASAuthorizationError.Code.unknown.rawValue)
    }
}
