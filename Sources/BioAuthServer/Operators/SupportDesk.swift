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
/// try await desk.revokeDevice(record.devices[0].id, operator: "mei", reason: "Phone reported stolen (call 4711)")
/// await desk.close()
/// ```
public struct SupportDesk: Sendable {
    let service: BioAuthService
    private let passwords: PasswordHasher?

    init(service: BioAuthService) {
        self.service = service
        self.passwords = nil
    }

    /// A desk over `database` with the server's `configuration` (its lock and lifetime settings). It signs nothing, so it
    /// loads no receipt or PIN key; close it when done.
    public static func open(
        database: any DatabaseExecutor, configuration: ServerConfiguration, clock: any WallClock = SystemClock(),
        logger: Logger = Logger(label: "bioauth-support")
    ) async throws -> SupportDesk {
        var configuration = configuration
        configuration.receiptKeyPath = ":memory:"
        configuration.pinKeyPath = ":memory:"
        let metrics = ServerMetrics(factory: NOOPMetricsHandler.instance)
        let passwords = try await PasswordHasher.start(cost: configuration.bcryptCost, threads: 1, metrics: metrics)
        let service = BioAuthService(
            configuration: configuration, database: database, clock: clock, random: SystemRandomSource(), passwords: passwords,
            receipts: try ReceiptSigner.load(path: ":memory:"), sealers: try Sealers.load(path: ":memory:"), logger: logger, metrics: metrics)
        return SupportDesk(service: service, passwords: passwords)
    }

    private init(service: BioAuthService, passwords: PasswordHasher) {
        self.service = service
        self.passwords = passwords
    }

    /// Stops what ``open(database:configuration:clock:logger:)`` started (not the database).
    public func close() async {
        try? await passwords?.shutdown()
    }

    // MARK: Reading

