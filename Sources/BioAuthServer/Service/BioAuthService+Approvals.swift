import BioAuthCore
import Foundation
import SQLKit

/// A request for the customer to approve, on their phone, a sign-in or an operation that started on another channel.
struct ApprovalInfo: Sendable, Equatable {
    enum Status: String, Sendable, CaseIterable {
        case pending, approved, denied, expired
    }

    /// How the asking client learns the outcome: it polls the token endpoint (CIBA poll mode), or is called at its
    /// notification endpoint and then collects it (ping mode).
    enum DeliveryMode: String, Sendable {
        case poll, ping
    }

    var id: String
    var accountID: String
    var kind: CanonicalApproval.Kind
    /// The service client that asked.
    var clientID: String?
    /// The name the phone shows for who asks.
    var requester: String
    /// What an operation is, shown verbatim; nil for a sign-in.
    var bindingMessage: String?
    var channel: CanonicalApproval.Channel
    /// The number the channel shows (sign-ins): never shown to the phone, which offers ``numberChoices``.
    var matchNumber: Int?
    /// The numbers the phone offers (sign-ins): the match among two others, in random order.
    var numberChoices: [Int]
    var challenge: Data
    var status: Status
    var createdAt: Date
    var expiresAt: Date
    var answeredAt: Date?
    var deviceID: String?
    /// Why it was denied: `denied` (the customer said no) or `number_mismatch` (the customer picked another number).
    var denyReason: String?
    var signedApproval: SignedApproval?
    var deliveryMode: DeliveryMode
    /// Seconds the client waits between polls (grows by 5 with each `slow_down`).
    var pollInterval: Int
    /// Whether its outcome was collected (a sign-in's tokens, a binding's device).
    var redeemed = false
    /// For a binding (`bind_device`): the new key, and the session on the new device that asked.
    var binding: Binding?

    /// What a `bind_device` request would bind, and for whom.
    struct Binding: Sendable, Equatable {
        /// The session on the new device: the only one that may bind with the approval.
        var sessionID: String
        /// The new key's id: the only key the approval binds.
        var keyID: Data
    }

    /// The canonical approval of the server's own record, with the number its channel shows: what the phone must have
    /// signed.
    func canonical() throws -> CanonicalApproval {
        do {
            return try CanonicalApproval(
                approvalID: id,
                kind: kind,
                requester: requester,
                bindingMessage: bindingMessage ?? "",
                channel: channel,
                picked: matchNumber,
                createdAtMs: createdAt.millisecondsSince1970
            )
        } catch {
            throw APIError.internalError
        }
    }

    /// The status a reader sees: a pending request past its time is expired.
    func effective(at now: Date) -> ApprovalInfo {
        var copy = self
        if status == .pending && expiresAt <= now { copy.status = .expired }
        return copy
    }
}

/// A validated CIBA backchannel authentication request (`POST /bc-authorize`).
struct ApprovalRequest: Sendable {
    /// The customer: a username or an account id.
    var loginHint: String
    /// What an operation is; nil asks for a sign-in.
    var bindingMessage: String?
    /// Seconds the request lives; the configured default when nil.
    var requestedExpiry: Int?
    /// Ping mode's `client_notification_token`; nil for poll mode.
    var notificationToken: String?

    /// The longest binding message, in characters.
    static let maxBindingMessage = 100

