import BioAuthCore
import Crypto
import Foundation
import SQLKit

/// A payment as the service sees it; also what an idempotency key replays.
struct PaymentInfo: Codable, Sendable, Equatable {
    enum Status: String, Codable, Sendable, CaseIterable {
        case pending, authorized, cancelled, expired, locked
    }

    var id: String
    var accountID: String
    var amountMinor: Int64
    var currency: String
    var payeeID: String
    var payeeName: String
    var memo: String?
    var status: Status
    var failedAttempts: Int
    var createdAt: Date
    var expiresAt: Date
    var authorizedAt: Date?
    var authorizationMethod: String?
    var deviceID: String?
    var receipt: PaymentReceipt?
    /// Whether the bank had verified the payee when the payment was made (nil for payments from before this was kept).
    var payeeVerified: Bool? = nil

    /// The canonical transaction the server recomputes from its own record.
    func transaction() throws -> CanonicalTransaction {
        guard let currency = Currency(code: currency) else { throw APIError.internalError }
        do {
            return try CanonicalTransaction(
                paymentID: id,
                amount: Money(minorUnits: amountMinor, currency: currency),
                payeeID: payeeID,
                payeeName: payeeName
            )
        } catch {
            throw APIError.internalError
        }
    }

    /// The status a reader sees: a pending payment past its time is expired.
    func effective(at now: Date) -> PaymentInfo {
        var copy = self
        if status == .pending && expiresAt <= now { copy.status = .expired }
        return copy
    }
}

/// A validated request to create a payment to a registered payee.
struct PaymentRequest: Sendable {
    /// The largest amount, in minor units: 2^53 − 1.
    static let maxAmountMinor: Int64 = 9_007_199_254_740_991

    var amount: Money
    var payeeID: String
    /// The name the requester expects the payee to carry; when sent, it must be the registered name. The payment always
    /// carries the registered name.
    var payeeName: String?
    var memo: String?
    var idempotencyKey: String

    init(amountMinor: Int64, currency rawCurrency: String, payeeID: String, payeeName: String?, memo: String?, idempotencyKey: String) throws {
        guard amountMinor > 0 else { throw APIError(.invalidAmount, "amountMinor must be a positive number of minor units.") }
        // 2^53 - 1: the largest integer every JSON parser reads exactly (a JavaScript backend or log would round more).
        guard amountMinor <= Self.maxAmountMinor else {
            throw APIError(.invalidAmount, "amountMinor must be at most 9007199254740991 (2^53 - 1) minor units.")
        }
        guard let currency = Currency(code: rawCurrency) else {
            throw APIError(.invalidCurrency, "currency must be an active ISO 4217 code such as CNY.")
        }
        try Validation.payeeID(payeeID)
        let payeeName = try payeeName.map { try Validation.displayName($0, field: "payeeName", code: .invalidPayee) }
        if let memo, !memo.isEmpty, !Validation.isDisplayable(memo, maxCharacters: 140) {
            throw APIError(.invalidMemo, "memo is at most 140 characters without control characters.")
        }
        guard (1...128).contains(idempotencyKey.utf8.count), idempotencyKey.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw APIError(.invalidIdempotencyKey, "Idempotency-Key is 1-128 visible ASCII characters.")
        }
        self.amount = Money(minorUnits: amountMinor, currency: currency)
        self.payeeID = payeeID
        self.payeeName = payeeName
        self.memo = memo?.isEmpty == true ? nil : memo
        self.idempotencyKey = idempotencyKey
    }

    /// What "the same body" means for an idempotency key: every field, length-prefixed, hashed.
    var fingerprint: String {
        let fields = [String(amount.minorUnits), amount.currency.code, payeeID, payeeName ?? "\u{0}none", memo ?? "\u{0}none"]
        let joined = fields.map { "\($0.utf8.count):\($0)" }.joined()
        return Base64URL.encode(Data(SHA256.hash(data: Data(joined.utf8))))
    }
}