    /// The customer with this username or account id.
    public func customer(_ query: String) async throws -> CustomerRecord {
        guard (1...64).contains(query.utf8.count) else { throw SupportError.notFound("no customer \(query)") }
        let service = self.service
        let now = service.now
        let record = try await service.database.transaction { db in
            guard let account = try await db.raw(
                "SELECT id, username, created_at, locked_until FROM accounts WHERE id = \(bind: query) OR username = \(bind: query)"
            ).first() else { throw SupportError.notFound("no customer with the username or account id \(query)") }
            let id = try account.decode(column: "id", as: String.self)
            let time = { (value: Int64?) in value.map(Date.init(millisecondsSince1970:)).flatMap { $0 > now ? $0 : nil } }
            let pinLock = try await db.raw("SELECT locked_until FROM payment_pins WHERE account_id = \(bind: id)").first()?
                .decode(column: "locked_until", as: Int64?.self)
            let devices = try await service.devicesQuery(on: db).where("account_id", .equal, id).orderBy("created_at", .descending).all()
                .map(service.device).map { device in
                    CustomerRecord.Device(
                        id: device.id, name: device.name, biometryKind: device.biometryKind.rawValue, attestation: device.attestation,
                        createdAt: device.createdAt, lastUsedAt: device.lastUsedAt, revokedAt: device.revokedAt)
                }
            let passkeys = try await service.passkeyRows(on: db).where("account_id", .equal, id).orderBy("created_at", .descending).all()
                .map(service.passkey).map { passkey in
                    CustomerRecord.Passkey(
                        id: passkey.id, name: passkey.name, backupEligible: passkey.backupEligible, attestationFormat: passkey.attestationFormat,
                        attestationTrusted: passkey.attestationTrusted, createdAt: passkey.createdAt, lastUsedAt: passkey.lastUsedAt,
                        revokedAt: passkey.revokedAt)
                }
            let sessions = try await db.raw(
                """
                SELECT id, installation_id, method, device_id, passkey_id, created_at FROM sessions
                WHERE account_id = \(bind: id) AND ended_at IS NULL ORDER BY created_at DESC
                """
            ).all().map { row in
                CustomerRecord.Session(
                    id: try row.decode(column: "id", as: String.self), installationID: try row.decode(column: "installation_id", as: String.self),
                    method: try row.decode(column: "method", as: String.self), deviceID: try row.decode(column: "device_id", as: String?.self),
                    passkeyID: try row.decode(column: "passkey_id", as: String?.self),
                    createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)))
            }
            let payments = try await db.select().columns(BioAuthService.paymentColumns.map { SQLColumn($0) }).from("payments")
                .where("account_id", .equal, id).orderBy("created_at", .descending).limit(20).all()
                .map { CustomerRecord.Payment(try BioAuthService.payment($0).effective(at: now)) }
            return CustomerRecord(
                accountID: id, username: try account.decode(column: "username", as: String.self),
                createdAt: Date(millisecondsSince1970: try account.decode(column: "created_at", as: Int64.self)),
                lockedUntil: time(try account.decode(column: "locked_until", as: Int64?.self)), pinLockedUntil: time(pinLock),
                devices: devices, passkeys: passkeys, sessions: sessions, payments: payments, events: [])
        }
        return record.withEvents(try await service.auditEvents(account: record.accountID, limit: 50).events)
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
            status: String? = nil, payee: String? = nil, from: Date? = nil, until: Date? = nil, minAmountMinor: Int64? = nil,
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
        let service = self.service
        let at = service.now
        return try await service.database.transaction { db in
            var query = db.select().columns(BioAuthService.paymentColumns.map { SQLColumn($0) }).from("payments")
            if let status { query = query.where(BioAuthService.statusCondition(status, now: at.millisecondsSince1970)) }
            if let payee = search.payee?.trimmingCharacters(in: .whitespaces), !payee.isEmpty {
                guard payee.utf8.count <= 64 else { throw SupportError.invalid("a payee is at most 64 bytes") }
                // LIKE's wildcards in what the operator typed are matched literally.
                let escaped = payee.lowercased().replacingOccurrences(of: "\\", with: "\\\\")
                    .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
                query = query.where("(payee_id = \(bind: payee) OR LOWER(payee_name) LIKE \(bind: "%" + escaped + "%") ESCAPE '\\')" as SQLQueryString)
            }
            if let from = search.from { query = query.where("created_at", .greaterThanOrEqual, from.millisecondsSince1970) }
            if let until = search.until { query = query.where("created_at", .lessThan, until.millisecondsSince1970) }
            if let minimum = search.minAmountMinor { query = query.where("amount_minor", .greaterThanOrEqual, minimum) }
            if let maximum = search.maxAmountMinor { query = query.where("amount_minor", .lessThanOrEqual, maximum) }
            let payments = try await query.orderBy("created_at", .descending).orderBy("id", .descending).limit(limit).all()
                .map { try BioAuthService.payment($0).effective(at: at) }
            var usernames: [String: String] = [:]
            let accounts = Array(Set(payments.map(\.accountID)))
            if !accounts.isEmpty {
                for row in try await db.select().columns("id", "username").from("accounts").where("id", .in, accounts).all() {
                    usernames[try row.decode(column: "id", as: String.self)] = try row.decode(column: "username", as: String.self)
                }
            }
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
        let now = service.now.millisecondsSince1970
        let hour: Int64 = 3_600_000
        let first = (now / hour - Int64(hours - 1)) * hour
        return try await service.database.transaction { db in
            var buckets = (0..<hours).map { Overview.Hour(start: Date(millisecondsSince1970: first + Int64($0) * hour)) }
            let rows = try await db.raw(
                """
                SELECT (occurred_at - \(bind: first)) / \(bind: hour) AS bucket, kind, outcome, COUNT(*) AS n FROM audit_events
                WHERE occurred_at >= \(bind: first) AND kind IN ('password_sign_in', 'biometric_sign_in', 'passkey_sign_in') GROUP BY 1, 2, 3
                """
            ).all()
            for row in rows {
                let index = Int(try row.decode(column: "bucket", as: Int64.self))
                guard buckets.indices.contains(index) else { continue }
                let count = try row.decode(column: "n", as: Int.self)
                guard try row.decode(column: "outcome", as: String.self) == "success" else {
                    buckets[index].failures += count
                    continue
                }
                switch try row.decode(column: "kind", as: String.self) {
                case AuditKind.passwordSignIn.rawValue: buckets[index].password += count
                case AuditKind.passkeySignIn.rawValue: buckets[index].passkey += count
                default: buckets[index].biometric += count
                }
            }
            let codes = try await db.raw(
                """
                SELECT code, COUNT(*) AS n FROM audit_events WHERE occurred_at >= \(bind: first) AND outcome = 'failure' AND code IS NOT NULL
                GROUP BY code ORDER BY n DESC, code LIMIT 20
                """
            ).all().map { Overview.CodeCount(code: try $0.decode(column: "code", as: String.self), count: try $0.decode(column: "n", as: Int.self)) }
            return Overview(hours: buckets, failuresByCode: codes)
        }
    }

    // MARK: Acting

    /// Revokes the device: its key is refused from now on and its sessions end. Nothing changes for a revoked device.
    public func revokeDevice(_ deviceID: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let service = self.service
        try await service.commit { db -> Void in
            guard Validation.isIssuedID(deviceID),
                let device = try await service.devicesQuery(on: db).where("id", .equal, deviceID).first().map(service.device)
            else { throw SupportError.notFound("no device \(deviceID)") }
            guard device.revokedAt == nil else { return }
            try await service.revoke(device, keeping: nil, by: action, on: db)
        }
    }

    /// Revokes the passkey: it signs in no more and the sessions it started end. Nothing changes for a revoked passkey.
    public func revokePasskey(_ passkeyID: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let service = self.service
        try await service.commit { db -> Void in
            guard Validation.isIssuedID(passkeyID),
                let passkey = try await service.passkeyRows(on: db).where("id", .equal, passkeyID).first().map(service.passkey)
            else { throw SupportError.notFound("no passkey \(passkeyID)") }
            guard passkey.revokedAt == nil else { return }
            try await service.revoke(passkey, keeping: nil, by: action, on: db)
        }
    }

    /// Ends every live session of the customer (they sign in again; their devices stay registered).
    public func endSessions(customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let service = self.service
        try await service.commit { db -> Void in
            try await service.endSessions(account: account, reason: "ended_by_operator", on: db)
            try await service.audit(.sessionsEnded, succeeded: true, account: account, operator: action, on: db)
        }
    }

    /// Lifts a password lock (and the count of wrong passwords).
    public func unlockAccount(customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let service = self.service
        try await service.commit { db -> Void in
            try await db.raw("UPDATE accounts SET failed_password_attempts = 0, locked_until = NULL WHERE id = \(bind: account)").run()
            try await service.audit(.accountUnlocked, succeeded: true, account: account, operator: action, on: db)
        }
    }

    /// Lifts a PIN lock (and the count of wrong PINs).
    public func clearPINLock(customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let service = self.service
        try await service.commit { db -> Void in
            try await db.raw("UPDATE payment_pins SET failed_attempts = 0, locked_until = NULL WHERE account_id = \(bind: account)").run()
            try await service.audit(.paymentPINUnlocked, succeeded: true, account: account, operator: action, on: db)
        }
    }

    /// Cancels a pending payment (`payment.cancelled` is sent as when the customer cancels).
    public func cancelPayment(_ paymentID: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let service = self.service
        try await service.commit { db -> Void in
            guard Validation.isIssuedID(paymentID),
                let row = try await db.select().columns(BioAuthService.paymentColumns.map { SQLColumn($0) }).from("payments")
                    .where("id", .equal, paymentID).first()
            else { throw SupportError.notFound("no payment \(paymentID)") }
            let payment = try BioAuthService.payment(row)
            let status = payment.effective(at: service.now).status
            guard status == .pending else { throw SupportError.invalid("the payment is \(status.rawValue), not pending") }
            _ = try await service.cancel(payment, session: nil, by: action, on: db)
        }
    }

    // MARK: Administering (admins only)

    /// Makes an operator on behalf of the signed-in admin `by`; audited with the admin's id.
    public func createOperator(name: String, role: OperatorRole, password: String, by admin: Operator) async throws -> Operator {
        try Self.requireAdmin(admin)
        let service = self.service
        let operators = Operators(service: service)
        // Hashed before the unit of work; stored and audited in one, so neither stands without the other.
        let new = try await operators.prepare(name: name, role: role, password: password)
        return try await service.commit { db in
            let made = try await operators.insert(new, createdBy: admin.id, on: db)
            try await service.audit(
                .operatorCreated, succeeded: true, account: nil, operator: SupportAction(operatorID: admin.id, reason: "\(made.id) \(role.rawValue)"), on: db)
            return made
        }
    }

    /// Disables an operator on behalf of `admin` (not themself); their console sessions end at their next request.
    public func disableOperator(name: String, by admin: Operator) async throws {
        try Self.requireAdmin(admin)
        guard name != admin.name else { throw SupportError.invalid("an admin cannot disable themself") }
        let service = self.service
        let operators = Operators(service: service)
        try await service.commit { db -> Void in
            try await operators.disable(name: name, on: db)
            try await service.audit(.operatorDisabled, succeeded: true, account: nil, operator: SupportAction(operatorID: admin.id, reason: name), on: db)
        }
    }

    /// Registers or renames a payee on behalf of `admin`, recorded as registered by the admin's id and audited.
    public func registerPayee(id: String, name: String, verified: Bool, by admin: Operator) async throws {
        try Self.requireAdmin(admin)
        let service = self.service
        let now = service.now
        do {
            try await service.commit { db -> Void in
                _ = try await PayeeRegistry.register(
                    id: id, name: name, verification: verified ? "verified" : "unverified", by: admin.id, at: now, on: db)
                try await service.audit(.payeeRegistered, succeeded: true, account: nil, operator: SupportAction(operatorID: admin.id, reason: id), on: db)
            }
        } catch let error as APIError {
            throw SupportError.invalid(error.detail)
        }
    }

    /// Disables a service client on behalf of `admin`: its secrets and tokens stop working at once. Audited.
    public func disableServiceClient(_ clientID: String, by admin: Operator) async throws {
        try Self.requireAdmin(admin)
        let service = self.service
        let clients = ServiceClients(database: service.database, clock: service.clock, random: service.random)
        do {
            try await service.commit { db -> Void in
                try await clients.disable(clientID: clientID, on: db)
                try await service.audit(
                    .serviceClientDisabled, succeeded: true, account: nil, client: clientID, operator: SupportAction(operatorID: admin.id, reason: clientID),
                    on: db)
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
        try await service.database.transaction { db in
            try await db.raw("SELECT id, client_id, url, events FROM webhook_endpoints WHERE deleted_at IS NULL ORDER BY created_at, id").all().map { row in
                WebhookEndpointSummary(
                    id: try row.decode(column: "id", as: String.self), clientID: try row.decode(column: "client_id", as: String.self),
                    url: try row.decode(column: "url", as: String.self),
                    events: try row.decode(column: "events", as: String.self).split(separator: " ").map(String.init))
            }
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
        let found = try await service.database.transaction { db in
            try await db.raw("SELECT id, role, disabled_at FROM operators WHERE name = \(bind: name)").first()
        }
        guard let found, try found.decode(column: "disabled_at", as: Int64?.self) == nil else {
            throw SupportError.notAllowed("no enabled operator named \(name)")
        }
        guard let role = OperatorRole(rawValue: try found.decode(column: "role", as: String.self)), role != .viewer else {
            throw SupportError.notAllowed("\(name) is a viewer: viewers only read")
        }
        return SupportAction(operatorID: try found.decode(column: "id", as: String.self), reason: reason)
    }

    /// The account id of the customer with this username or account id.
    func accountID(_ customer: String) async throws -> String {
        guard (1...64).contains(customer.utf8.count),
            let id = try await service.database.transaction({ db in
                try await db.raw("SELECT id FROM accounts WHERE id = \(bind: customer) OR username = \(bind: customer)").first()?
                    .decode(column: "id", as: String.self)
            })
        else { throw SupportError.notFound("no customer with the username or account id \(customer)") }
        return id
    }
}

extension CustomerRecord.Payment {
    /// The payment as support sees it (its amount is nil only for a currency no longer known).
    init(_ payment: PaymentInfo) {
        self.init(
            id: payment.id, amount: Currency(code: payment.currency).map { Money(minorUnits: payment.amountMinor, currency: $0) },
            payeeID: payment.payeeID, payeeName: payment.payeeName, status: payment.status.rawValue, createdAt: payment.createdAt)
    }
}

extension CustomerRecord {
    fileprivate func withEvents(_ events: [AuditEvent]) -> CustomerRecord {
        CustomerRecord(
            accountID: accountID, username: username, createdAt: createdAt, lockedUntil: lockedUntil, pinLockedUntil: pinLockedUntil,
            devices: devices, passkeys: passkeys, sessions: sessions, payments: payments,
            events: events.map { event in
                Event(
                    occurredAt: event.occurredAt, kind: event.kind, succeeded: event.succeeded, code: event.code, operatorID: event.operatorID,
                    reason: event.reason)
            })
    }
}
