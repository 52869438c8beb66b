import BioAuthCore
import CoreMetrics
import Foundation
import Logging
import SQLKit

/// Who does a support action and why: written into the audit event, which the customer sees in `GET /v1/audit`.
struct SupportAction: Sendable {
    let operatorID: String
    let reason: String
}

/// Why a support request was refused.
public enum SupportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The operator is unknown, disabled, or their role does not allow the action.
    case notAllowed(String)
    /// No such customer, device or payment.
    case notFound(String)
    /// The reason is missing or unfit (1-500 characters, no control characters), or the payment is no longer pending.
    case invalid(String)

    /// What went wrong, for the command line and the console.
    public var description: String {
        switch self {
        case .notAllowed(let text), .notFound(let text), .invalid(let text): text
        }
    }
}

/// What an operator sees of a customer: the account and its locks, devices, passkeys, live sessions, recent payments and the
/// security timeline (audit events). Never a password hash, token, PIN hash or key.
public struct CustomerRecord: Sendable {
    /// A device key bound to the account.
    public struct Device: Sendable {
        /// The device id.
        public let id: String
        /// The name the phone gave itself.
        public let name: String
        /// `faceID`, `touchID` or `opticID`.
        public let biometryKind: String
        /// `apple-appattest` when App Attest backed the key, else `none`.
        public let attestation: String
        /// When it was registered.
        public let createdAt: Date
        /// When its key last signed in or paid.
        public let lastUsedAt: Date?
        /// When it was revoked, if it was.
        public let revokedAt: Date?
    }
    /// A passkey of the account.
    public struct Passkey: Sendable {
        /// The passkey id.
        public let id: String
        /// The name the customer gave it.
        public let name: String
        /// A synced (multi-device) passkey.
        public let backupEligible: Bool
        /// The attestation format it was registered with (`none` for synced passkeys).
        public let attestationFormat: String
        /// Whether its attestation led to a configured root.
        public let attestationTrusted: Bool
        /// When it was registered.
        public let createdAt: Date
        /// When it last signed in.
        public let lastUsedAt: Date?
        /// When it was revoked, if it was.
        public let revokedAt: Date?
    }
    /// A live session.
    public struct Session: Sendable {
        /// The session id.
        public let id: String
        /// The app installation it belongs to.
        public let installationID: String
        /// `password`, `biometric` or `passkey`.
        public let method: String
        /// The device whose key opened it, for a biometric sign-in.
        public let deviceID: String?
        /// The passkey that opened it, for a passkey sign-in.
        public let passkeyID: String?
        /// When it began.
        public let createdAt: Date
    }
    /// A payment, as the server stores it (a pending one past its expiry shows as expired).
    public struct Payment: Sendable {
        /// The payment id.
        public let id: String
        /// The amount (nil only for a currency no longer known).
        public let amount: Money?
        /// The registered payee's id.
        public let payeeID: String
        /// The name the prompt showed.
        public let payeeName: String
        /// `pending`, `authorized`, `cancelled`, `expired` or `locked`.
        public let status: String
        /// When it was asked for.
        public let createdAt: Date
    }
    /// A request to approve on the phone what started elsewhere (OpenID CIBA, or a web page's QR code).
    public struct Approval: Sendable {
        /// The request id.
        public let id: String
        /// `sign_in` or `operation`.
        public let kind: String
        /// Who asked, as the phone showed it.
        public let requester: String
        /// The operation's message, as the phone showed it.
        public let bindingMessage: String?
        /// Where a sign-in came from: browser, platform, address (each empty when not known).
        public let channel: CanonicalApproval.Channel
        /// The service client that asked (nil for a web page's QR code).
        public let clientID: String?
        /// `pending`, `approved`, `denied` or `expired` (a pending one past its expiry shows as expired).
        public let status: String
        /// Why it was denied: `denied` by the customer, or `number_mismatch`.
        public let denyReason: String?
        /// The device that answered.
        public let deviceID: String?
        /// When it was asked for.
        public let createdAt: Date
        /// When it was answered.
        public let answeredAt: Date?
    }
    /// An audit event of the account.
    public struct Event: Sendable {
        /// When it happened.
        public let occurredAt: Date
        /// What happened (docs/PROTOCOL.md lists the kinds).
        public let kind: String
        /// Whether it succeeded.
        public let succeeded: Bool
        /// The problem code of a failure.
        public let code: String?
        /// The operator who did it, for a support action.
        public let operatorID: String?
        /// The operator's reason, for a support action.
        public let reason: String?
        /// The device it concerns, if one.
        public var deviceID: String? = nil
        /// The passkey it concerns, if one.
        public var passkeyID: String? = nil
        /// The payment it concerns, if one.
        public var paymentID: String? = nil
        /// The address the request came from (as rate limits count it: IPv6 by its /64), when known.
        public var clientAddress: String? = nil
        /// The request's `User-Agent`, when it sent one.
        public var userAgent: String? = nil
    }

