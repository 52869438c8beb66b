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
        let key = receipts.publicKey
        let now = self.now
        try await database.transaction { db in
            if let retiredAt = try await ReceiptKeyRing.register(key, at: now, on: db) {
                throw ConfigurationError(
                    message: """
                        the receipt key in \(path) (key id \(Base64URL.encode(key.keyID))) was retired by a rotation at \
                        \((try? InternetDateTime().encode(retiredAt)) ?? "\(retiredAt)"); install the current key file
                        """
                )
            }
        }
    }
}

/// The receipt keys' rules: a key is published once, a retired one never signs again, and a rotation retires every key
/// still signing.
enum ReceiptKeyRing {
    /// The published keys, oldest first.
    static func all(on db: any SQLDatabase) async throws -> [PublishedReceiptKey] {
        try await db.receiptKeys.all()
    }

    /// Adds `key` (not before `now`) unless it is there; returns when it was retired, if it was.
    static func register(_ key: DevicePublicKey, at now: Date, on db: any SQLDatabase) async throws -> Date? {
        let found = try await db.receiptKeys.find(key)
        if found.published { return found.retiredAt }
        try await db.receiptKeys.insert(key, notBefore: now.millisecondsSince1970)
        return nil
    }

    /// Retires every key still signing and adds `new`, signing from `now` (one rotation). The old keys stay published.
    static func rotate(to new: DevicePublicKey, at now: Date, on db: any SQLDatabase) async throws {
        try await db.receiptKeys.retireSigning(at: now.millisecondsSince1970)
        guard try await register(new, at: now, on: db) == nil else { throw ConfigurationError(message: "the new receipt key is already retired") }
    }
}