extension BioAuthService {
    /// Creates a pending payment, or replays the first response for a repeated idempotency key and body.
    func createPayment(session: AuthenticatedSession, _ request: PaymentRequest) async throws -> PaymentInfo {
        try await createPayment(account: session.accountID, session: session.sessionID, client: nil, request)
    }

    /// Creates a pending payment for `account`, asked for by the account's `session` or by the service `client` (whose
    /// idempotency keys live apart from the user's: stored after a space, which a key never holds).
    ///
    /// The payee must be registered (`payee_not_registered`), and the payment carries its registered name: a requester
    /// that sends a name must send that one (`payee_name_mismatch`), so nobody who asks for money chooses the name the
    /// prompt shows.
    func createPayment(account: String, session: String?, client: String?, _ request: PaymentRequest) async throws -> PaymentInfo {
        let idempotencyKey = client.map { " \($0) \(request.idempotencyKey)" } ?? request.idempotencyKey
        // A customer's payment is first tried without looking for its key (one round trip fewer): the key's insert is
        // conditional, and a key found taken (a retry, or another request with it) leaves nothing of that try, and the
        // request runs the way that looks first, which replays or refuses (writingFirst).
        if client == nil,
            let created = try await writingFirst({ db in
                guard let payment = try await newPayment(account: account, session: session, client: client, idempotencyKey, request, on: db)
                else { throw CheckBeforeWriting() }
                return payment
            })
        {
            return created
        }
        // A customer's payment: READ COMMITTED (TransactionIsolation). Two requests with one key may both find it unused;
        // the key's insert is conditional, and the one that finds it taken (once the other committed) is rolled back
        // and run again, and replays the other's response. A service client's key is one across accounts, which no
        // unique key covers: SERIALIZABLE.
        return try await commit(isolation: client == nil ? .readCommitted : .serializable) { db in
            // A user's keys are per account; a service client's per client, so the same key for another account is a reuse.
            let stored: IdempotencyKeysTable.Stored?
            if client != nil, let found = try await db.idempotencyKeys.find(clientKey: idempotencyKey) {
                guard found.accountID == account else { throw Refusal(Self.idempotencyKeyReused) }
                stored = found.stored
            } else {
                stored = client == nil ? try await db.idempotencyKeys.find(account: account, key: idempotencyKey) : nil
            }
            if let stored {
                guard stored.requestHash == request.fingerprint else { throw Refusal(Self.idempotencyKeyReused) }
                return stored.response
            }
            guard let payment = try await newPayment(account: account, session: session, client: client, idempotencyKey, request, on: db)
            else { throw ConcurrentUnitConflict() }
            return payment
        }
    }

    /// Stores a new pending payment asked for with `idempotencyKey`, the key's first use and the audit event; nil, having
    /// written the payment only, when the key is recorded already (the caller's unit of work must then be undone).
    private func newPayment(
        account: String,
        session: String?,
        client: String?,
        _ idempotencyKey: String,
        _ request: PaymentRequest,
        on db: any SQLDatabase
    ) async throws -> PaymentInfo? {
        let payee = try await registeredPayee(request.payeeID, expected: request.payeeName, on: db)
        let payment = PaymentInfo(
            id: newID(),
            accountID: account,
            amountMinor: request.amount.minorUnits,
            currency: request.amount.currency.code,
            payeeID: request.payeeID,
            payeeName: payee.name,
            memo: request.memo,
            status: .pending,
            failedAttempts: 0,
            createdAt: now,
            expiresAt: now.addingTimeInterval(configuration.paymentLifetime),
            payeeVerified: payee.verified
        )
        try await db.payments.insert(payment)
        let recorded = try await db.idempotencyKeys.insert(
            account: account,
            key: idempotencyKey,
            requestHash: request.fingerprint,
            response: payment,
            at: now.millisecondsSince1970
        )
        guard recorded else { return nil }
        try await recorder.audit(.paymentCreated, succeeded: true, account: account, session: session, client: client, payment: payment.id, on: db)
        return payment
    }

    static let idempotencyKeyReused = APIError(.idempotencyKeyReused, "This Idempotency-Key was used with another request body.")