    /// The account id.
    public let accountID: String
    /// The username.
    public let username: String
    /// When the account was made.
    public let createdAt: Date
    /// Until when password sign-in is locked, if it is.
    public let lockedUntil: Date?
    /// Until when PIN payments are locked, if they are.
    public let pinLockedUntil: Date?
    /// Every device, newest first, revoked ones included.
    public let devices: [Device]
    /// Every passkey, newest first, revoked ones included.
    public let passkeys: [Passkey]
    /// The live sessions, newest first.
    public let sessions: [Session]
    /// The 20 most recent.
    public let payments: [Payment]
    /// The 50 most recent, newest first.
    public let events: [Event]
    /// The 20 most recent approval requests, newest first.
    public var approvals: [Approval] = []
}

/// The support actions and the customer view, shared by `bioauth admin customer` and the operator console. Each action
/// names the operator and a reason; both go into the audit event the customer sees. `viewer` operators may only read.
///
/// ```swift
/// // Partial: assumes database: any DatabaseExecutor; configuration: ServerConfiguration
/// let desk = try await SupportDesk.open(database: database, configuration: configuration)
/// let record = try await desk.customer("alice")
/// try await desk.revokeDevice(record.devices[0].id, customer: record.accountID, operator: "mei", reason: "Phone reported stolen (call 4711)")
/// await desk.close()
/// ```
public struct SupportDesk: Sendable {
    let database: any DatabaseExecutor
    let clock: any WallClock
    let random: any RandomSource
    /// Writes the audit and outbox events of support actions, and the changes the customer's own requests also make.
    let recorder: ChangeRecorder
    /// The operators, for admins' actions.
    let operators: Operators

    /// The desk of the running server: its database, clock and password hashing threads.
    init(service: BioAuthService) {
        self.database = service.database
        self.clock = service.clock
        self.random = service.random
        self.recorder = service.recorder
        self.operators = Operators(service: service)
    }

    /// A desk over `database` with the server's `configuration` (its bcrypt cost and webhook settings), for the command
    /// line. It signs nothing and loads no receipt or PIN key.
    public static func open(
        database: any DatabaseExecutor,
        configuration: ServerConfiguration,
        clock: any WallClock = SystemClock(),
        logger: Logger = Logger(label: "bioauth-support")
    ) async throws -> SupportDesk {
        let random = SystemRandomSource()
        return SupportDesk(
            database: database,
            clock: clock,
            random: random,
            recorder: ChangeRecorder(
                clock: clock,
                random: random,
                dialect: database.dialect,
                webhookRetryWindow: configuration.webhooks.retryWindow,
                logger: logger
            ),
            operators: Operators(database: database, clock: clock, random: random, bcryptCost: configuration.bcryptCost)
        )
    }

    private init(database: any DatabaseExecutor, clock: any WallClock, random: any RandomSource, recorder: ChangeRecorder, operators: Operators) {
        self.database = database
        self.clock = clock
        self.random = random
        self.recorder = recorder
        self.operators = operators
    }

    /// Kept for callers of ``open(database:configuration:clock:logger:)``: the desk holds nothing that needs stopping (the
    /// database is the caller's).
    public func close() async {}

    // MARK: Reading

