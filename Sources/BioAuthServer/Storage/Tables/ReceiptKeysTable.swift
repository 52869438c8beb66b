import BioAuthCore
import Foundation
import SQLKit

extension SQLDatabase {
    /// `receipt_keys`: the public halves of the receipt keys, with when each started and stopped signing.
    var receiptKeys: ReceiptKeysTable { ReceiptKeysTable(db: self) }
}

/// The statements on `receipt_keys`.
struct ReceiptKeysTable: Table {
    let db: any SQLDatabase

    /// The published keys, oldest first.
    func all() async throws -> [PublishedReceiptKey] {
        try await db.select().columns("public_key", "not_before", "retired_at").from("receipt_keys").orderBy("not_before").orderBy("key_id").all()
            .map { row in
                guard
                    let key = Base64URL.decode(try row.decode(column: "public_key", as: String.self))
                        .flatMap({ try? DevicePublicKey(x963Representation: $0) })
                else { throw UnreadableRow(table: "receipt_keys", column: "public_key") }
                return PublishedReceiptKey(
                    publicKey: key,
                    notBefore: Date(millisecondsSince1970: try row.decode(column: "not_before", as: Int64.self)),
                    retiredAt: Date(storedMilliseconds: try row.decode(column: "retired_at", as: Int64?.self))
                )
            }
    }

    /// Whether `key` is published, and when it was retired if it was.
    func find(_ key: DevicePublicKey) async throws -> (published: Bool, retiredAt: Date?) {
        guard let row = try await db.select().column("retired_at").from("receipt_keys").where("key_id", .equal, Base64URL.encode(key.keyID)).first()
        else { return (false, nil) }
        return (true, Date(storedMilliseconds: try row.decode(column: "retired_at", as: Int64?.self)))
    }

    /// Publishes `key`, signing from `at`.
    func insert(_ key: DevicePublicKey, notBefore at: Int64) async throws {
        try await db.insert(into: "receipt_keys").columns("key_id", "public_key", "not_before", "retired_at")
            .values(SQLBind(Base64URL.encode(key.keyID)), SQLBind(Base64URL.encode(key.x963Representation)), SQLBind(at), SQLBind(Int64?.none))
            .run()
    }

    /// Marks every key still signing as retired at `at`.
    func retireSigning(at: Int64) async throws {
        try await db.update("receipt_keys").set("retired_at", to: at).where("retired_at", .is, SQLLiteral.null).run()
    }
}