    /// One of the account's payments, with its effective status.
    func payment(_ id: String, session: AuthenticatedSession) async throws -> PaymentInfo {
        try await database.transaction { db in
            guard let payment = try await db.payments.find(id, account: session.accountID) else {
                throw APIError(.paymentNotFound, "There is no such payment on this account.")
            }
            return payment.effective(at: now)
        }
    }

    /// The account's payments, newest first; only those in `status` (as the client sees it: a pending payment past its
    /// expiry is expired) when given.
    func payments(session: AuthenticatedSession, limit: Int, status: PaymentInfo.Status? = nil) async throws -> [PaymentInfo] {
        let at = now
        let now = at.millisecondsSince1970
        return try await database.transaction { db in
            try await db.payments.list(account: session.accountID, status: status, now: now, limit: limit).map { $0.effective(at: at) }
        }
    }

    /// A challenge to authorize `paymentID` with the account's key `keyID`; it lives at most until the
    /// payment expires.
    func createPaymentChallenge(_ paymentID: String, keyID rawKeyID: String, session: AuthenticatedSession) async throws -> IssuedChallenge {
        let keyID = try Validation.bytes(rawKeyID, field: "keyId", length: 32)
        // A payment that can be authorized: reads, then one write that stands alone (the challenge, or the audit of a
        // revoked key), each statement on its own (TransactionIsolation.eachStatement; on PostgreSQL no BEGIN and COMMIT).
        let issued = try await commit(isolation: .eachStatement) { db -> IssuedChallenge? in
            guard let payment = try await payablePayment(paymentID, account: session.accountID, on: db) else { return nil }
            return try await issuePaymentChallenge(payment, keyID: keyID, session: session, on: db)
        }
        if let issued { return issued }
        // Any other: refused, and a payment found past its expiry is marked so with its webhook event, which commit
        // together. READ COMMITTED (TransactionIsolation).
        return try await commit(isolation: .readCommitted) { db in
            try await issuePaymentChallenge(
                try await pendingPayment(paymentID, account: session.accountID, on: db),
                keyID: keyID,
                session: session,
                on: db
            )
        }
    }

    /// A challenge to authorize `payment` (one that can still be authorized) with the account's key `keyID`.
    private func issuePaymentChallenge(
        _ payment: PaymentInfo,
        keyID: Data,
        session: AuthenticatedSession,
        on db: any SQLDatabase
    ) async throws
        -> IssuedChallenge
    {
        let device = try await usableDevice(
            keyID: keyID,
            account: session.accountID,
            refusals: ProofRefusals(kind: .paymentAuthorized, payment: nil),
            on: db
        )
        return try await issueChallenge(
            ChallengeBinding(purpose: .payment, account: session.accountID, session: nil, device: device.id, payment: payment.id),
            lifetime: min(configuration.paymentLifetime, payment.expiresAt.timeIntervalSince(now)),
            keyID: keyID,
            on: db
        )
    }

