import BioAuthCore
import Crypto
import Foundation
import Logging
import SQLKit

/// The server's logic: accounts, sessions, devices, challenges and the audit log, over a
/// ``DatabaseExecutor``. The HTTP layer only translates to and from it.
///
/// Failures are ``APIError``s. A refused security check still commits what it must keep (a consumed
/// challenge, a failed-attempt count, an audit event) before the error is thrown; a malformed request is
/// refused before anything is written.
struct BioAuthService: Sendable {
    let configuration: ServerConfiguration
    let database: any DatabaseExecutor
    let clock: any WallClock
    let random: any RandomSource
    let passwords: PasswordHasher
    let receipts: ReceiptSigner
    let logger: Logger

    var now: Date { clock.now }

    /// Runs `body` in a transaction; a returned failure is committed, then thrown.
    func commit<R: Sendable>(_ body: @Sendable @escaping (any SQLDatabase) async throws -> Outcome<R>) async throws -> R {
        try await database.transaction(body).get()
    }

    /// A fresh opaque secret: 32 random bytes, base64url.
    func newSecret() -> String { Base64URL.encode(random.bytes(32)) }

    /// The stored form of a token: SHA-256, base64url. Tokens themselves are never stored.
    static func tokenHash(_ token: String) -> String { Base64URL.encode(Data(SHA256.hash(data: Data(token.utf8)))) }
}

/// The result of a unit of work whose failure must still be committed.
enum Outcome<Value: Sendable>: Sendable {
    case success(Value)
    case failure(APIError)

    func get() throws -> Value {
        switch self {
        case .success(let value): value
        case .failure(let error): throw error
        }
    }
}