    /// The customer with this username (any case) or account id.
    public func customer(_ query: String) async throws -> CustomerRecord {
        guard (1...64).contains(query.utf8.count) else { throw SupportError.notFound("no customer \(query)") }
        let now = clock.now
        return try await database.transaction { db in
            guard let account = try await db.accounts.find(idOrUsername: query.lowercased()) else {
                throw SupportError.notFound("no customer with the username or account id \(query)")
            }
            let id = account.id
            let current = { (date: Date?) in date.flatMap { $0 > now ? $0 : nil } }
            let devices = try await db.devices.list(account: id).map { device in
                CustomerRecord.Device(
                    id: device.id,
                    name: device.name,
                    biometryKind: device.biometryKind.rawValue,
                    attestation: device.attestation,
                    createdAt: device.createdAt,
                    lastUsedAt: device.lastUsedAt,
                    revokedAt: device.revokedAt
                )
            }
            let passkeys = try await db.passkeys.list(account: id).map { passkey in
                CustomerRecord.Passkey(
                    id: passkey.id,
                    name: passkey.name,
                    backupEligible: passkey.backupEligible,
                    attestationFormat: passkey.attestationFormat,
                    attestationTrusted: passkey.attestationTrusted,
                    createdAt: passkey.createdAt,
                    lastUsedAt: passkey.lastUsedAt,
                    revokedAt: passkey.revokedAt
                )
            }
            let sessions = try await db.sessions.live(account: id).map { session in
                CustomerRecord.Session(
                    id: session.id,
                    installationID: session.installationID,
                    method: session.method,
                    deviceID: session.deviceID,
                    passkeyID: session.passkeyID,
                    createdAt: session.createdAt
                )
            }
            let payments = try await db.payments.list(account: id, status: nil, now: now.millisecondsSince1970, limit: 20)
                .map { CustomerRecord.Payment($0.effective(at: now)) }
            let events = try await db.auditEvents.page(account: id, limit: 50, before: nil).events.map { event in
                CustomerRecord.Event(
                    occurredAt: event.occurredAt,
                    kind: event.kind,
                    succeeded: event.succeeded,
                    code: event.code,
                    operatorID: event.operatorID,
                    reason: event.reason,
                    deviceID: event.deviceID,
                    passkeyID: event.passkeyID,
                    paymentID: event.paymentID,
                    clientAddress: event.clientAddress,
                    userAgent: event.userAgent
                )
            }
            let approvals = try await db.approvals.list(account: id, status: nil, now: now.millisecondsSince1970, limit: 20).map { found in
                let approval = found.effective(at: now)
                return CustomerRecord.Approval(
                    id: approval.id,
                    kind: approval.kind.rawValue,
                    requester: approval.requester,
                    bindingMessage: approval.bindingMessage,
                    channel: approval.channel,
                    clientID: approval.clientID,
                    status: approval.status.rawValue,
                    denyReason: approval.denyReason,
                    deviceID: approval.deviceID,
                    createdAt: approval.createdAt,
                    answeredAt: approval.answeredAt
                )
            }
            return CustomerRecord(
                accountID: id,
                username: account.username,
                createdAt: account.createdAt,
                lockedUntil: current(account.lockedUntil),
                pinLockedUntil: current(try await db.paymentPINs.lockedUntil(account: id)),
                devices: devices,
                passkeys: passkeys,
                sessions: sessions,
                payments: payments,
                events: events,
                approvals: approvals
            )
        }
    }

    /// What a customer search found.
    public enum CustomerSearch: Sendable, Equatable {
        /// A customer a username matched.
        public struct Match: Sendable, Equatable {
            /// Their account id.
            public let accountID: String
            /// Their username.
            public let username: String
        }
        /// The query was an id the server issued: the account's own, or one of its devices', payments', passkeys' or
        /// sessions'. `kind` says which (`account`, `device`, `payment`, `passkey`, `session`).
        case id(kind: String, id: String, accountID: String)
        /// Customers whose username starts with the query (any case), by username; at most the limit asked for.
        case usernames([Match])
    }

    /// Finds customers as support is told about them: by any id a customer can read out (account, device, payment,
    /// passkey, session), or by the start of a username in any case (`Carol.L` finds `carol.li`); at most `limit` (1-100)
    /// usernames. Each lookup reads one index, whatever the number of customers.
    public func search(_ query: String, limit: Int = 20) async throws -> CustomerSearch {
        let query = query.trimmingCharacters(in: .whitespaces)
        guard (1...64).contains(query.utf8.count), (1...100).contains(limit) else {
            throw SupportError.invalid("a search is 1-64 characters, and finds at most 100 customers")
        }
        let dialect = database.dialect
        return try await database.transaction { db in
            if Validation.isIssuedID(query.lowercased()) {
                let id = query.lowercased()
                if try await db.accounts.exists(id: id) { return .id(kind: "account", id: id, accountID: id) }
                for (kind, owner) in [
                    ("payment", db.payments.owner(of:)), ("device", db.devices.owner(of:)), ("passkey", db.passkeys.owner(of:)),
                    ("session", db.sessions.owner(of:)),
                ] as [(String, (String) async throws -> String?)] {
                    if let account = try await owner(id) { return .id(kind: kind, id: id, accountID: account) }
                }
                return .usernames([])
            }
            return .usernames(
                try await db.accounts.withUsernamePrefix(query.lowercased(), limit: limit, engine: dialect).map {
                    CustomerSearch.Match(accountID: $0.id, username: $0.username)
                }
            )
        }
    }

    /// What the payments search looks for; every part is optional.
    public struct PaymentSearch: Sendable, Equatable {
        /// `pending`, `authorized`, `cancelled`, `expired` or `locked` (a pending payment past its expiry is expired).
        public var status: String?
        /// A payee id (exactly) or part of a payee's name (any case).
        public var payee: String?
        /// Created at or after.
        public var from: Date?
        /// Created before.
        public var until: Date?
        /// The smallest amount, in minor units (8800 is ¥88.00).
        public var minAmountMinor: Int64?
        /// The largest amount, in minor units.
        public var maxAmountMinor: Int64?
        /// Only payments in this currency (ISO 4217 code); amounts are in its minor units.
        public var currency: String?