    init(
        scope: String?,
        loginHint: String?,
        idTokenHint: String?,
        loginHintToken: String?,
        bindingMessage: String?,
        requestedExpiry: String?,
        notificationToken: String?
    ) throws {
        let scopes = Set((scope ?? "").split(separator: " ").map(String.init))
        guard scopes.contains("openid") else {
            throw APIError(.invalidScope, "scope must contain openid (OpenID CIBA §7.1).")
        }
        guard idTokenHint == nil, loginHintToken == nil else {
            throw APIError(
                .malformedRequest,
                "Identify the customer with login_hint (a username or an account id); id_token_hint and login_hint_token are not taken."
            )
        }
        guard let loginHint, (1...128).contains(loginHint.utf8.count) else {
            throw APIError(.malformedRequest, "login_hint (a username or an account id) is required.")
        }
        self.loginHint = loginHint
        if let bindingMessage {
            switch DisplayName.checkedMessage(bindingMessage, maxCharacters: Self.maxBindingMessage) {
            case .success(let message): self.bindingMessage = message
            case .failure(let refusal):
                throw APIError(.invalidBindingMessage, "binding_message \(refusal.description) (at most \(Self.maxBindingMessage) characters).")
            }
        }
        if let requestedExpiry {
            guard let seconds = Int(requestedExpiry), seconds > 0 else {
                throw APIError(.malformedRequest, "requested_expiry is a positive number of seconds.")
            }
            self.requestedExpiry = seconds
        }
        if let notificationToken {
            // A bearer token the client chose; CIBA asks for at least 128 bits of entropy, which no server can check.
            guard (1...1024).contains(notificationToken.utf8.count), notificationToken.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw APIError(.malformedRequest, "client_notification_token is 1-1024 visible ASCII characters.")
            }
            self.notificationToken = notificationToken
        }
    }
}

/// What `POST /bc-authorize` answers.
struct IssuedApprovalRequest: Sendable {
    /// The bearer handle the client polls with (256 random bits; only its hash is stored).
    var authRequestID: String
    var expiresIn: Int
    var interval: Int
    /// The number the client's channel must show for a sign-in.
    var matchNumber: Int?
}

/// What the token endpoint hands over for an approved request: the signed approval, and for a sign-in the tokens of the
/// customer's new session on the client's channel.
struct RedeemedApproval: Sendable {
    var approval: SignedApproval
    var tokens: IssuedTokens?
}

extension BioAuthService {
    /// `POST /bc-authorize`: the client (authenticated as at the token endpoint, holding `approvals:write`) asks the
    /// customer of `request.loginHint` to approve a sign-in (number matching) or the operation in its binding message.
    func requestApproval(client: AuthenticatedClient, _ request: ApprovalRequest) async throws -> IssuedApprovalRequest {
        let policy = configuration.approvals
        let authRequestID = newSecret()
        let signInNumber = randomNumber(in: 10...99)
        let signInChoices = numberChoices(around: signInNumber)
        return try await commit { db in
            let lifetime = request.requestedExpiry ?? Int(policy.lifetime)
            guard lifetime <= Int(policy.maxLifetime) else {
                throw APIError(.malformedRequest, "requested_expiry is at most \(Int(policy.maxLifetime)) seconds.")
            }
            // CIBA's delivery mode is the client's: one with a notification endpoint is pinged, and must send the token
            // its endpoint expects; one without polls.
            switch (client.notificationEndpoint, request.notificationToken) {
            case (.some, .none):
                throw APIError(.malformedRequest, "This client is registered for ping mode: send client_notification_token.")
            case (.none, .some):
                throw APIError(.malformedRequest, "This client has no notification endpoint: leave out client_notification_token and poll.")
            default: break
            }
            let kind = kindOfRequest(request)
            let match = kind == .signIn ? signInNumber : nil
            try await rateLimit(
                "approvals-client:" + client.id,
                name: .approvalClient,
                limit: policy.requestsPerClient,
                window: policy.window,
                on: db
            )
            // Usernames are stored lowercased; account ids are case-sensitive.
            var found = try await db.accounts.find(idOrUsername: request.loginHint)
            if found == nil { found = try await db.accounts.find(idOrUsername: request.loginHint.lowercased()) }
            guard let account = found else { throw Refusal(APIError(.unknownUserID, "No customer has this username or account id.")) }
            try await countApprovalRequest(account: account.id, on: db)
            let approval = ApprovalInfo(
                id: newID(),
                accountID: account.id,
                kind: kind,
                clientID: client.id,
                requester: client.displayName ?? client.name,
                bindingMessage: request.bindingMessage,
                channel: .unknown,
                matchNumber: match,
                numberChoices: match == nil ? [] : signInChoices,
                challenge: random.bytes(32),
                status: .pending,
                createdAt: now,
                expiresAt: now.addingTimeInterval(TimeInterval(lifetime)),
                deliveryMode: request.notificationToken == nil ? .poll : .ping,
                pollInterval: policy.pollInterval
            )
            try await db.approvals.insert(approval, authRequestHash: Self.tokenHash(authRequestID))
            if let token = request.notificationToken {
                let sealed = try webhookSecrets.seal(try CIBAPingSecrets(authRequestID: authRequestID, token: token).encoded(), for: approval.id)
                // Tried until well after the request's own end: the client may also poll for the outcome.
                let giveUp = approval.expiresAt.addingTimeInterval(Self.pingRetryWindow).millisecondsSince1970
                try await db.cibaPings.insert(approval: approval.id, client: client.id, sealed: sealed, giveUpAt: giveUp)
            }
            try await recorder.audit(.approvalRequested, succeeded: true, account: account.id, client: client.id, on: db)
            try await recorder.emit(.approvalRequested, .init(approval: approval), on: db)
            return IssuedApprovalRequest(authRequestID: authRequestID, expiresIn: lifetime, interval: policy.pollInterval, matchNumber: match)
        }
    }

