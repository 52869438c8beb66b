import BioAuthCore
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// A failure the API reports to the client: a stable code, an HTTP status and a human detail without
/// internals. Every code's status is decided here, in one place.
struct APIError: Error, HTTPResponseConvertible, CustomStringConvertible {
    let code: ProblemCode
    let detail: String
    /// Seconds until the request may succeed (a rate limit's window, a lock), sent as `Retry-After` (RFC 9110 §10.2.3).
    let retryAfter: Int?
    /// For `step_up_required`: what the operation needs, sent as RFC 9470's `WWW-Authenticate` parameters and in the
    /// problem document.
    let stepUp: StepUpDemand?

    init(_ code: ProblemCode, _ detail: String, retryAfter: Int? = nil) {
        self.code = code
        self.detail = detail
        self.retryAfter = retryAfter.map { max(1, $0) }
        self.stepUp = nil
    }

    /// `step_up_required`: the session lacks the level `demand` names, or its evidence is too old (401).
    init(stepUp demand: StepUpDemand) {
        self.code = .stepUpRequired
        self.detail = demand.detail
        self.retryAfter = nil
        self.stepUp = demand
    }

    var status: HTTPResponse.Status { Self.status(of: code) }

    /// What a unit of work the database could not run in time answers, on either engine: `not_ready`, retry after a
    /// second. The request changed nothing.
    static let databaseTooBusy = APIError(.notReady, "The service is too busy to complete this request. Try again.", retryAfter: 1)

    /// What a unit of work answers when its connection to the database closed under it and it could not finish
    /// (``ClosedConnectionGuard``): `not_ready`, retry after a second.
    static let databaseConnectionLost = APIError(.notReady, "The connection to the database was lost. Try again.", retryAfter: 1)

    /// The status of each code.
    static func status(of code: ProblemCode) -> HTTPResponse.Status {
        // The secure environment check failed: the app or device is not trusted for this call.
        if code.rawValue.hasPrefix("app_attest_") { return .forbidden }
        return switch code {
        // Passkeys: a credential that does not parse is malformed; one that fails a check is not trusted.
        case .passkeyMalformed: .badRequest
        case .passkeysDisabled, .passkeyNotFound: .notFound
        case .passkeyUnknownCredential: .unauthorized
        case .passkeyAlreadyRegistered: .conflict
        case .passkeyTypeMismatch, .passkeyChallengeMismatch, .passkeyOriginMismatch, .passkeyTokenBinding, .passkeyRPIDMismatch,
            .passkeyUserNotPresent, .passkeyUserNotVerified, .passkeyBackupFlags, .passkeyUnsupportedAlgorithm, .passkeyInvalidPublicKey,
            .passkeyAttestationFormat, .passkeyAttestationInvalid, .passkeyAttestationUntrusted, .passkeyInvalidSignature,
            .passkeyUserHandleMismatch, .passkeyCounterReplayed:
            .forbidden
        case .malformedRequest, .invalidEncoding, .invalidUsername, .invalidPassword, .invalidInstallationID,
            .invalidPublicKey, .keyIDMismatch, .invalidDeviceName, .challengeExpired, .challengeMismatch,
            .invalidAmount, .invalidCurrency, .invalidPayee, .invalidMemo, .invalidIdempotencyKey, .invalidPIN, .weakPIN,
            .unsupportedGrantType, .invalidScope, .invalidWebhookURL, .invalidEventType, .unknownUserID, .invalidBindingMessage,
            .unauthorizedClient, .invalidGrant, .authorizationPending, .slowDown, .accessDenied, .expiredToken:
            // OpenID CIBA and RFC 6749 §5.2 answer these with 400.
            .badRequest
        case .unauthenticated, .tokenExpired, .sessionEnded, .invalidRefreshToken, .refreshTokenReused,
            .invalidCredentials, .invalidSignature, .signaturePurposeMismatch, .counterNotIncreasing,
            .transactionMismatch, .wrongPIN, .invalidClient, .invalidServiceToken, .approvalMismatch, .stepUpRequired:
            .unauthorized
        case .deviceRevoked, .pinPaymentsDisabled, .insufficientScope, .approvalNumberMismatch, .qrBrowserMismatch, .deviceBindingRequired,
            .bindingCodeInvalid, .resetCodeInvalid, .bindingApprovalInvalid, .deviceCoolingOff:
            .forbidden
        case .notFound, .challengeNotFound, .deviceNotFound, .paymentNotFound, .accountNotFound, .webhookEndpointNotFound,
            .approvalNotFound, .qrCodeNotFound, .qrSignInDisabled:
            .notFound
        case .usernameTaken, .payeeNameTaken, .keyAlreadyRegistered, .challengeUsed, .paymentAlreadyAuthorized, .paymentCancelled, .pinNotSet,
            .approvalAlreadyAnswered, .qrCodeUsed, .noBoundDevice:
            .conflict
        case .paymentExpired, .approvalExpired: .gone
        case .idempotencyKeyReused, .payeeNotRegistered, .payeeNameMismatch, .webhookEndpointLimit, .webhookDestinationNotAllowed:
            .unprocessableContent
        case .accountLocked, .paymentLocked, .pinLocked: HTTPResponse.Status(code: 423, reasonPhrase: "Locked")
        case .bodyTooLarge: .contentTooLarge
        case .notAcceptable: .notAcceptable
        case .methodNotAllowed: .methodNotAllowed
        case .rateLimited, .approvalLimit: .tooManyRequests
        case .notReady: .serviceUnavailable
        default: .internalServerError
        }
    }