    /// Authorizes with the device key: the key's proof over a payment challenge, binding the transaction hash of the
    /// server's own record (``verifyProof(_:_:early:on:)``). Every refused proof counts toward the payment's lock.
    func authorizeWithBiometrics(
        _ paymentID: String,
        challengeID: String,
        keyID: String,
        counter: Int64,
        transactionHash rawHash: String,
        signature: String,
        appAttestAssertion: String? = nil,
        session: AuthenticatedSession
    ) async throws -> PaymentInfo {
        let proof = try DeviceProof(keyID: keyID, counter: counter, signature: signature, appAttestAssertion: appAttestAssertion)
        let signedHash = try Validation.bytes(rawHash, field: "transactionHash", length: 32)
        let early = earlyCheck(proof, purpose: .payment, challengeID: challengeID, transactionHash: signedHash)
        /// What the proof must be for `payment`, read in the unit of work.
        @Sendable func ceremony(_ payment: PaymentInfo) throws -> ProofCeremony {
            ProofCeremony(
                purpose: .payment,
                account: session.accountID,
                challenge: .issued(id: challengeID, payment: payment.id),
                binds: .init(expected: try payment.transaction().hash, signed: signedHash, mismatch: Self.transactionMismatch),
                refusals: ProofRefusals(kind: .paymentAuthorized, payment: payment)
            )
        }
        // As most are, in one round trip fewer: the counter advances in the statement that finds the device (the rows taken
        // in this order: the challenge's, the device's, the payment's). A payment that cannot be authorized, or any failed
        // check, is for the way below to refuse, record and count (and, past its expiry, to mark expired).
        if Validation.isIssuedID(challengeID),
            let authorized = try await writingFirst({ db in
                guard let payment = try await payablePayment(paymentID, account: session.accountID, on: db) else { throw CheckBeforeWriting() }
                let proven = try await verifyProofWritingFirst(proof, try ceremony(payment), early: early, on: db)
                // A device in its cooling-off has a limit to check: the way below checks it.
                guard !proven.device.isCoolingOff(at: now) else { throw CheckBeforeWriting() }
                return try await authorize(payment, method: "biometric", device: proven.device.id, session: session, on: db)
            })
        {
            return authorized
        }
        // Every check before its write, and every refusal recorded (a failed one counts toward the payment's lock).
        // READ COMMITTED (TransactionIsolation): the challenge's use, the counter, the failures and the move to authorized
        // are conditional updates or increments whose result is checked; the device's row is locked before the payment's.
        return try await commit(isolation: .readCommitted) { db in
            let payment = try await pendingPayment(paymentID, account: session.accountID, on: db)
            let proven = try await verifyProof(proof, try ceremony(payment), early: early, on: db)
            try await checkCoolingOffLimit(proven.device, paying: payment, session: session, on: db)
            return try await authorize(payment, method: "biometric", device: proven.device.id, session: session, on: db)
        }
    }

    /// Refuses `payment` when `device` is in its cooling-off and the payment would take what it authorized in the last 24
    /// hours in that currency past ``BindingPolicy/coolingOffPaymentLimit`` (audited; the payment stays pending, and the
    /// refusal does not count toward its lock: the customer may pay it once the cooling-off ends, or with another device).
    func checkCoolingOffLimit(_ device: DeviceInfo, paying payment: PaymentInfo, session: AuthenticatedSession, on db: any SQLDatabase) async throws {
        guard device.isCoolingOff(at: now) else { return }
        let spent = try await db.payments.authorizedTotal(
            account: payment.accountID,
            device: device.id,
            currency: payment.currency,
            since: now.addingTimeInterval(-86_400).millisecondsSince1970
        )
        let limit = Int64(bindingPolicy.coolingOffPaymentLimit)
        guard payment.amountMinor > limit - spent else { return }
        let refusal = refuseCoolingOff(device, "it can pay at most \(limit) minor units of \(payment.currency) in 24 hours (\(spent) so far)")
        try await recorder.audit(
            .paymentAuthorized,
            succeeded: false,
            account: payment.accountID,
            device: device.id,
            session: session.sessionID,
            code: refusal.code.rawValue,
            payment: payment.id,
            on: db
        )
        throw Refusal(refusal)
    }

    static let transactionMismatch = APIError(
        .transactionMismatch,
        "The device signed a different amount, currency, payee or payment than this one."
    )

    /// Cancels a pending payment.
    func cancelPayment(_ paymentID: String, session: AuthenticatedSession) async throws -> PaymentInfo {
        try await commit { db in
            try await recorder.cancel(try await pendingPayment(paymentID, account: session.accountID, on: db), session: session.sessionID, on: db)
        }
    }

    // MARK: Internals

    /// The account's payment `id` if it can be authorized now (pending and unexpired), read and nothing else; nil for any
    /// other, for ``pendingPayment(_:account:on:)`` to refuse.
    func payablePayment(_ id: String, account: String, on db: any SQLDatabase) async throws -> PaymentInfo? {
        guard Validation.isIssuedID(id), let payment = try await db.payments.find(id, account: account),
            payment.effective(at: now).status == .pending
        else { return nil }
        return payment
    }