        /// A search; nothing given finds the newest payments.
        public init(
            status: String? = nil,
            payee: String? = nil,
            from: Date? = nil,
            until: Date? = nil,
            minAmountMinor: Int64? = nil,
            maxAmountMinor: Int64? = nil,
            currency: String? = nil
        ) {
            self.status = status
            self.payee = payee
            self.from = from
            self.until = until
            self.minAmountMinor = minAmountMinor
            self.maxAmountMinor = maxAmountMinor
            self.currency = currency
        }
    }

    /// A payment the search found, with its customer.
    public struct FoundPayment: Sendable {
        /// The payment.
        public let payment: CustomerRecord.Payment
        /// Its customer's account id.
        public let accountID: String
        /// Its customer's username.
        public let username: String
    }

    /// The payments matching `search`, newest first, at most `limit` (1-200).
    public func payments(_ search: PaymentSearch, limit: Int = 100) async throws -> [FoundPayment] {
        guard (1...200).contains(limit) else { throw SupportError.invalid("limit is 1-200") }
        let status = try search.status.map { text in
            guard let status = PaymentInfo.Status(rawValue: text) else {
                throw SupportError.invalid("status is pending, authorized, cancelled, expired or locked")
            }
            return status
        }
        var payee = search.payee?.trimmingCharacters(in: .whitespaces)
        if payee?.isEmpty == true { payee = nil }
        guard (payee?.utf8.count ?? 0) <= 64 else { throw SupportError.invalid("a payee is at most 64 bytes") }
        let at = clock.now
        let query = PaymentsTable.Search(
            status: status,
            payee: payee,
            from: search.from?.millisecondsSince1970,
            until: search.until?.millisecondsSince1970,
            minAmountMinor: search.minAmountMinor,
            maxAmountMinor: search.maxAmountMinor,
            currency: search.currency
        )
        return try await database.transaction { db in
            let payments = try await db.payments.search(query, now: at.millisecondsSince1970, limit: limit).map { $0.effective(at: at) }
            let usernames = try await db.accounts.usernames(Array(Set(payments.map(\.accountID))))
            return payments.map { payment in
                FoundPayment(payment: CustomerRecord.Payment(payment), accountID: payment.accountID, username: usernames[payment.accountID] ?? "")
            }
        }
    }

    /// A payment as support opens it: what it is, who asked for it, and everything that happened to it.
    public struct PaymentRecord: Sendable {
        /// One thing that happened to the payment, oldest first.
        public struct Step: Sendable {
            /// When.
            public let occurredAt: Date
            /// `payment_created`, `payment_authorized` (a failed attempt when `succeeded` is false), `payment_locked` or
            /// `payment_cancelled`.
            public let kind: String
            /// Whether it succeeded.
            public let succeeded: Bool
            /// The problem code of a failed attempt.
            public let code: String?
            /// The device whose key signed (or failed to), if one did.
            public let deviceID: String?
            /// The service client that asked for the payment, when it was the bank's backend.
            public let clientID: String?
            /// The operator, for a support action.
            public let operatorID: String?
            /// The operator's reason.
            public let reason: String?
        }
        /// A challenge issued to sign the payment (kept until retention purges it after it expired).
        public struct Challenge: Sendable {
            /// The challenge id.
            public let id: String
            /// The device whose key it was issued for.
            public let deviceID: String?
            /// When it was issued.
            public let createdAt: Date
            /// When it expires (or expired).
            public let expiresAt: Date
            /// When a signature used it, if one did.
            public let consumedAt: Date?
        }
        /// A webhook delivery of one of the payment's events.
        public struct Delivery: Sendable {
            /// The event (`payment.authorized`, …).
            public let eventType: String
            /// The endpoint it went to.
            public let endpointID: String
            /// `pending`, `delivered` or `failed`.
            public let status: String
            /// Attempts made.
            public let attempts: Int
            /// The HTTP status of the last attempt, if one answered.
            public let lastStatusCode: Int?
            /// When it was delivered.
            public let deliveredAt: Date?
        }
        /// The payment as stored (a pending one past its expiry shows as expired).
        public let payment: CustomerRecord.Payment
        /// Its customer.
        public let accountID: String
        /// Its customer's username.
        public let username: String
        /// Whether the bank verified the payee when the payment was made (nil: made before this was recorded).
        public let payeeVerified: Bool?
        /// The memo the customer saw, if any.
        public let memo: String?
        /// When it expires (or expired).
        public let expiresAt: Date
        /// Failed authorization attempts.
        public let failedAttempts: Int
        /// `biometric` or `pin`, once authorized.
        public let authorizationMethod: String?
        /// The device whose key authorized it.
        public let deviceID: String?
        /// The receipt, once authorized.
        public let receipt: PaymentReceipt?
        /// Whether the receipt's signature verifies with a published receipt key and it says what the payment is.
        public let receiptVerifies: Bool
        /// What happened, oldest first (recorded from this version on; older payments show none).
        public let steps: [Step]
        /// The challenges issued for it that retention has not purged yet, oldest first.
        public let challenges: [Challenge]
        /// The webhook deliveries of its events.
        public let deliveries: [Delivery]
    }

