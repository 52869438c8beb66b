import BioAuthCore
import Foundation
import HummingbirdBcrypt
import HummingbirdOTP
import SQLKit

/// What an operator (the bank's support staff, not a customer) may do.
public enum OperatorRole: String, Sendable, CaseIterable {
    /// Reads customers, devices, sessions, payments and the audit log.
    case viewer
    /// Also revokes devices, ends sessions, unlocks accounts and PIN locks, cancels pending payments.
    case support
    /// Also manages operators, service clients, payees and webhook endpoints.
    case admin
}

/// An operator as listed: never the password hash or the TOTP secret.
public struct Operator: Sendable, Equatable {
    /// `op_` and a UUID: what audit events name.
    public let id: String
    /// The sign-in name.
    public let name: String
    /// What the operator may do.
    public let role: OperatorRole
    /// Whether the TOTP second factor is enrolled (it is at the first sign-in).
    public let totpEnrolled: Bool
    /// Until when sign-in is refused after repeated failures, if it is.
    public let lockedUntil: Date?
    /// When the operator was made.
    public let createdAt: Date
    /// The operator who made this one, or nil for the command line.
    public let createdBy: String?
    /// When the operator was disabled, if it was.
    public let disabledAt: Date?
}

/// Why an operator sign-in or change was refused.
public enum OperatorError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The name, password or code is wrong (which one is not said).
    case invalidCredentials
    /// Too many failures in a row; sign-in is refused until then.
    case locked(until: Date)
    /// The operator is disabled.
    case disabled
    /// A name that is not 1-64 of `A-Z a-z 0-9 . _ -`, taken, or unknown; a password shorter than 12 characters or longer
    /// than 72 bytes.
    case invalid(String)

    /// What went wrong, for the command line and logs.
    public var description: String {
        switch self {
        case .invalidCredentials: "the name, password or code is wrong"
        case .locked(let until): "too many failed sign-ins; locked until \(until)"
        case .disabled: "the operator is disabled"
        case .invalid(let message): message
        }
    }
}

/// The bank's operators: made with `bioauth admin operator create` (the first one) and signing in with a password and a
/// TOTP second factor (RFC 6238: 6 digits, 30 s, SHA-1, as authenticator apps expect), enrolled at the first sign-in.
///
/// Five failures in a row (a wrong password or a wrong code) lock sign-in for 15 minutes. A code is accepted in the
/// step before, at or after the current one, and never twice: a code seen once is refused afterwards.
public struct Operators: Sendable {
    /// What ``signIn(name:password:code:)`` asks for next.
    public enum SignIn: Sendable, Equatable {
        /// The password was right and no second factor is enrolled yet: show `secret` (the key to type into an
        /// authenticator app, base32) and `uri` (the same as an `otpauth://` URI, for a QR code), then sign in again with a
        /// code from the app to enroll it.
        case enrollTOTP(secret: String, uri: String)
        /// The password was right; send a code from the authenticator app.
        case codeRequired
        /// Signed in.
        case signedIn(Operator)
    }

    /// Failures in a row that lock sign-in.
    public static let maxFailures = 5
    /// How long sign-in stays locked.
    public static let lockDuration: TimeInterval = 15 * 60

    let database: any DatabaseExecutor
    let clock: any WallClock
    let random: any RandomSource
    private let hashing: Hashing

    /// Where bcrypt runs.
    private enum Hashing: Sendable {
        /// On the calling task, at this cost: the command line, where nothing else waits for the thread.
        case inline(cost: UInt8)
        /// On the server's hashing threads, so that a console sign-in never holds a thread that requests need.
        case threads(PasswordHasher)
    }

    /// The operators in `database`; passwords hashed with bcrypt at `bcryptCost`, on the calling task.
    public init(
        database: any DatabaseExecutor,
        clock: any WallClock = SystemClock(),
        random: any RandomSource = SystemRandomSource(),
        bcryptCost: Int = 12
    ) {
        self.database = database
        self.clock = clock
        self.random = random
        self.hashing = .inline(cost: UInt8(clamping: bcryptCost))
    }

    /// The operators of `service`'s database; bcrypt runs on its hashing threads at the server's cost.
    init(service: BioAuthService) {
        self.database = service.database
        self.clock = service.clock
        self.random = service.random
        self.hashing = .threads(service.passwords)
    }

    private func hash(_ password: String) async throws -> String {
        switch hashing {
        case .inline(let cost): Bcrypt.hash(password, cost: cost)
        case .threads(let passwords): try await passwords.hash(password)
        }
    }

    /// Whether `password` matches `hash`; with `hash` nil (no such operator), the same work, and false.
    private func verify(_ password: String, hash: String?) async throws -> Bool {
        switch hashing {
        case .inline(let cost):
            guard let hash else {
                _ = Bcrypt.hash(password, cost: cost)
                return false
            }
            return Bcrypt.verify(password, hash: hash)
        case .threads(let passwords):
            return try await passwords.verify(password, hash: hash)
        }
    }

    /// Makes an operator. The password is at least 12 characters (and at most 72 bytes, bcrypt's limit).
    public func create(name: String, role: OperatorRole, password: String, createdBy: String? = nil) async throws -> Operator {
        let new = try await prepare(name: name, role: role, password: password)
        return try await database.transaction { db in try await insert(new, createdBy: createdBy, on: db) }
    }

    /// An operator checked and hashed, not stored yet: the slow part of ``create(name:role:password:createdBy:)``, done
    /// before any transaction.
    struct NewOperator: Sendable {
        let id: String
        let name: String
        let role: OperatorRole
        let hash: String
        let createdAt: Date
    }