    /// The customer's requests, newest first; only those in `status` (as the phone sees it) when given.
    func approvals(session: AuthenticatedSession, status: ApprovalInfo.Status?, limit: Int) async throws -> [ApprovalInfo] {
        let at = now
        return try await database.transaction { db in
            try await db.approvals.list(account: session.accountID, status: status, now: at.millisecondsSince1970, limit: limit)
                .map { $0.effective(at: at) }
        }
    }

    /// One of the customer's requests, with its effective status.
    func approval(_ id: String, session: AuthenticatedSession) async throws -> ApprovalInfo {
        let at = now
        return try await database.transaction { db in
            guard Validation.isIssuedID(id), let approval = try await db.approvals.find(id, account: session.accountID) else {
                throw Self.approvalNotFound
            }
            return approval.effective(at: at)
        }
    }

    /// Approves the request with the device key: the number the user picked must be the channel's (for a sign-in; a wrong
    /// one denies the request), the approval hash the phone signed must be the server's own, the signature must verify
    /// over the `approval` payload with the request's challenge, and the counter must increase. Exactly once.
    func approve(
        _ id: String,
        keyID: String,
        counter: Int64,
        number: Int?,
        approvalHash rawHash: String,
        signature: String,
        appAttestAssertion: String? = nil,
        session: AuthenticatedSession
    ) async throws -> ApprovalInfo {
        let proof = try DeviceProof(keyID: keyID, counter: counter, signature: signature, appAttestAssertion: appAttestAssertion)
        let signedHash = try Validation.bytes(rawHash, field: "approvalHash", length: 32)
        return try await commit { db in
            let approval = try await pendingApproval(id, account: session.accountID, on: db)
            let ceremony = ProofCeremony(
                purpose: .approval,
                account: session.accountID,
                challenge: .held(approval.challenge),
                binds: .init(
                    expected: try approval.canonical().hash,
                    signed: signedHash,
                    mismatch: APIError(.approvalMismatch, "The device signed another request, message, channel or number than this one.")
                ),
                refusals: ProofRefusals(kind: .approvalApproved, session: session.sessionID, client: approval.clientID)
            )
            let device = try await usableDevice(keyID: proof.keyID, account: session.accountID, refusals: ceremony.refusals, on: db)
            if approval.binding?.sessionID == session.sessionID {
                throw Refusal(APIError(.bindingApprovalInvalid, "A new device cannot approve its own binding: approve it on a device bound before."))
            }
            if approval.kind.matchesNumber, device.isCoolingOff(at: now) {
                // A device bound by a password alone cannot yet vouch for another channel or another device.
                throw Refusal(
                    try await record(
                        refuseCoolingOff(device, "it cannot approve sign-ins elsewhere or new devices"),
                        device: device.id,
                        account: session.accountID,
                        ceremony.refusals,
                        on: db
                    )
                )
            }
            if approval.kind.matchesNumber {
                guard let number else {
                    throw Refusal(APIError(.malformedRequest, "number (the one the user picked) is required to approve a sign-in or a new device."))
                }
                guard number == approval.matchNumber else {
                    // Not a retry: a guess among three must not get a second try. The request is denied.
                    _ = try await deny(approval, reason: "number_mismatch", device: device.id, session: session, on: db)
                    throw Refusal(
                        APIError(
                            .approvalNumberMismatch,
                            "The number picked is not the one the sign-in or the new device shows; the request is denied. Start again if it was yours."
                        )
                    )
                }
            } else if number != nil {
                throw Refusal(APIError(.malformedRequest, "number is only for sign-ins and new devices."))
            }
            _ = try await verifyProof(proof, ceremony, by: device, on: db)
            let signed = try receipts.sign(
                SignedApproval(
                    try approval.canonical(),
                    accountId: approval.accountID,
                    deviceKeyID: proof.keyID,
                    amr: Self.methods(of: device.biometryKind),
                    approvedAtMs: now.millisecondsSince1970
                )
            )
            guard try await db.approvals.markApproved(approval.id, at: signed.approvedAtMs, device: device.id, signed: signed) else {
                // Answered (or expired) since it was read: say which.
                _ = try await pendingApproval(approval.id, account: approval.accountID, on: db)
                throw Refusal(Self.approvalAnswered)
            }
            try await recorder.audit(
                .approvalApproved,
                succeeded: true,
                account: approval.accountID,
                device: device.id,
                session: session.sessionID,
                client: approval.clientID,
                on: db
            )
            var approved = approval
            approved.status = .approved
            approved.answeredAt = Date(millisecondsSince1970: signed.approvedAtMs)
            approved.deviceID = device.id
            approved.signedApproval = signed
            try await recorder.emit(.approvalApproved, .init(approval: approved), on: db)
            try await recorder.settled(approved, on: db)
            return approved
        }
    }