    /// The customer's payment `paymentID`, with its history; another customer's payment is not found.
    public func payment(_ paymentID: String, customer: String) async throws -> PaymentRecord {
        let account = try await accountID(customer)
        let now = clock.now
        return try await database.transaction { db in
            guard Validation.isIssuedID(paymentID), let stored = try await db.payments.find(paymentID, account: account) else {
                throw SupportError.notFound("the customer has no payment \(paymentID)")
            }
            let payment = stored.effective(at: now)
            let keys = try await ReceiptKeyRing.all(on: db)
            let verifies = payment.receipt.map { receipt in
                receipt.paymentId == payment.id && receipt.accountId == payment.accountID && receipt.amountMinor == payment.amountMinor
                    && receipt.currency == payment.currency && receipt.payeeId == payment.payeeID
                    && keys.contains { Base64URL.encode($0.publicKey.keyID) == receipt.keyId && receipt.isValid(signedBy: $0.publicKey) }
            }
            let steps = try await db.auditEvents.forPayment(payment.id).map { event in
                PaymentRecord.Step(
                    occurredAt: event.occurredAt,
                    kind: event.kind,
                    succeeded: event.succeeded,
                    code: event.code,
                    deviceID: event.deviceID,
                    clientID: event.clientID,
                    operatorID: event.operatorID,
                    reason: event.reason
                )
            }
            let deliveries = try await db.webhooks.deliveries(subject: payment.id).map { found in
                PaymentRecord.Delivery(
                    eventType: found.delivery.eventType,
                    endpointID: found.endpointID,
                    status: found.delivery.status,
                    attempts: found.delivery.attempts,
                    lastStatusCode: found.delivery.lastStatusCode,
                    deliveredAt: found.delivery.deliveredAt
                )
            }
            return PaymentRecord(
                payment: CustomerRecord.Payment(payment),
                accountID: account,
                username: try await db.accounts.usernames([account])[account] ?? "",
                payeeVerified: payment.payeeVerified,
                memo: payment.memo,
                expiresAt: payment.expiresAt,
                failedAttempts: payment.failedAttempts,
                authorizationMethod: payment.authorizationMethod,
                deviceID: payment.deviceID,
                receipt: payment.receipt,
                receiptVerifies: verifies ?? false,
                steps: steps,
                challenges: try await db.challenges.forPayment(payment.id).map {
                    PaymentRecord.Challenge(
                        id: $0.id,
                        deviceID: $0.deviceID,
                        createdAt: $0.createdAt,
                        expiresAt: $0.expiresAt,
                        consumedAt: $0.consumedAt
                    )
                },
                deliveries: deliveries
            )
        }
    }

    /// Sign-ins and failures over the last hours, for the console's overview.
    public struct Overview: Sendable, Equatable {
        /// One hour's sign-ins.
        public struct Hour: Sendable, Equatable {
            /// When the hour began.
            public let start: Date
            /// Successful sign-ins with a password.
            public var password = 0
            /// Successful sign-ins with a device key (Face ID, Touch ID, Optic ID).
            public var biometric = 0
            /// Successful sign-ins with a passkey.
            public var passkey = 0
            /// Failed sign-ins of any kind.
            public var failures = 0
        }
        /// How many failures had one problem code.
        public struct CodeCount: Sendable, Equatable {
            /// The problem code.
            public let code: String
            /// How many.
            public let count: Int
        }
        /// The hours, oldest first; the last is the current one.
        public let hours: [Hour]
        /// Failures (any audited kind) by problem code, most first, at most 20.
        public let failuresByCode: [CodeCount]
    }

