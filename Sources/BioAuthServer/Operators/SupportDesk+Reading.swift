import BioAuthCore
import CoreMetrics
import Foundation
import Logging
import SQLKit

/// What support reads: a customer's record, customer and payment search, one payment's history, the overview.
extension SupportDesk {

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
                    revokedAt: device.revokedAt,
                    boundBy: device.boundBy.rawValue,
                    coolingOffUntil: current(device.coolingOffUntil)
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
            let live = try await db.sessions.live(account: id)
            let starts = try await db.auditEvents.sessionStarts(account: id, sessions: live.map(\.id))
            let sessions = live.map { session in
                CustomerRecord.Session(
                    id: session.id,
                    installationID: session.installationID,
                    method: session.method,
                    deviceID: session.deviceID,
                    passkeyID: session.passkeyID,
                    createdAt: session.createdAt,
                    clientAddress: starts[session.id]?.address,
                    userAgent: starts[session.id]?.userAgent
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
            /// Sign-ins a service client asked for and the customer approved on the phone (OpenID CIBA).
            public var ciba = 0
            /// Sign-ins on a web page whose QR code the customer's phone scanned and approved.
            public var qr = 0
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
        /// What became of the requests to approve on the phone that came one way: a service client's (CIBA), or a web
        /// page's QR code.
        public struct Approvals: Sendable, Equatable {
            /// Requests made (for a QR code: scanned).
            public var requested = 0
            /// Approved by the customer.
            public var approved = 0
            /// Denied by the customer, or a wrong number picked.
            public var denied = 0
            /// Unanswered in time.
            public var expired = 0
        }
        /// The hours, oldest first; the last is the current one.
        public let hours: [Hour]
        /// Failures (any audited kind) by problem code, most first, at most 20.
        public let failuresByCode: [CodeCount]
        /// Over the same hours, the requests service clients made (OpenID CIBA).
        public var cibaApprovals = Approvals()
        /// Over the same hours, the web page's QR codes that phones scanned.
        public var qrApprovals = Approvals()
    }

    /// Sign-ins by method (device key, passkey, password, approved on the phone for a service client or a scanned QR
    /// code), failures by problem code, and what became of approval requests, over the last `hours` (1-168), counted by
    /// the database.
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
                case AuditKind.approvalSignIn.rawValue where count.viaClient: buckets[count.bucket].ciba += count.count
                case AuditKind.approvalSignIn.rawValue: buckets[count.bucket].qr += count.count
                default: buckets[count.bucket].biometric += count.count
                }
            }
            let codes = try await db.auditEvents.failureCounts(since: first, limit: 20).map { Overview.CodeCount(code: $0.code, count: $0.count) }
            var overview = Overview(hours: buckets, failuresByCode: codes)
            for count in try await db.auditEvents.approvalCounts(since: first) {
                let channel: WritableKeyPath<Overview, Overview.Approvals> = count.viaClient ? \.cibaApprovals : \.qrApprovals
                switch count.kind {
                case AuditKind.approvalRequested.rawValue: overview[keyPath: channel].requested += count.count
                case AuditKind.approvalApproved.rawValue: overview[keyPath: channel].approved += count.count
                case AuditKind.approvalDenied.rawValue: overview[keyPath: channel].denied += count.count
                default: overview[keyPath: channel].expired += count.count
                }
            }
            return overview
        }
    }
}