    /// Denies the request: the customer says they did not ask for it.
    func deny(_ id: String, session: AuthenticatedSession) async throws -> ApprovalInfo {
        try await commit { db in
            let approval = try await pendingApproval(id, account: session.accountID, on: db)
            return try await deny(approval, reason: "denied", device: session.deviceID, session: session, on: db)
        }
    }

    /// The token endpoint's CIBA grant (`urn:openid:params:grant-type:ciba`): the outcome of the client's request
    /// `authRequestID`, once. Pending answers `authorization_pending` (or `slow_down` to a client that polls sooner than
    /// its interval), expired `expired_token`; an approval's outcome and a denial's `access_denied` are handed over
    /// once, and a later collection is `invalid_grant`.
    func redeemApproval(client: AuthenticatedClient, authRequestID: String?) async throws -> RedeemedApproval {
        guard client.scopes.contains("approvals:write") else {
            throw APIError(.unauthorizedClient, "The client does not hold approvals:write.")
        }
        return try await commit { db in
            guard let authRequestID, (1...256).contains(authRequestID.utf8.count) else {
                throw Refusal(APIError(.malformedRequest, "auth_req_id is required with the CIBA grant."))
            }
            guard let found = try await db.approvals.find(authRequestHash: Self.tokenHash(authRequestID)), found.clientID == client.id else {
                throw Refusal(APIError(.invalidGrant, "auth_req_id is not one of this client's requests."))
            }
            guard try await db.approvals.recordPoll(found.id, now: now.millisecondsSince1970) else {
                throw Refusal(APIError(.slowDown, "Poll no more often than the interval; it grows by 5 seconds each time it is not kept."))
            }
            var approval = found
            if approval.status == .pending, approval.expiresAt <= now {
                try await recorder.expire(approval, on: db)
                approval.status = .expired
            }
            switch approval.status {
            case .pending: throw Refusal(APIError(.authorizationPending, "The customer has not answered yet."))
            case .denied:
                // Handed over once, as an approval is: the first collection learns it, later ones that it was collected.
                guard try await db.approvals.markRedeemed(approval.id, at: now.millisecondsSince1970) else { throw Refusal(Self.collectedAlready) }
                throw Refusal(APIError(.accessDenied, "The customer denied the request."))
            case .expired: throw Refusal(APIError(.expiredToken, "The request expired before the customer answered it."))
            case .approved: break
            }
            guard let signed = approval.signedApproval else { throw APIError.internalError }
            guard let handedOver = try await handOver(approval, installationID: Self.cibaInstallationID(client: client.id), client: client.id, on: db)
            else {
                throw Refusal(Self.collectedAlready)
            }
            return RedeemedApproval(approval: signed, tokens: handedOver.tokens)
        }
    }