    func prepare(name: String, role: OperatorRole, password: String) async throws -> NewOperator {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ ServiceClients.nameBytes.contains($0) }) else {
            throw OperatorError.invalid("an operator's name must be 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        guard password.count >= 12, password.utf8.count <= 72 else {
            throw OperatorError.invalid("an operator's password must be at least 12 characters and at most 72 bytes")
        }
        return NewOperator(
            id: "op_" + random.newRandomID(),
            name: name,
            role: role,
            hash: try await hash(password),
            createdAt: clock.now
        )
    }

    /// Stores `new` in the caller's unit of work (an admin's action audits in the same one).
    func insert(_ new: NewOperator, createdBy: String?, on db: any SQLDatabase) async throws -> Operator {
        guard try await !db.operators.exists(name: new.name) else { throw OperatorError.invalid("there is already an operator named \(new.name)") }
        try await db.operators.insert(new, createdBy: createdBy)
        return Operator(
            id: new.id,
            name: new.name,
            role: new.role,
            totpEnrolled: false,
            lockedUntil: nil,
            createdAt: new.createdAt,
            createdBy: createdBy,
            disabledAt: nil
        )
    }

    /// Every operator, by name.
    public func list() async throws -> [Operator] {
        try await database.transaction { db in try await db.operators.list() }
    }

    /// Disables an operator: sign-in is refused from now on.
    public func disable(name: String) async throws {
        try await database.transaction { db in try await disable(name: name, on: db) }
    }

    /// ``disable(name:)`` in the caller's unit of work.
    func disable(name: String, on db: any SQLDatabase) async throws {
        let now = clock.now.millisecondsSince1970
        guard try await db.operators.markDisabled(name: name, at: now) else {
            throw OperatorError.invalid("there is no enabled operator named \(name)")
        }
    }

    /// One step of signing in: the password, then (with `code`) the TOTP code. Without an enrolled second factor, the
    /// first right password gives a new secret to enroll, and the next sign-in with the password and a code from it
    /// enrolls it. Every failure counts toward the lock; a success clears the count.
    public func signIn(name: String, password: String, code: String?) async throws -> SignIn {
        let now = clock.now
        let found = try await database.transaction { db in try await db.operators.credentials(name: name) }
        // A name that does not exist costs a bcrypt check too, so the time does not say which names exist.
        guard let found else {
            _ = try await verify(password, hash: nil)
            throw OperatorError.invalidCredentials
        }
        let account = found.operator
        guard account.disabledAt == nil else { throw OperatorError.disabled }
        if let until = account.lockedUntil, until > now { throw OperatorError.locked(until: until) }
        guard try await verify(password, hash: found.passwordHash) else { throw try await fail(account, now: now) }
        let enrolled = found.totpSecret
        let pending = found.pendingTOTPSecret
        let lastStep = found.lastStep ?? -1
        guard let secret = enrolled ?? pending, let code else {
            if enrolled != nil { return .codeRequired }
            let secret = pending ?? Self.newTOTPSecret(random)
            if pending == nil {
                try await database.transaction { db in try await db.operators.setPendingTOTPSecret(account.id, secret: secret) }
            }
            let uri = TOTP(secret: secret).createAuthenticatorURL(label: "BioAuth:\(account.name)", issuer: "BioAuth")
            let typed = URLComponents(string: uri)?.queryItems?.first { $0.name == "secret" }?.value ?? ""
            return .enrollTOTP(secret: typed, uri: uri)
        }
        guard let step = Self.matchingStep(code, secret: secret, at: now), step > lastStep else { throw try await fail(account, now: now) }
        try await database.transaction { db in try await db.operators.recordSignIn(account.id, secret: secret, step: step) }
        return .signedIn(
            Operator(
                id: account.id,
                name: account.name,
                role: account.role,
                totpEnrolled: true,
                lockedUntil: nil,
                createdAt: account.createdAt,
                createdBy: account.createdBy,
                disabledAt: nil
            )
        )
    }

    // MARK: Internals

    /// Counts a failure, locking at ``maxFailures``; returns the error to throw.
    private func fail(_ account: Operator, now: Date) async throws -> OperatorError {
        let until = now.addingTimeInterval(Self.lockDuration)
        // Both expressions read the row as it was: the failure that reaches the limit locks and starts the count again.
        let locked = try await database.transaction { db in
            try await db.operators.recordFailure(account.id, maxFailures: Self.maxFailures, lockUntil: until.millisecondsSince1970)
        }
        return locked == nil ? .invalidCredentials : .locked(until: until)
    }

    /// The time step (unix time / 30) in which `code` is the TOTP of `secret`, looking one step either side of `date`.
    static func matchingStep(_ code: String, secret: String, at date: Date) -> Int64? {
        guard code.utf8.count == 6, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(code) else { return nil }
        let totp = TOTP(secret: secret)
        let step = Int64(date.timeIntervalSince1970 / 30)
        for candidate in [step - 1, step, step + 1] where totp.compute(date: Date(timeIntervalSince1970: Double(candidate) * 30)) == value {
            return candidate
        }
        return nil
    }

    /// A new TOTP secret: 32 characters of the base32 alphabet (160 bits), used as the HMAC key's bytes.
    static func newTOTPSecret(_ random: any RandomSource) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        return String(random.bytes(32).map { alphabet[Int($0) & 31] })
    }
}
