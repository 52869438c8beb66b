import BioAuthCore
import Foundation
import SQLKit

/// A receipt key as published: its public half and when it signed.
struct PublishedReceiptKey: Sendable, Equatable {
    let publicKey: DevicePublicKey
    let notBefore: Date
    let retiredAt: Date?
}

extension BioAuthService {
    /// Every receipt key that signs or signed receipts, oldest first: the current one and those rotations retired.
    func receiptKeys() async throws -> [PublishedReceiptKey] {
        try await database.transaction { db in try await ReceiptKeyRing.all(on: db) }
    }

    /// Records the key this server signs with, at start-up; refuses a key a rotation has retired (an instance still
    /// holding the old file would sign new receipts with it).
    func registerReceiptKey(path: String) async throws {
        let key = receipts.publicKey, now = self.now
        try await database.transaction { db in
            if let retiredAt = try await ReceiptKeyRing.register(key, at: now, on: db) {
                throw ConfigurationError(message: """
                    the receipt key in \(path) (key id \(Base64URL.encode(key.keyID))) was retired by a rotation at \
                    \((try? InternetDateTime().encode(retiredAt)) ?? "\(retiredAt)"); install the current key file
                    """)
            }
        }
    }
}

/// The `receipt_keys` table: the public halves of the receipt keys, with when each started and stopped signing.
enum ReceiptKeyRing {
    /// The published keys, oldest first.
    static func all(on db: any SQLDatabase) async throws -> [PublishedReceiptKey] {
        try await db.raw("SELECT public_key, not_before, retired_at FROM receipt_keys ORDER BY not_before, key_id").all().map { row in
            let encoded = try row.decode(column: "public_key", as: String.self)
            guard let key = Base64URL.decode(encoded).flatMap({ try? DevicePublicKey(x963Representation: $0) }) else { throw APIError.internalError }
            return PublishedReceiptKey(
                publicKey: key, notBefore: Date(millisecondsSince1970: try row.decode(column: "not_before", as: Int64.self)),
                retiredAt: try row.decode(column: "retired_at", as: Int64?.self).map(Date.init(millisecondsSince1970:)))
        }
    }

    /// Adds `key` (not before `now`) unless it is there; returns when it was retired, if it was.
    static func register(_ key: DevicePublicKey, at now: Date, on db: any SQLDatabase) async throws -> Date? {
        let id = Base64URL.encode(key.keyID)
        if let row = try await db.raw("SELECT retired_at FROM receipt_keys WHERE key_id = \(bind: id)").first() {
            return try row.decode(column: "retired_at", as: Int64?.self).map(Date.init(millisecondsSince1970:))
        }
        try await db.raw(
            """
            INSERT INTO receipt_keys (key_id, public_key, not_before, retired_at)
            VALUES (\(bind: id), \(bind: Base64URL.encode(key.x963Representation)), \(bind: now.millisecondsSince1970), NULL)
            """
        ).run()
        return nil
    }

    /// Retires every key still signing and adds `new`, signing from `now` (one rotation). The old keys stay published.
    static func rotate(to new: DevicePublicKey, at now: Date, on db: any SQLDatabase) async throws {
        try await db.raw("UPDATE receipt_keys SET retired_at = \(bind: now.millisecondsSince1970) WHERE retired_at IS NULL").run()
        guard try await register(new, at: now, on: db) == nil else { throw ConfigurationError(message: "the new receipt key is already retired") }
    }
}