    // MARK: Internals

    /// Counts a new request for `account` against the limits that keep a flood of them from wearing the customer down
    /// (push bombing): ``ApprovalPolicy/requestsPerCustomer`` per window, refused ones counted, and no more than
    /// ``ApprovalPolicy/maxPendingPerCustomer`` waiting at once (`approval_limit`).
    func countApprovalRequest(account: String, on db: any SQLDatabase) async throws {
        let policy = configuration.approvals
        try await rateLimit("approvals-account:" + account, name: .approvalAccount, limit: policy.requestsPerCustomer, window: policy.window, on: db)
        guard try await db.approvals.pendingCount(account: account, now: now.millisecondsSince1970) < policy.maxPendingPerCustomer else {
            throw Refusal(
                APIError(
                    .approvalLimit,
                    "The customer already has \(policy.maxPendingPerCustomer) requests waiting for an answer. Try again when one is answered or expired.",
                    retryAfter: Int(policy.lifetime)
                )
            )
        }
    }

    /// How long after a ping-mode request's end its ping is still tried (10 minutes).
    static let pingRetryWindow: TimeInterval = 600

    /// The installation a service client's CIBA sign-in lives on: one per client, so that its next sign-in of the same
    /// customer replaces the last.
    static func cibaInstallationID(client: String) -> String { cibaInstallationPrefix + client }

    /// The client whose CIBA sign-in lives on `installationID`, if it is such an installation.
    static func cibaClient(ofInstallation installationID: String) -> String? {
        installationID.hasPrefix(cibaInstallationPrefix) ? String(installationID.dropFirst(cibaInstallationPrefix.count)) : nil
    }

    private static let cibaInstallationPrefix = "approval:"

    /// A second collection of an outcome.
    static let collectedAlready = APIError(.invalidGrant, "The outcome of this auth_req_id was collected already.")

    static let approvalNotFound = APIError(.approvalNotFound, "There is no such approval request for this customer.")
    static let approvalAnswered = APIError(.approvalAlreadyAnswered, "The request was answered already.")

    /// What an approved request's asker collects, once.
    struct HandOver: Sendable {
        /// For a sign-in: the customer's new session on the asker's channel.
        var tokens: IssuedTokens?
    }

    /// Hands `approval`'s outcome over, once: nil when it was collected already (and then nothing is started). For a
    /// sign-in, the customer's session on `installationID` starts only after the request is marked collected, so a second
    /// collection never replaces the session the first one handed over.
    func handOver(_ approval: ApprovalInfo, installationID: String, client: String?, on db: any SQLDatabase) async throws -> HandOver? {
        guard approval.status == .approved, let device = approval.deviceID else { throw APIError.internalError }
        guard try await db.approvals.markRedeemed(approval.id, at: now.millisecondsSince1970) else { return nil }
        guard approval.kind == .signIn else { return HandOver(tokens: nil) }
        let tokens = try await startSession(account: approval.accountID, installationID: installationID, method: .approval, device: device, on: db)
        try await db.approvals.recordSession(approval.id, session: tokens.sessionID)
        try await recorder.audit(
            .approvalSignIn,
            succeeded: true,
            account: approval.accountID,
            device: device,
            session: tokens.sessionID,
            client: client,
            on: db
        )
        return HandOver(tokens: tokens)
    }

