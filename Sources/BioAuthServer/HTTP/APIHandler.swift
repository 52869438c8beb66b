import BioAuthCore
import Foundation
import OpenAPIRuntime

/// The generated API's operations, translated to and from ``BioAuthService``. No decisions are made here: the credential
/// an operation needs was checked before its body was read (``CredentialMiddleware``, by ``OperationPolicy``), and the
/// handlers only decode, call the service and map its answer to the wire (``WireMappers.swift``).
///
/// The operations are grouped by concern in `APIHandler+Accounts.swift`, `+Devices`, `+Passkeys`, `+Payments`,
/// `+Approvals` and `+Service` (the bank's backend).
struct APIHandler: APIProtocol {
    /// The service every request is handed to, as ``service`` for the request's caller.
    let base: BioAuthService
    let openAPIDocument: Data

    init(service: BioAuthService, openAPIDocument: Data) {
        self.base = service
        self.openAPIDocument = openAPIDocument
    }

    /// The service working for the request being served: what it audits and limits per address is the caller's.
    var service: BioAuthService { base.serving(RequestScope.current.caller) }

    /// The relying party id every signed payload and approval names.
    var relyingPartyID: String { base.configuration.relyingPartyID }

    /// The session ``CredentialMiddleware`` authenticated before the body was read.
    func session() throws -> AuthenticatedSession {
        guard let session = RequestScope.current.session else { throw APIError(.unauthenticated, "Sign in first.") }
        return session
    }

    /// The service client ``CredentialMiddleware`` authenticated, with the operation's scope, before the body was read.
    func serviceClient() throws -> AuthenticatedService {
        guard let client = RequestScope.current.service else { throw APIError(.invalidServiceToken, "This operation needs a service token.") }
        return client
    }

    /// The service client that ``CredentialMiddleware`` authenticated with its id and secret (HTTP Basic).
    func client() throws -> AuthenticatedClient {
        guard let client = RequestScope.current.client else {
            throw APIError(.invalidClient, "Send the service client's id and secret with HTTP Basic authentication.")
        }
        return client
    }

    /// What an operation answers for a body of another media type than the contract's. The generated request bodies have
    /// one case each (JSON, or a form at the OAuth endpoints), and the generated code refuses any other media type before
    /// the handler runs, so the handlers' `guard case` cannot fail; this is what it would say.
    static let unreadableBody = APIError(.malformedRequest, "Send the body in the media type the contract gives for this operation.")

    /// The wire form of an issued challenge, counted by purpose.
    func issued(_ challenge: IssuedChallenge) -> Components.Schemas.Challenge {
        base.metrics.challengeIssued(challenge.purpose.rawValue)
        return .init(challenge, relyingPartyID: relyingPartyID)
    }

    /// Runs `body` and reports how it ended to `record`: `success`, or the problem code it failed with.
    func counted<R>(_ record: (String) -> Void, _ body: () async throws -> R) async throws -> R {
        do {
            let result = try await body()
            record("success")
            return result
        } catch let error as APIError {
            record(error.code.rawValue)
            throw error
        } catch {
            record(ProblemCode.internalError.rawValue)
            throw error
        }
    }
}