    /// Sign-ins by method (device key, passkey, password) and failures by problem code over the last `hours` (1-168),
    /// counted by the database.
    /// The hours begin on the hour in `timeZone` (the console's), so that a zone half an hour off UTC gets its own hours.
    public func overview(hours: Int = 24, timeZone: TimeZone = TimeZone(identifier: "UTC") ?? .current) async throws -> Overview {
        guard (1...168).contains(hours) else { throw SupportError.invalid("hours is 1-168") }
        let now = clock.now.millisecondsSince1970
        let hour: Int64 = 3_600_000
        let offset = Int64(timeZone.secondsFromGMT(for: clock.now)) * 1000
        let first = ((now + offset) / hour - Int64(hours - 1)) * hour - offset
        return try await database.transaction { db in
            var buckets = (0..<hours).map { Overview.Hour(start: Date(millisecondsSince1970: first + Int64($0) * hour)) }
            for count in try await db.auditEvents.signInCounts(since: first, hour: hour) {
                guard buckets.indices.contains(count.bucket) else { continue }
                guard count.succeeded else {
                    buckets[count.bucket].failures += count.count
                    continue
                }
                switch count.kind {
                case AuditKind.passwordSignIn.rawValue: buckets[count.bucket].password += count.count
                case AuditKind.passkeySignIn.rawValue: buckets[count.bucket].passkey += count.count
                default: buckets[count.bucket].biometric += count.count
                }
            }
            let codes = try await db.auditEvents.failureCounts(since: first, limit: 20).map { Overview.CodeCount(code: $0.code, count: $0.count) }
            return Overview(hours: buckets, failuresByCode: codes)
        }
    }

    // MARK: Acting