    /// Whether the request asks for a sign-in (no binding message) or an operation.
    private func kindOfRequest(_ request: ApprovalRequest) -> CanonicalApproval.Kind {
        request.bindingMessage == nil ? .signIn : .operation
    }

    /// The request if it can still be answered; an expired one is marked so (and that is committed).
    func pendingApproval(_ id: String, account: String, on db: any SQLDatabase) async throws -> ApprovalInfo {
        guard Validation.isIssuedID(id), let approval = try await db.approvals.find(id, account: account) else {
            throw Refusal(Self.approvalNotFound)
        }
        switch approval.status {
        case .pending where approval.expiresAt <= now:
            try await recorder.expire(approval, on: db)
            throw Refusal(Self.approvalExpired)
        case .pending: return approval
        case .approved, .denied: throw Refusal(Self.approvalAnswered)
        case .expired: throw Refusal(Self.approvalExpired)
        }
    }

    static let approvalExpired = APIError(.approvalExpired, "The request expired before it was answered.")

    /// Moves the request to denied, audited and sent to the bank's webhooks.
    private func deny(
        _ approval: ApprovalInfo,
        reason: String,
        device: String?,
        session: AuthenticatedSession,
        on db: any SQLDatabase
    ) async throws
        -> ApprovalInfo
    {
        guard try await db.approvals.markDenied(approval.id, at: now.millisecondsSince1970, device: device, reason: reason) else {
            throw Refusal(Self.approvalAnswered)
        }
        try await recorder.audit(
            .approvalDenied,
            succeeded: true,
            account: approval.accountID,
            device: device,
            session: session.sessionID,
            client: approval.clientID,
            code: reason,
            on: db
        )
        var denied = approval
        denied.status = .denied
        denied.answeredAt = now
        denied.deviceID = device
        denied.denyReason = reason
        try await recorder.emit(.approvalDenied, .init(approval: denied), on: db)
        try await recorder.settled(denied, on: db)
        return denied
    }

    /// A uniformly random number in `range`.
    func randomNumber(in range: ClosedRange<Int>) -> Int {
        let span = UInt32(range.count)
        // Rejection sampling: no value is more likely than another.
        let limit = UInt32.max - UInt32.max % span
        while true {
            let value = random.bytes(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if value < limit { return range.lowerBound + Int(value % span) }
        }
    }

    /// Three distinct numbers, `match` among them at a random place.
    func numberChoices(around match: Int) -> [Int] {
        var choices = [match]
        while choices.count < 3 {
            let other = randomNumber(in: 10...99)
            if !choices.contains(other) { choices.append(other) }
        }
        let place = randomNumber(in: 0...2)
        choices.swapAt(0, place)
        return choices
    }
}

/// A service client that authenticated with its id and secret.
struct AuthenticatedClient: Sendable {
    var id: String
    var name: String
    var displayName: String?
    /// Where CIBA's ping mode notifies it; nil for a client that polls.
    var notificationEndpoint: String?
    /// The scopes it holds.
    var scopes: Set<String>
}

/// What a CIBA ping carries back to its client, kept sealed until it is sent.
struct CIBAPingSecrets: Codable, Sendable, Equatable {
    var authRequestID: String
    var token: String

    func encoded() throws -> String { try StoredJSON.encode(self) }
    static func decoded(_ text: String) -> CIBAPingSecrets? { try? StoredJSON.decode(CIBAPingSecrets.self, text) }
}