    /// The payment if it can still be authorized; an expired one is marked so (and that is committed).
    func pendingPayment(_ id: String, account: String, on db: any SQLDatabase) async throws -> PaymentInfo {
        guard Validation.isIssuedID(id), let payment = try await db.payments.find(id, account: account) else {
            throw Refusal(APIError(.paymentNotFound, "There is no such payment on this account."))
        }
        switch payment.status {
        case .pending where payment.expiresAt <= now:
            try await recorder.expire(payment, on: db)
            throw Refusal(APIError(.paymentExpired, "The payment expired before it was authorized."))
        case .pending: return payment
        case .authorized: throw Refusal(APIError(.paymentAlreadyAuthorized, "The payment is authorized already; read it for the receipt."))
        case .cancelled: throw Refusal(APIError(.paymentCancelled, "The payment was cancelled."))
        case .expired: throw Refusal(APIError(.paymentExpired, "The payment expired before it was authorized."))
        case .locked: throw Refusal(APIError(.paymentLocked, "Too many failed authorizations; the payment is locked."))
        }
    }

    /// Moves the payment from pending to authorized, exactly once, with a signed receipt.
    func authorize(
        _ payment: PaymentInfo,
        method: String,
        device: String?,
        session: AuthenticatedSession,
        on db: any SQLDatabase
    )
        async throws -> PaymentInfo
    {
        let transaction = try payment.transaction()
        let receipt = try receipts.sign(
            PaymentReceipt(
                paymentId: payment.id,
                accountId: payment.accountID,
                amount: transaction.amount,
                payeeId: payment.payeeID,
                payeeName: payment.payeeName,
                method: method,
                authorizedAtMs: now.millisecondsSince1970,
                keyId: ""
            )
        )
        // The status condition makes the move happen once even if two units of work got this far.
        let moved = try await db.payments.markAuthorized(payment.id, at: receipt.authorizedAtMs, method: method, device: device, receipt: receipt)
        guard moved else {
            // It moved on since it was read (below SERIALIZABLE, by a request that committed meanwhile): say to what.
            _ = try await pendingPayment(payment.id, account: payment.accountID, on: db)
            throw Refusal(APIError(.paymentAlreadyAuthorized, "The payment is authorized already; read it for the receipt."))
        }
        try await recorder.audit(
            .paymentAuthorized,
            succeeded: true,
            account: payment.accountID,
            device: device,
            session: session.sessionID,
            payment: payment.id,
            on: db
        )
        var authorized = payment
        authorized.status = .authorized
        authorized.authorizedAt = Date(millisecondsSince1970: receipt.authorizedAtMs)
        authorized.authorizationMethod = method
        authorized.deviceID = device
        authorized.receipt = receipt
        try await recorder.emit(.paymentAuthorized, .init(payment: authorized), on: db)
        return authorized
    }

    /// Records a failed authorization of `payment` (a device's refused proof, a wrong PIN): audited, and counted toward
    /// the payment's lock. Returns the error to report.
    func recordFailedAuthorization(_ payment: PaymentInfo, _ error: APIError, device: String?, on db: any SQLDatabase) async throws -> APIError {
        try await record(error, device: device, account: payment.accountID, ProofRefusals(kind: .paymentAuthorized, payment: payment), on: db)
    }

    /// Counts a failed authorization; the configured number locks the payment.
    ///
    /// The count is incremented in the database, so failures that arrive together (below SERIALIZABLE) all count; the
    /// one whose count reaches the limit locks the payment, and only that one reports the lock.
    func countFailedAttempt(_ payment: PaymentInfo, device: String?, on db: any SQLDatabase) async throws {
        let limit = configuration.maxFailedPaymentAttempts
        guard let counted = try await db.payments.recordFailedAttempt(payment.id, lockAt: limit) else { return }
        if counted.status == .locked, counted.failures == limit {
            try await recorder.audit(.paymentLocked, succeeded: true, account: payment.accountID, device: device, payment: payment.id, on: db)
            var locked = payment
            locked.status = .locked
            locked.failedAttempts = counted.failures
            try await recorder.emit(.paymentLocked, .init(payment: locked), on: db)
        }
    }
}
