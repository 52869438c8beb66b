import BioAuthCore
import Foundation

extension BioAuthAPI {
    /// The customer's approval requests, newest first (at most `limit`, 1-200); only those in `status` when given, e.g.
    /// `"pending"` for the ones waiting for an answer.
    public func approvals(status: String? = nil, limit: Int = 50, accessToken: String) async throws -> [ApprovalDetails] {
        try await authorized(accessToken) {
            let wanted = try status.map { text -> Operations.ListApprovals.Input.Query.StatusPayload in
                guard let value = Operations.ListApprovals.Input.Query.StatusPayload(rawValue: text) else {
                    throw APIProblem(.malformedRequest, detail: "status is pending, approved, denied or expired")
                }
                return value
            }
            switch try await client.listApprovals(.init(query: .init(limit: limit, status: wanted))) {
            case .ok(let ok): return try ok.body.json.approvals.map(Self.approval)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// One approval request's current state.
    public func approval(_ approvalID: String, accessToken: String) async throws -> ApprovalDetails {
        try await authorized(accessToken) {
            switch try await client.getApproval(.init(path: .init(approvalId: approvalID))) {
            case .ok(let ok): return try Self.approval(try ok.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Approves with the device key: `signature` is over the `approval` payload carrying `approvalHash`, and `number` is the
    /// one the user picked (sign-ins only).
    public func approve(
        _ approvalID: String,
        keyID: Data,
        counter: UInt64,
        number: Int?,
        approvalHash: Data,
        signature: Data,
        appAttestAssertion: Data? = nil,
        accessToken: String
    ) async throws -> ApprovalDetails {
        try await authorized(accessToken) {
            let body = Components.Schemas.ApproveRequest(
                keyId: Base64URL.encode(keyID),
                counter: Int64(counter),
                number: number,
                approvalHash: Base64URL.encode(approvalHash),
                signature: Base64URL.encode(signature),
                appAttestAssertion: appAttestAssertion.map(Base64URL.encode)
            )
            switch try await client.approveApproval(.init(path: .init(approvalId: approvalID), body: .json(body))) {
            case .ok(let ok): return try Self.approval(try ok.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Denies the request: the customer did not start it.
    public func deny(_ approvalID: String, accessToken: String) async throws -> ApprovalDetails {
        try await authorized(accessToken) {
            switch try await client.denyApproval(.init(path: .init(approvalId: approvalID))) {
            case .ok(let ok): return try Self.approval(try ok.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    static func approval(_ approval: Components.Schemas.Approval) throws -> ApprovalDetails {
        guard let kind = CanonicalApproval.Kind(rawValue: approval.kind.rawValue), let challenge = Base64URL.decode(approval.challenge),
            challenge.count == 32
        else { throw APIProblem(.unexpectedResponse, detail: "the approval request's kind or challenge is malformed") }
        return ApprovalDetails(
            id: approval.approvalId,
            kind: kind,
            requester: approval.requester,
            bindingMessage: approval.bindingMessage,
            channel: .init(
                browser: approval.channel?.browser ?? "",
                platform: approval.channel?.platform ?? "",
                address: approval.channel?.address ?? ""
            ),
            numberChoices: approval.numberChoices ?? [],
            challenge: challenge,
            relyingPartyID: approval.relyingPartyId,
            status: approval.status.rawValue,
            createdAt: approval.createdAt,
            createdAtMs: approval.createdAtMs,
            expiresAt: approval.expiresAt,
            denyReason: approval.denyReason?.rawValue,
            signedApproval: approval.signedApproval.map { signed in
                SignedApproval(
                    version: signed.version,
                    approvalId: signed.approvalId,
                    accountId: signed.accountId,
                    kind: signed.kind.rawValue,
                    requester: signed.requester,
                    bindingMessage: signed.bindingMessage,
                    channelBrowser: signed.channelBrowser,
                    channelPlatform: signed.channelPlatform,
                    channelAddress: signed.channelAddress,
                    number: signed.number,
                    createdAtMs: signed.createdAtMs,
                    deviceKeyId: signed.deviceKeyId,
                    amr: signed.amr,
                    approvedAtMs: signed.approvedAtMs,
                    keyId: signed.keyId,
                    signature: signed.signature
                )
            }
        )
    }
}

extension BioAuthAPI {
    /// A web page's sign-in QR code, scanned: `url` is what the code held. It becomes this customer's sign-in request,
    /// with where the page was opened; approve it like any other (``approve(_:keyID:counter:number:approvalHash:signature:appAttestAssertion:accessToken:)``).
    public func scanQRSignIn(_ url: String, accessToken: String) async throws -> ApprovalDetails {
        try await authorized(accessToken) {
            switch try await client.scanQRSignIn(.init(body: .json(.init(url: url)))) {
            case .created(let created): return try Self.approval(try created.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }
}
