import BioAuthCore
import Foundation
import OpenAPIRuntime

/// Approvals on the phone (OpenID CIBA's requests, scan to sign in) and the bank's backchannel request.
extension APIHandler {
    // MARK: Approvals

    func listApprovals(_ input: Operations.ListApprovals.Input) async throws -> Operations.ListApprovals.Output {
        let limit = input.query.limit ?? 50
        guard (1...200).contains(limit) else { throw APIError(.malformedRequest, "limit must be 1-200.") }
        let status = input.query.status.flatMap { ApprovalInfo.Status(rawValue: $0.rawValue) }
        let approvals = try await service.approvals(session: try session(), status: status, limit: limit)
        return .ok(.init(body: .json(.init(approvals: approvals.map { .init($0, relyingPartyID: relyingPartyID) }))))
    }

    func getApproval(_ input: Operations.GetApproval.Input) async throws -> Operations.GetApproval.Output {
        .ok(
            .init(
                body: .json(
                    Components.Schemas.Approval(
                        try await service.approval(input.path.approvalId, session: try session()),
                        relyingPartyID: relyingPartyID
                    )
                )
            )
        )
    }

    func approveApproval(_ input: Operations.ApproveApproval.Input) async throws -> Operations.ApproveApproval.Output {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        let approval = try await service.approve(
            input.path.approvalId,
            keyID: body.keyId,
            counter: body.counter,
            number: body.number,
            approvalHash: body.approvalHash,
            signature: body.signature,
            appAttestAssertion: body.appAttestAssertion,
            session: try session()
        )
        return .ok(.init(body: .json(.init(approval, relyingPartyID: relyingPartyID))))
    }

    func denyApproval(_ input: Operations.DenyApproval.Input) async throws -> Operations.DenyApproval.Output {
        .ok(
            .init(
                body: .json(
                    Components.Schemas.Approval(try await service.deny(input.path.approvalId, session: try session()), relyingPartyID: relyingPartyID)
                )
            )
        )
    }

    func createQRSignIn(_ input: Operations.CreateQRSignIn.Input) async throws -> Operations.CreateQRSignIn.Output {
        let issued = try await service.createQRSignIn()
        // Only this browser collects the session: the cookie goes back with the page's requests to /v1/qr-sign-ins only.
        let secure = issued.url.hasPrefix("https://") ? "; Secure" : ""
        RequestScope.current.responseCookies?.add(
            "\(BioAuthService.qrCookieName)=\(issued.browserCookie); Path=/v1/qr-sign-ins; HttpOnly; SameSite=Strict; Max-Age=600\(secure)"
        )
        return .created(
            .init(
                headers: .init(cacheControl: .noStore),
                body: .json(
                    .init(qrSignInId: issued.id, url: issued.url, svg: issued.svg, matchNumber: issued.matchNumber, expiresAt: issued.expiresAt)
                )
            )
        )
    }

    func getQRSignInSession(_ input: Operations.GetQRSignInSession.Input) async throws -> Operations.GetQRSignInSession.Output {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        let state = try await service.qrSignInState(
            input.path.qrSignInId,
            browserCookie: RequestScope.current.cookie(BioAuthService.qrCookieName),
            installationID: body.installationId
        )
        return .ok(
            .init(
                headers: .init(cacheControl: .noStore),
                body: .json(
                    .init(status: .init(rawValue: state.status.rawValue) ?? .waiting, tokens: state.tokens.map(Components.Schemas.SessionTokens.init))
                )
            )
        )
    }

    func scanQRSignIn(_ input: Operations.ScanQRSignIn.Input) async throws -> Operations.ScanQRSignIn.Output {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        return .created(
            .init(
                body: .json(
                    Components.Schemas.Approval(try await service.scanQRSignIn(body.url, session: try session()), relyingPartyID: relyingPartyID)
                )
            )
        )
    }

    func backchannelAuthorize(_ input: Operations.BackchannelAuthorize.Input) async throws -> Operations.BackchannelAuthorize.Output {
        guard case .urlEncodedForm(let form) = input.body else { throw Self.unreadableBody }
        // Read once the client is authenticated (CredentialMiddleware): without its credentials, the request is
        // invalid_client whatever it holds.
        guard form.scope.utf8.count <= 512 else { throw APIError(.malformedRequest, "scope is longer than 512 bytes.") }
        let request = try ApprovalRequest(
            scope: form.scope,
            loginHint: form.loginHint,
            idTokenHint: form.idTokenHint,
            loginHintToken: form.loginHintToken,
            bindingMessage: form.bindingMessage,
            requestedExpiry: form.requestedExpiry,
            notificationToken: form.clientNotificationToken
        )
        let issued = try await service.requestApproval(client: try client(), request)
        return .ok(
            .init(
                headers: .init(cacheControl: .noStore),
                body: .json(
                    .init(authReqId: issued.authRequestID, expiresIn: issued.expiresIn, interval: issued.interval, matchNumber: issued.matchNumber)
                )
            )
        )
    }
}
