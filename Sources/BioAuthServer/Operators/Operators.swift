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
    /// When the operator was made.
    public let createdAt: Date
    /// The operator who made this one, or nil for the command line.
    public let createdBy: String?
    /// When the operator was disabled, if it was.
    public let disabledAt: Date?
    /// Whether they must choose a new password before anything else: a new operator, and one whose password an admin
    /// reset, still holds a password someone else chose.
    public let mustChangePassword: Bool
    /// When they last signed in to the console (nil: never, or before this was recorded).
    public var lastSignInAt: Date? = nil
}

/// Why an operator sign-in or change was refused.
public enum OperatorError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The name, password or code is wrong (which one is not said).
    case invalidCredentials
    /// Too many failures for this name from this address (or from everywhere); sign-in is refused until then.
    case locked(until: Date)
    /// The operator is disabled.
    case disabled
    /// A name that is not 1-64 of `A-Z a-z 0-9 . _ -`, taken, or unknown; a password shorter than 12 characters or longer
    /// than 72 bytes, or the same as the one it replaces.
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
/// An operator whose password someone else chose (a new one, or after an admin's reset) first chooses their own
/// (``SignIn/changePassword(_:)``, ``choosePassword(operatorID:newPassword:keepingSession:)``).
///
/// An enrolled operator's password and code are checked together: a wrong password, a wrong code and a missing code get
/// one answer, so the password cannot be confirmed without the second factor. A code is accepted in the step before, at
/// or after the current one, and never twice: a code seen once is refused afterwards.
///
/// Failures lock sign-in by name and client address: five in a window of 15 minutes from one address lock that name for
/// that address until the window ends, and ``maxFailuresPerName`` from all addresses lock the name everywhere (a slower
/// backstop against guessing from many addresses). So a flood from one address cannot lock an operator out who signs
/// in from another, and a name that does not exist is counted and locked exactly like one that does: the answers never
/// tell which names exist.
public struct Operators: Sendable {
    /// What ``signIn(name:password:code:address:)`` asks for next.
    public enum SignIn: Sendable, Equatable {
        /// The password was right and no second factor is enrolled yet: show `secret` (the key to type into an
        /// authenticator app, base32) and `uri` (the same as an `otpauth://` URI, for a QR code), then sign in again with a
        /// code from the app to enroll it. `afterWrongCode`: the code given was wrong, and the key is the one shown before.
        case enrollTOTP(secret: String, uri: String, afterWrongCode: Bool)
        /// The credentials were right, and the operator must choose their own password before anything else
        /// (``Operators/choosePassword(operatorID:newPassword:keepingSession:)``); a new operator enrolls their second factor afterwards.
        case changePassword(Operator)
        /// Signed in.
        case signedIn(Operator)
    }

    /// Failures from one address, in one window, that lock a name for that address.
    public static let maxFailures = 5
    /// Failures from all addresses, in one window, that lock a name everywhere.
    public static let maxFailuresPerName = 50
    /// The window failures are counted in; a lock lasts until its window ends.
    public static let lockDuration: TimeInterval = 15 * 60

