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
}

/// The support actions and the customer view, shared by `bioauth admin customer` and the operator console. Each action
/// names the operator and a reason; both go into the audit event the customer sees. `viewer` operators may only read.
///
/// ```swift
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

    /// The customer with this username or account id.
    public func customer(_ query: String) async throws -> CustomerRecord {
        guard (1...64).contains(query.utf8.count) else { throw SupportError.notFound("no customer \(query)") }
        let now = clock.now
        return try await database.transaction { db in
            guard let account = try await db.accounts.find(idOrUsername: query) else {
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
                    reason: event.reason
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
                events: events
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

        /// A search; nothing given finds the newest payments.
        public init(
            status: String? = nil,
            payee: String? = nil,
            from: Date? = nil,
            until: Date? = nil,
            minAmountMinor: Int64? = nil,
            maxAmountMinor: Int64? = nil
        ) {
            self.status = status
            self.payee = payee
            self.from = from
            self.until = until
            self.minAmountMinor = minAmountMinor
            self.maxAmountMinor = maxAmountMinor
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
            maxAmountMinor: search.maxAmountMinor
        )
        return try await database.transaction { db in
            let payments = try await db.payments.search(query, now: at.millisecondsSince1970, limit: limit).map { $0.effective(at: at) }
            let usernames = try await db.accounts.usernames(Array(Set(payments.map(\.accountID))))
            return payments.map { payment in
                FoundPayment(payment: CustomerRecord.Payment(payment), accountID: payment.accountID, username: usernames[payment.accountID] ?? "")
            }
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
    public func overview(hours: Int = 24) async throws -> Overview {
        guard (1...168).contains(hours) else { throw SupportError.invalid("hours is 1-168") }
        let now = clock.now.millisecondsSince1970
        let hour: Int64 = 3_600_000
        let first = (now / hour - Int64(hours - 1)) * hour
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

    /// Makes an operator on behalf of the signed-in admin `by`; audited with the admin's id.
    public func createOperator(name: String, role: OperatorRole, password: String, by admin: Operator) async throws -> Operator {
        try Self.requireAdmin(admin)
        let operators = self.operators
        let recorder = self.recorder
        // Hashed before the unit of work; stored and audited in one, so neither stands without the other.
        let new = try await operators.prepare(name: name, role: role, password: password)
        return try await database.transaction { db in
            let made = try await operators.insert(new, createdBy: admin.id, on: db)
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

    /// Disables an operator on behalf of `admin` (not themself); their console sessions end at their next request.
    public func disableOperator(name: String, by admin: Operator) async throws {
        try Self.requireAdmin(admin)
        guard name != admin.name else { throw SupportError.invalid("an admin cannot disable themself") }
        let operators = self.operators
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            try await operators.disable(name: name, on: db)
            try await recorder.audit(
                .operatorDisabled,
                succeeded: true,
                account: nil,
                operator: SupportAction(operatorID: admin.id, reason: name),
                on: db
            )
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

    /// The operator named `name`, if enabled and allowed to act (support or admin), with a fit reason.
    private func authorize(_ name: String, reason: String) async throws -> SupportAction {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty, Validation.isDisplayable(reason, maxCharacters: 500) else {
            throw SupportError.invalid("a reason is required: 1-500 characters without control characters")
        }
        let found = try await database.transaction { db in try await db.operators.find(name: name) }
        guard let found, found.disabledAt == nil else { throw SupportError.notAllowed("no enabled operator named \(name)") }
        guard found.role != .viewer else { throw SupportError.notAllowed("\(name) is a viewer: viewers only read") }
        return SupportAction(operatorID: found.id, reason: reason)
    }

    /// The account id of the customer with this username or account id.
    func accountID(_ customer: String) async throws -> String {
        guard (1...64).contains(customer.utf8.count),
            let id = try await database.transaction({ db in try await db.accounts.find(idOrUsername: customer)?.id })
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
