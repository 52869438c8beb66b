import BioAuthCore
import Crypto
import Foundation
import Logging
import SQLKit

/// The server's logic: accounts, sessions, devices, challenges and the audit log, over a
/// ``DatabaseExecutor``. The HTTP layer only translates to and from it.
///
/// Failures are ``APIError``s. A refused security check throws a ``Refusal`` inside ``commit(_:)``, which still
/// commits what it must keep (a consumed challenge, a failed-attempt count, an audit event) before the error
/// is thrown; a malformed request is refused before anything is written.
struct BioAuthService: Sendable {
    let configuration: ServerConfiguration
    let database: any DatabaseExecutor
    let clock: any WallClock
    let random: any RandomSource
    let passwords: PasswordHasher
    let receipts: ReceiptSigner
    /// What is sealed under the key kept outside the database, one sealer per purpose.
    let sealers: Sealers
    /// Seals payment PIN hashes.
    var pins: SecretSealer { sealers.pins }
    /// Seals webhook signing secrets.
    var webhookSecrets: SecretSealer { sealers.webhookSecrets }
    let logger: Logger
    /// What the server counts and times.
    let metrics: ServerMetrics
    /// Keys parsed and challenges issued by this server, for checking signatures before their unit of work.
    let signatureInputs = SignatureInputs()
    /// Set when a graceful shutdown begins: from then on `GET /readyz` answers 503.
    let shutdown = ShutdownState()

    /// Writes audit and outbox events, and the changes the customer and the support desk share. Made once: a unit of
    /// work on the sign-in path audits several times.
    private(set) var recorder: ChangeRecorder

    /// Who asked for the work this service value does (``serving(_:)``): rate limits count its address, audit events
    /// record it. ``Caller/none`` for work no request asked for.
    var caller: Caller { recorder.caller }

    /// This service, working for `caller`: what it audits records the caller, what it limits per address counts the
    /// caller's. The HTTP layer hands each request's caller over this way; nothing else in the rules reads the request.
    func serving(_ caller: Caller) -> BioAuthService {
        var serving = self
        serving.recorder.caller = caller
        return serving
    }

    init(
        configuration: ServerConfiguration,
        database: any DatabaseExecutor,
        clock: any WallClock,
        random: any RandomSource,
        passwords: PasswordHasher,
        receipts: ReceiptSigner,
        sealers: Sealers,
        logger: Logger,
        metrics: ServerMetrics
    ) {
        self.configuration = configuration
        self.database = database
        self.clock = clock
        self.random = random
        self.passwords = passwords
        self.receipts = receipts
        self.sealers = sealers
        self.logger = logger
        self.metrics = metrics
        self.recorder = ChangeRecorder(
            clock: clock,
            random: random,
            dialect: database.dialect,
            webhookRetryWindow: configuration.webhooks.retryWindow,
            logger: logger
        )
    }

    var now: Date { clock.now }

    /// Runs `body` in a transaction. When it throws a ``Refusal``, what it wrote so far is committed (a
    /// used-up challenge, a failure count, an audit event) and the refusal's error is thrown; any other error
    /// rolls everything back. `isolation`: see ``TransactionIsolation``; only the hot units of work listed there ask for
    /// less than `SERIALIZABLE`.
    func commit<R: Sendable>(
        isolation: TransactionIsolation = .serializable,
        _ body: @Sendable @escaping (any SQLDatabase) async throws -> R
    ) async throws -> R {
        try await database.transaction(isolation: isolation) { db -> Outcome<R> in
            do {
                return .success(try await body(db))
            } catch let refusal as Refusal {
                return .failure(refusal.error)
            }
        }.get()
    }

    /// A new row identifier (``ChangeRecorder/newID()``).
    func newID() -> String { recorder.newID() }

    /// A fresh opaque secret: 32 random bytes, base64url.
    func newSecret() -> String { Base64URL.encode(random.bytes(32)) }

    /// The stored form of a token: SHA-256, base64url. Tokens themselves are never stored.
    static func tokenHash(_ token: String) -> String { Base64URL.encode(Data(SHA256.hash(data: Data(token.utf8)))) }
}

/// A refused request whose writes must still be kept; thrown inside ``BioAuthService/commit(_:)``.
struct Refusal: Error {
    let error: APIError
    init(_ error: APIError) { self.error = error }
}

/// What ``BioAuthService/commit(_:)`` carries out of a transaction that must commit either way.
private enum Outcome<Value: Sendable>: Sendable {
    case success(Value)
    case failure(APIError)

    func get() throws -> Value {
        switch self {
        case .success(let value): value
        case .failure(let error): throw error
        }
    }
}