    let database: any DatabaseExecutor
    let clock: any WallClock
    let random: any RandomSource
    /// The issuer authenticator apps show beside the operator's name (``ServerConfiguration/consoleTOTPIssuer``).
    let issuer: String
    private let hashing: Hashing
    /// Seals the TOTP keys at rest (the server's, from the PIN key file); nil for the command line, which never signs in.
    private let totpKeys: SecretSealer?
    /// Audits an operator's own password changes (the server's); nil for the command line.
    private let recorder: ChangeRecorder?

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
        self.issuer = ServerConfiguration().consoleTOTPIssuer
        self.hashing = .inline(cost: UInt8(clamping: bcryptCost))
        self.totpKeys = nil
        self.recorder = nil
    }

    /// The operators of `service`'s database; bcrypt runs on its hashing threads at the server's cost, and TOTP keys are
    /// sealed under its PIN key file.
    init(service: BioAuthService) {
        self.database = service.database
        self.clock = service.clock
        self.random = service.random
        self.issuer = service.configuration.consoleTOTPIssuer
        self.hashing = .threads(service.passwords)
        self.totpKeys = service.sealers.operatorTOTPKeys
        self.recorder = service.recorder
    }

    /// The sealer of TOTP keys, which signing in needs.
    private func sealer() throws -> SecretSealer {
        guard let totpKeys else { throw ConfigurationError(message: "an operator signs in through the server, which holds the PIN key file") }
        return totpKeys
    }

    /// Whether `stored` is a TOTP key stored in clear by an earlier version (32 characters of base32).
    static func isLegacyTOTPKey(_ stored: String) -> Bool {
        stored.utf8.count == 32 && stored.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x32...0x37).contains($0) }
    }

    /// The TOTP key `stored` holds for operator `id`: opened, or as it is when stored in clear by an earlier version;
    /// nil when it does not open (sealed under another key file, or damaged).
    private func openTOTPKey(_ stored: String?, for id: String) throws -> String? {
        guard let stored else { return nil }
        return Self.isLegacyTOTPKey(stored) ? stored : try sealer().open(stored, for: id)
    }

    /// Seals every TOTP key an earlier version stored in clear (run at start-up; harmless when several instances run it at
    /// once). Returns how many operators had one.
    @discardableResult
    func sealLegacyTOTPKeys() async throws -> Int {
        let sealer = try sealer()
        return try await database.transaction { db in
            var count = 0
            for row in try await db.operators.totpKeys() {
                func sealed(_ stored: String?) throws -> String? {
                    guard let stored, Self.isLegacyTOTPKey(stored) else { return stored }
                    return try sealer.seal(stored, for: row.id)
                }
                let secret = try sealed(row.secret)
                let pending = try sealed(row.pending)
                guard secret != row.secret || pending != row.pending else { continue }
                try await db.operators.replaceTOTPKeys(row.id, secret: secret, pending: pending, old: (row.secret, row.pending))
                count += 1
            }
            return count
        }
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

    /// Makes an operator. The password is at least 12 characters (and at most 72 bytes, bcrypt's limit). With
    /// `mustChangePassword` (the default) they choose their own at their first sign-in, before they enroll their second
    /// factor: whoever chose this one cannot sign in as them afterwards. False only when the operator typed it themself.
    public func create(
        name: String,
        role: OperatorRole,
        password: String,
        createdBy: String? = nil,
        mustChangePassword: Bool = true
    ) async throws -> Operator {
        let new = try await prepare(name: name, role: role, password: password, mustChangePassword: mustChangePassword)
        let recorder = self.recorder ?? .outsideTheServer(database: database, clock: clock, random: random)
        // Stored and audited in one unit of work, as the console's admins' are: "Changes to operators" lists it.
        return try await database.transaction { db in
            let made = try await insert(new, createdBy: createdBy, on: db)
            let action =
                createdBy.map { SupportAction(operatorID: $0, reason: "\(made.id) \(role.rawValue)") }
                ?? .commandLine("\(made.id) \(role.rawValue)")
            try await recorder.audit(.operatorCreated, succeeded: true, account: nil, operator: action, on: db)
            return made
        }
    }

    /// An operator checked and hashed, not stored yet: the slow part of ``create(name:role:password:createdBy:)``, done
    /// before any transaction.
    struct NewOperator: Sendable {
        let id: String
        let name: String
        let role: OperatorRole
        let hash: String
        let createdAt: Date
        let mustChangePassword: Bool
    }

    func prepare(name: String, role: OperatorRole, password: String, mustChangePassword: Bool = true) async throws -> NewOperator {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ ServiceClients.nameBytes.contains($0) }) else {
            throw OperatorError.invalid("an operator's name must be 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        try Self.checkPassword(password)
        return NewOperator(
            id: "op_" + random.newRandomID(),
            name: name,
            role: role,
            hash: try await hash(password),
            createdAt: clock.now,
            mustChangePassword: mustChangePassword
        )
    }

    /// Refuses a password shorter than 12 characters or longer than 72 bytes (bcrypt's limit).
    static func checkPassword(_ password: String) throws {
        guard password.count >= 12, password.utf8.count <= 72 else {
            throw OperatorError.invalid("an operator's password must be at least 12 characters and at most 72 bytes")
        }
    }

    /// A password hashed for storing, checked first (``checkPassword(_:)``): the slow part of a reset, done before any
    /// unit of work.
    func hashed(_ password: String) async throws -> String {
        try Self.checkPassword(password)
        return try await hash(password)
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
            createdAt: new.createdAt,
            createdBy: createdBy,
            disabledAt: nil,
            mustChangePassword: new.mustChangePassword
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

    /// One step of signing in from client `address`: the password, then (with `code`) the TOTP code. Without an enrolled
    /// second factor, each right password gives a new secret to enroll (the one given before stops working), and the next
    /// sign-in with the password and a code from it enrolls it. Every failure counts toward the locks of `name` (see the
    /// type's description); a success does not reset them: they end with their window.
    ///
    /// Only the server's operators (`init(service:)`, which hold the PIN key that seals TOTP keys) sign in; the command
    /// line's throw `ConfigurationError`.
    public func signIn(name: String, password: String, code: String?, address: String? = nil) async throws -> SignIn {
        let now = clock.now
        let buckets = Self.failureBuckets(name: name, address: address)
        let window = Int64(Self.lockDuration * 1000)
        // Locked names are refused before anything is looked up, whether they exist or not.
        let lockedUntil = try await database.transaction { db -> Int64? in
            let fromHere = try await db.rateLimits.hits(buckets.address, now: now.millisecondsSince1970, window: window)
            let everywhere = try await db.rateLimits.hits(buckets.name, now: now.millisecondsSince1970, window: window)
            if let fromHere, fromHere.hits >= Int64(Self.maxFailures) { return fromHere.windowStart + window }
            if let everywhere, everywhere.hits >= Int64(Self.maxFailuresPerName) { return everywhere.windowStart + window }
            return nil
        }
        if let lockedUntil { throw OperatorError.locked(until: Date(millisecondsSince1970: lockedUntil)) }
        let found = try await database.transaction { db in try await db.operators.credentials(name: name) }
        // A name that does not exist costs a bcrypt check too, so the time does not say which names exist, and it counts
        // as a failure like any other.
        guard let found else {
            _ = try await verify(password, hash: nil)
            throw try await fail(buckets, now: now)
        }
        let account = found.operator
        guard account.disabledAt == nil else { throw OperatorError.disabled }
        guard try await verify(password, hash: found.passwordHash) else { throw try await fail(buckets, now: now) }
        let enrolled = try openTOTPKey(found.totpSecret, for: account.id)
        let pending = try openTOTPKey(found.pendingTOTPSecret, for: account.id)
        // A key that does not open (another key file, damage) is not enrolled: refused like a wrong code, and logged by
        // the server's start-up check of the key file.
        if found.totpSecret != nil, enrolled == nil { throw try await fail(buckets, now: now) }
        let lastStep = found.lastStep ?? -1
        // Enrolled: the code is part of the credentials; without it the answer is a wrong password's.
        if enrolled != nil, code == nil { throw try await fail(buckets, now: now) }
        // Not enrolled and still holding a password someone else chose: that password only lets them choose their own,
        // before a key is shown.
        if enrolled == nil, account.mustChangePassword { return .changePassword(account) }
        guard let secret = enrolled ?? pending, let code else {
            let shown = try await newEnrollment(account)
            return .enrollTOTP(secret: shown.secret, uri: shown.uri, afterWrongCode: false)
        }
        guard let step = Self.matchingStep(code, secret: secret, at: now), step > lastStep else {
            let refusal = try await fail(buckets, now: now)
            // A wrong code while enrolling, with the right password: the same key again, so that the operator can fix a
            // typing mistake (the failure counts all the same).
            if enrolled == nil, refusal == .invalidCredentials {
                let shown = enrollment(secret, for: account)
                return .enrollTOTP(secret: shown.secret, uri: shown.uri, afterWrongCode: true)
            }
            throw refusal
        }
        let sealed = try sealer().seal(secret, for: account.id)
        // The step is compared again where it is stored: of two sign-ins racing with one code, one wins.
        guard
            try await database.transaction({ db in
                try await db.operators.recordSignIn(account.id, secret: sealed, step: step, at: now.millisecondsSince1970)
            })
        else {
            throw try await fail(buckets, now: now)
        }
        let signedIn = Operator(
            id: account.id,
            name: account.name,
            role: account.role,
            totpEnrolled: true,
            createdAt: account.createdAt,
            createdBy: account.createdBy,
            disabledAt: nil,
            mustChangePassword: account.mustChangePassword,
            lastSignInAt: now
        )
        return account.mustChangePassword ? .changePassword(signedIn) : .signedIn(signedIn)
    }

    /// A new key to enroll for `account`, replacing the one shown before: a key read over someone's shoulder stops
    /// working at the operator's next visit, and only a code from the key shown in the latest visit enrolls.
    func newEnrollment(_ account: Operator) async throws -> (secret: String, uri: String) {
        let secret = Self.newTOTPSecret(random)
        let sealed = try sealer().seal(secret, for: account.id)
        try await database.transaction { db in try await db.operators.setPendingTOTPSecret(account.id, secret: sealed) }
        return enrollment(secret, for: account)
    }

    /// What an authenticator app needs of `secret`: the key as typed (base32) and the `otpauth://` URI for a QR code,
    /// labelled with the issuer and the operator's name.
    private func enrollment(_ secret: String, for account: Operator) -> (secret: String, uri: String) {
        let uri = TOTP(secret: secret).createAuthenticatorURL(label: "\(issuer):\(account.name)", issuer: issuer)
        let typed = URLComponents(string: uri)?.queryItems?.first { $0.name == "secret" }?.value ?? ""
        return (typed, uri)
    }

    /// Stores `newPassword` for operator `operatorID`, who must change theirs (a new operator, or after an admin's reset),
    /// and returns them as they are now. Their sign-in proved who they are (``SignIn/changePassword(_:)``); their console
    /// sessions end, but the one whose token's hash is `keepingSession`. Refused when they need not change it, or when it
    /// is the old one again.
    public func choosePassword(operatorID: String, newPassword: String, keepingSession: String? = nil) async throws -> Operator {
        let found = try await database.transaction { db in try await db.operators.credentials(id: operatorID) }
        guard let found, found.operator.disabledAt == nil, found.operator.mustChangePassword else {
            throw OperatorError.invalid("there is no password to choose")
        }
        return try await replacePassword(found, with: newPassword, keepingSession: keepingSession, reason: "chosen at sign-in")
    }

    /// Changes the signed-in operator's own password: the current one and a code from their authenticator app prove it is
    /// them (a failure counts toward their sign-in locks, as at sign-in). Their other console sessions end; the one whose
    /// token's hash is `keepingSession` stays.
    public func changePassword(
        operatorID: String,
        current: String,
        code: String,
        newPassword: String,
        address: String? = nil,
        keepingSession: String? = nil
    ) async throws {
        let now = clock.now
        let found = try await database.transaction { db in try await db.operators.credentials(id: operatorID) }
        guard let found, found.operator.disabledAt == nil else { throw OperatorError.disabled }
        let buckets = Self.failureBuckets(name: found.operator.name, address: address)
        guard try await verify(current, hash: found.passwordHash), let secret = try openTOTPKey(found.totpSecret, for: operatorID),
            let step = Self.matchingStep(code, secret: secret, at: now), step > (found.lastStep ?? -1)
        else { throw try await fail(buckets, now: now) }
        // The code's step is recorded with the new password, in one unit of work: a new password refused leaves nothing
        // changed.
        _ = try await replacePassword(found, with: newPassword, keepingSession: keepingSession, step: step, reason: "changed by the operator")
    }

    /// Stores `newPassword` (checked, and not the current one), with `step` as the last one a code was accepted in when a
    /// code proved the change, and ends the operator's other sessions; nothing is stored when the password is refused.
    private func replacePassword(
        _ found: OperatorsTable.Credentials,
        with newPassword: String,
        keepingSession: String?,
        step: Int64? = nil,
        reason: String
    ) async throws -> Operator {
        try Self.checkPassword(newPassword)
        guard try await !verify(newPassword, hash: found.passwordHash) else {
            throw OperatorError.invalid("the new password must differ from the current one")
        }
        let hash = try await hash(newPassword)
        let at = clock.now.millisecondsSince1970
        let account = found.operator
        let recorder = self.recorder
        try await database.transaction { db in
            try await db.operators.setPassword(account.id, hash: hash, mustChange: false)
            if let step, try await !db.operators.recordStep(account.id, step: step) { throw OperatorError.invalidCredentials }
            try await db.operators.endSessions(operatorID: account.id, keeping: keepingSession, at: at)
            try await recorder?.audit(
                .operatorPasswordChanged,
                succeeded: true,
                account: nil,
                operator: SupportAction(operatorID: account.id, reason: reason),
                on: db
            )
        }
        return Operator(
            id: account.id,
            name: account.name,
            role: account.role,
            totpEnrolled: account.totpEnrolled,
            createdAt: account.createdAt,
            createdBy: account.createdBy,
            disabledAt: nil,
            mustChangePassword: false
        )
    }

    // MARK: Internals

    /// The rate-limit buckets that count `name`'s failures: from `address`, and from everywhere. Names are counted as
    /// typed, lowercased (a name that does not exist has buckets too).
    static func failureBuckets(name: String, address: String?) -> (address: String, name: String) {
        let key = String(name.lowercased().prefix(128))
        return ("operator-failures:\(key)@\(address ?? "unknown")", "operator-failures:\(key)")
    }

    /// Counts a failure in both buckets; returns the error to throw: the lock when this failure reached a limit.
    private func fail(_ buckets: (address: String, name: String), now: Date) async throws -> OperatorError {
        let window = Int64(Self.lockDuration * 1000)
        let at = now.millisecondsSince1970
        let lockedUntil = try await database.transaction { db -> Int64? in
            let fromHere = try await db.rateLimits.hit(buckets.address, now: at, window: window)
            let everywhere = try await db.rateLimits.hit(buckets.name, now: at, window: window)
            if fromHere.hits >= Int64(Self.maxFailures) { return fromHere.windowStart + window }
            if everywhere.hits >= Int64(Self.maxFailuresPerName) { return everywhere.windowStart + window }
            return nil
        }
        return lockedUntil.map { .locked(until: Date(millisecondsSince1970: $0)) } ?? .invalidCredentials
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