    /// Revokes the customer's device: its key is refused from now on and its sessions end. Nothing changes for a revoked
    /// device; another customer's device is not found.
    public func revokeDevice(_ deviceID: String, customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            guard Validation.isIssuedID(deviceID), let device = try await db.devices.find(deviceID, account: account) else {
                throw SupportError.notFound("the customer has no device \(deviceID)")
            }
            guard device.revokedAt == nil else { return }
            try await recorder.revoke(device, keeping: nil, by: action, on: db)
        }
    }

    /// Revokes the customer's passkey: it signs in no more and the sessions it started end. Nothing changes for a revoked
    /// passkey; another customer's passkey is not found.
    public func revokePasskey(_ passkeyID: String, customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            guard Validation.isIssuedID(passkeyID), let passkey = try await db.passkeys.find(passkeyID, account: account) else {
                throw SupportError.notFound("the customer has no passkey \(passkeyID)")
            }
            guard passkey.revokedAt == nil else { return }
            try await recorder.revoke(passkey, keeping: nil, by: action, on: db)
        }
    }

    /// Ends every live session of the customer (they sign in again; their devices stay registered).
    public func endSessions(customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            try await recorder.endSessions(account: account, reason: "ended_by_operator", on: db)
            try await recorder.audit(.sessionsEnded, succeeded: true, account: account, operator: action, on: db)
        }
    }

    /// Lifts a password lock (and the count of wrong passwords).
    public func unlockAccount(customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            try await db.accounts.clearPasswordFailures(account)
            try await recorder.audit(.accountUnlocked, succeeded: true, account: account, operator: action, on: db)
        }
    }

    /// Lifts a PIN lock (and the count of wrong PINs).
    public func clearPINLock(customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            try await db.paymentPINs.clearLock(account: account)
            try await recorder.audit(.paymentPINUnlocked, succeeded: true, account: account, operator: action, on: db)
        }
    }

    /// Cancels the customer's pending payment (`payment.cancelled` is sent as when the customer cancels); another
    /// customer's payment is not found.
    public func cancelPayment(_ paymentID: String, customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        let now = clock.now
        try await database.transaction { db -> Void in
            guard Validation.isIssuedID(paymentID), let payment = try await db.payments.find(paymentID, account: account) else {
                throw SupportError.notFound("the customer has no payment \(paymentID)")
            }
            let status = payment.effective(at: now).status
            guard status == .pending else { throw SupportError.invalid("the payment is \(status.rawValue), not pending") }
            _ = try await recorder.cancel(payment, session: nil, by: action, on: db)
        }
    }

    // MARK: Administering (admins only)

    /// Makes an operator on behalf of the signed-in admin `by`; audited with the admin's id. They choose their own
    /// password at their first sign-in. A bad or taken name, or a password too short or long, is ``SupportError/invalid(_:)``.
    public func createOperator(name: String, role: OperatorRole, password: String, by admin: Operator) async throws -> Operator {
        try Self.requireAdmin(admin)
        let operators = self.operators
        let recorder = self.recorder
        // Hashed before the unit of work; stored and audited in one, so neither stands without the other.
        let new: Operators.NewOperator
        do { new = try await operators.prepare(name: name, role: role, password: password) } catch let error as OperatorError {
            throw SupportError.invalid(error.description)
        }
        return try await database.transaction { db in
            let made: Operator
            do { made = try await operators.insert(new, createdBy: admin.id, on: db) } catch let error as OperatorError {
                throw SupportError.invalid(error.description)
            }
            try await recorder.audit(
                .operatorCreated,
                succeeded: true,
                account: nil,
                operator: SupportAction(operatorID: admin.id, reason: "\(made.id) \(role.rawValue)"),
                on: db
            )
            return made
        }
    }

    /// Disables an operator on behalf of `admin` (not themself); their console sessions end at their next request. They
    /// keep their name, which no one else can take, so the audit log still names them.
    public func disableOperator(name: String, reason: String = "", by admin: Operator) async throws {
        try await administerOperator(name, reason: reason, kind: .operatorDisabled, optionalReason: true, by: admin) { target, db in
            guard try await db.operators.markDisabled(name: target.name, at: clock.now.millisecondsSince1970) else {
                throw SupportError.invalid("\(target.name) is already disabled")
            }
            return ""
        }
    }

    /// Enables a disabled operator again on behalf of `admin`; audited with the reason.
    public func enableOperator(name: String, reason: String, by admin: Operator) async throws {
        try await administerOperator(name, reason: reason, kind: .operatorEnabled, by: admin) { target, db in
            guard try await db.operators.markEnabled(name: target.name) else { throw SupportError.invalid("\(target.name) is not disabled") }
            return ""
        }
    }

    /// Gives an operator another role on behalf of `admin` (not themself: an admin cannot demote the last admin by
    /// mistake); it applies from their next request. Audited with the old and new roles and the reason.
    public func changeOperatorRole(name: String, to role: OperatorRole, reason: String, by admin: Operator) async throws {
        try await administerOperator(name, reason: reason, kind: .operatorRoleChanged, by: admin) { target, db in
            guard target.role != role else { throw SupportError.invalid("\(target.name) is already \(role.rawValue)") }
            try await db.operators.setRole(target.id, role: role)
            return "\(target.role.rawValue) → \(role.rawValue)"
        }
    }

    /// Resets an operator's password to `temporaryPassword` on behalf of `admin`: their console sessions end, and at their
    /// next sign-in (with it and their code) they must choose their own before anything else. Audited.
    public func resetOperatorPassword(name: String, temporaryPassword: String, reason: String, by admin: Operator) async throws {
        let hash: String
        do { hash = try await operators.hashed(temporaryPassword) } catch let error as OperatorError { throw SupportError.invalid(error.description) }
        let at = clock.now.millisecondsSince1970
        try await administerOperator(name, reason: reason, kind: .operatorPasswordReset, by: admin) { target, db in
            try await db.operators.setPassword(target.id, hash: hash, mustChange: true)
            try await db.operators.endSessions(operatorID: target.id, at: at)
            return ""
        }
    }

    /// Resets an operator's second factor on behalf of `admin` (a lost phone): their console sessions end and they enroll
    /// a new key at their next sign-in; no code of the old key is accepted again. Audited.
    public func resetOperatorTOTP(name: String, reason: String, by admin: Operator) async throws {
        let at = clock.now.millisecondsSince1970
        try await administerOperator(name, reason: reason, kind: .operatorTOTPReset, by: admin) { target, db in
            try await db.operators.clearTOTP(target.id)
            try await db.operators.endSessions(operatorID: target.id, at: at)
            return ""
        }
    }

    /// The enabled operator `name`, for the command line's `--operator` (who acts).
    public func enabledOperator(named name: String) async throws -> Operator {
        let found = try await database.transaction { db in try await db.operators.find(name: name) }
        guard let found, found.disabledAt == nil else { throw SupportError.notAllowed("no enabled operator named \(name)") }
        return found
    }

    /// What the admin page lists of operators' lifecycle: the most recent audited changes of operators, newest first.
    public struct OperatorChange: Sendable {
        /// When.
        public let occurredAt: Date
        /// `operator_created`, `operator_disabled`, `operator_enabled`, `operator_role_changed`, `operator_password_reset`,
        /// `operator_totp_reset` or `operator_password_changed`.
        public let kind: String
        /// Who did it (an admin, or the operator for their own password).
        public let operatorID: String
        /// The operator it concerns, what changed and why, as recorded.
        public let reason: String
    }

    /// The `limit` most recent operator changes, newest first.
    public func operatorChanges(limit: Int = 50) async throws -> [OperatorChange] {
        try await database.transaction { db in
            try await db.auditEvents.operatorChanges(limit: limit).map { event in
                OperatorChange(occurredAt: event.occurredAt, kind: event.kind, operatorID: event.operatorID ?? "", reason: event.reason ?? "")
            }
        }
    }

    /// An admin's change of another operator: the admin's role and the reason checked, the operator looked up by name,
    /// `change` made (it returns what changed, for the audit, or "") and audited in one unit of work. The audit event's reason names the operator (`op_… (name)`), what
    /// changed, and the admin's reason.
    private func administerOperator(
        _ name: String,
        reason: String,
        kind: AuditKind,
        optionalReason: Bool = false,
        by admin: Operator,
        _ change: @escaping @Sendable (Operator, any SQLDatabase) async throws -> String
    ) async throws {
        try Self.requireAdmin(admin)
        guard name != admin.name else { throw SupportError.invalid("an admin cannot do this to themself") }
        let trimmed = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        if !(optionalReason && trimmed.isEmpty) { _ = try Self.checkedReason(trimmed) }
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            guard let target = try await db.operators.find(name: name) else { throw SupportError.notFound("there is no operator named \(name)") }
            let what = try await change(target, db)
            let recorded = "\(target.id) (\(target.name))" + (what.isEmpty ? "" : " \(what)") + (trimmed.isEmpty ? "" : ": \(trimmed)")
            try await recorder.audit(kind, succeeded: true, account: nil, operator: SupportAction(operatorID: admin.id, reason: recorded), on: db)
        }
    }

    /// Registers or renames a payee on behalf of `admin`, recorded as registered by the admin's id and audited.
    public func registerPayee(id: String, name: String, verified: Bool, by admin: Operator) async throws {
        try Self.requireAdmin(admin)
        let recorder = self.recorder
        let now = clock.now
        do {
            try await database.transaction { db -> Void in
                _ = try await PayeeRegistry.register(
                    id: id,
                    name: name,
                    verification: verified ? "verified" : "unverified",
                    by: admin.id,
                    at: now,
                    on: db
                )
                try await recorder.audit(
                    .payeeRegistered,
                    succeeded: true,
                    account: nil,
                    operator: SupportAction(operatorID: admin.id, reason: id),
                    on: db
                )
            }
        } catch let error as APIError {
            throw SupportError.invalid(error.detail)
        }
    }

    /// Disables a service client on behalf of `admin`: its secrets and tokens stop working at once. Audited.
    public func disableServiceClient(_ clientID: String, by admin: Operator) async throws {
        try Self.requireAdmin(admin)
        let clients = ServiceClients(database: database, clock: clock, random: random)
        let recorder = self.recorder
        do {
            try await database.transaction { db -> Void in
                try await clients.disable(clientID: clientID, on: db)
                try await recorder.audit(
                    .serviceClientDisabled,
                    succeeded: true,
                    account: nil,
                    client: clientID,
                    operator: SupportAction(operatorID: admin.id, reason: clientID),
                    on: db
                )
            }
        } catch let error as ConfigurationError {
            throw SupportError.notFound(error.message)
        }
    }

    /// A live webhook endpoint, as an admin lists them (never its secret).
    public struct WebhookEndpointSummary: Sendable {
        /// The endpoint id.
        public let id: String
        /// The service client that registered it.
        public let clientID: String
        /// Where events go.
        public let url: String
        /// The events it asked for.
        public let events: [String]
    }

    /// Every live webhook endpoint, of every service client, oldest first.
    public func webhookEndpoints() async throws -> [WebhookEndpointSummary] {
        try await database.transaction { db in
            try await db.webhooks.allLiveEndpoints().map { WebhookEndpointSummary(id: $0.id, clientID: $0.clientID, url: $0.url, events: $0.events) }
        }
    }

    private static func requireAdmin(_ operator: Operator) throws {
        guard `operator`.role == .admin, `operator`.disabledAt == nil else { throw SupportError.notAllowed("only admins can do this") }
    }

    // MARK: Internals

    /// `reason` trimmed, when it is 1-500 characters without control characters.
    private static func checkedReason(_ reason: String) throws -> String {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty, Validation.isDisplayable(reason, maxCharacters: 500) else {
            throw SupportError.invalid("a reason is required: 1-500 characters without control characters")
        }
        return reason
    }

    /// The operator named `name`, if enabled and allowed to act (support or admin), with a fit reason.
    private func authorize(_ name: String, reason: String) async throws -> SupportAction {
        let reason = try Self.checkedReason(reason)
        let found = try await database.transaction { db in try await db.operators.find(name: name) }
        guard let found, found.disabledAt == nil else { throw SupportError.notAllowed("no enabled operator named \(name)") }
        guard found.role != .viewer else { throw SupportError.notAllowed("\(name) is a viewer: viewers only read") }
        return SupportAction(operatorID: found.id, reason: reason)
    }

    /// The account id of the customer with this username (any case) or account id.
    func accountID(_ customer: String) async throws -> String {
        guard (1...64).contains(customer.utf8.count),
            let id = try await database.transaction({ db in try await db.accounts.find(idOrUsername: customer.lowercased())?.id })
        else { throw SupportError.notFound("no customer with the username or account id \(customer)") }
        return id
    }
}

extension CustomerRecord.Payment {
    /// The payment as support sees it (its amount is nil only for a currency no longer known).
    init(_ payment: PaymentInfo) {
        self.init(
            id: payment.id,
            amount: Currency(code: payment.currency).map { Money(minorUnits: payment.amountMinor, currency: $0) },
            payeeID: payment.payeeID,
            payeeName: payment.payeeName,
            status: payment.status.rawValue,
            createdAt: payment.createdAt
        )
    }
}