    /// The problem document.
    var problem: Components.Schemas.Problem {
        Components.Schemas.Problem(
            _type: "urn:bioauth:problem:\(code.rawValue)",
            title: status.reasonPhrase,
            status: status.code,
            code: code.rawValue,
            detail: detail,
            acrValues: stepUp?.level.acr,
            maxAge: stepUp.map { Int($0.maxAge) },
            action: stepUp?.action?.rawValue
        )
    }

    /// The OAuth error code (RFC 6749 §5.2, OpenID CIBA §11 and §13) an OAuth client reads from `error`: the code itself
    /// where OAuth has it, `invalid_request` for a request that does not parse, `server_error` and
    /// `temporarily_unavailable` for the server's own failures, and `access_denied` for the limits.
    var oauthError: String {
        switch code {
        case .invalidClient, .unsupportedGrantType, .invalidScope, .unauthorizedClient, .invalidGrant, .authorizationPending, .slowDown,
            .accessDenied, .expiredToken, .unknownUserID, .invalidBindingMessage:
            code.rawValue
        case .internalError: "server_error"
        case .notReady: "temporarily_unavailable"
        case .rateLimited, .approvalLimit: "access_denied"
        default: "invalid_request"
        }
    }

    /// The problem as a response body, for places outside the generated handlers; with OAuth's `error` and
    /// `error_description` beside `code` and `detail` when `oauth` (the token endpoint and CIBA's).
    func jsonBody(oauth: Bool = false) -> Data {
        var problem = self.problem
        if oauth {
            problem.error = oauthError
            problem.errorDescription = detail
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(problem)) ?? Data(#"{"code":"internal_error"}"#.utf8)
    }

    // MARK: HTTPResponseConvertible

    var httpStatus: HTTPResponse.Status { status }
    var httpHeaderFields: HTTPFields {
        var fields = HTTPFields()
        fields[.contentType] = "application/problem+json"
        // The token endpoint takes HTTP Basic client credentials (RFC 6749 §2.3.1); everything else a bearer token.
        if status == .unauthorized {
            fields[.wwwAuthenticate] = code == .invalidClient ? #"Basic realm="bioauth""# : stepUp?.wwwAuthenticate ?? "Bearer"
        }
        // A token response or refusal must not be cached (RFC 6749 §5.1); neither should any other problem.
        if code == .invalidClient { fields[.cacheControl] = "no-store" }
        if let retryAfter { fields[.retryAfter] = String(retryAfter) }
        return fields
    }
    var httpBody: HTTPBody? { HTTPBody(jsonBody()) }

    var description: String { "\(code): \(detail)" }

    /// What a sensitive operation needs and the session lacks.
    struct StepUpDemand: Sendable {
        var level: AssuranceLevel
        var maxAge: TimeInterval
        /// The table's action, to bind the step-up to and name in the prompt.
        var action: StepUpAction?

        var detail: String {
            "This needs a fresh confirmation (\(level.acr) within \(Int(maxAge)) seconds): step up with the device key, or sign in again."
        }

        /// RFC 9470 §3's challenge.
        var wwwAuthenticate: String {
            #"Bearer error="insufficient_user_authentication", error_description="A fresh confirmation is required", "#
                + #"acr_values="\#(level.acr)", max_age=\#(Int(maxAge))"#
        }
    }

    // Named after its problem code, internal_error, as every other problem is.
    // swift-format-ignore: DontRepeatTypeInStaticProperties
    static let internalError = APIError(.internalError, "The server failed to handle the request.")
}
