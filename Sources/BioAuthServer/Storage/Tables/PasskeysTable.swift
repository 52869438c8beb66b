import BioAuthCore
import Foundation
import SQLKit

extension SQLDatabase {
    /// `passkeys`: the WebAuthn credentials registered to accounts.
    var passkeys: PasskeysTable { PasskeysTable(db: self) }
}

/// The statements on `passkeys`.
struct PasskeysTable: Table {
    let db: any SQLDatabase

    static let columns = [
        "id", "account_id", "credential_id", "public_key", "algorithm", "sign_count", "aaguid", "backup_eligible", "backed_up",
        "attestation_format", "attestation_type", "attestation_trusted", "transports", "name", "created_at", "last_used_at", "revoked_at",
    ]

    /// The account's passkey `id`, revoked or not.
    func find(_ id: String, account: String) async throws -> PasskeyInfo? {
        try await select().where("id", .equal, id).where("account_id", .equal, account).first().map(PasskeyInfo.init(row:))
    }

    /// The account that holds passkey `id`, whoever's it is: for support's search by an id a customer reads out.
    func owner(of id: String) async throws -> String? {
        try await db.select().column("account_id").from("passkeys").where("id", .equal, id).first()?.decode(column: "account_id", as: String.self)
    }

    /// The passkey with this credential id, of any account (a discoverable sign-in names only the credential).
    func find(credentialID: Data) async throws -> PasskeyInfo? {
        try await select().where("credential_id", .equal, Base64URL.encode(credentialID)).first().map(PasskeyInfo.init(row:))
    }

    /// Whether any account has a passkey with this credential id.
    func isRegistered(credentialID: Data) async throws -> Bool {
        try await db.select().column("id").from("passkeys").where("credential_id", .equal, Base64URL.encode(credentialID)).first() != nil
    }

    /// The account's passkeys, newest first; only those not revoked when `liveOnly`.
    func list(account: String, liveOnly: Bool = false) async throws -> [PasskeyInfo] {
        var query = select().where("account_id", .equal, account)
        if liveOnly { query = query.where("revoked_at", .is, SQLLiteral.null) }
        return try await query.orderBy("created_at", .descending).all().map(PasskeyInfo.init(row:))
    }

    /// Stores a newly registered passkey.
    func insert(_ info: PasskeyInfo, userVerified: Bool) async throws {
        try await db.insert(into: "passkeys")
            .columns(
                "id",
                "account_id",
                "credential_id",
                "public_key",
                "algorithm",
                "sign_count",
                "aaguid",
                "backup_eligible",
                "backed_up",
                "user_verified",
                "attestation_format",
                "attestation_type",
                "attestation_trusted",
                "transports",
                "name",
                "created_at",
                "last_used_at",
                "revoked_at"
            )
            .values(
                SQLBind(info.id),
                SQLBind(info.accountID),
                SQLBind(Base64URL.encode(info.credentialID)),
                SQLBind(Base64URL.encode(info.publicKey)),
                SQLBind(info.algorithm),
                SQLBind(info.signCount),
                SQLBind(info.aaguid),
                SQLBind(info.backupEligible ? 1 : 0),
                SQLBind(info.backedUp ? 1 : 0),
                SQLBind(userVerified ? 1 : 0),
                SQLBind(info.attestationFormat),
                SQLBind(info.attestationType),
                SQLBind(info.attestationTrusted ? 1 : 0),
                SQLBind(info.transports.joined(separator: ",")),
                SQLBind(info.name),
                SQLBind(info.createdAt.millisecondsSince1970),
                SQLBind(Int64?.none),
                SQLBind(Int64?.none)
            )
            .run()
    }

    /// Marks the passkey revoked at `at`.
    func markRevoked(_ id: String, at: Int64) async throws {
        try await db.update("passkeys").set("revoked_at", to: at).where("id", .equal, id).run()
    }

    /// Stores a sign-in's counter and backup state, on the condition that the counter is still `previous` and the passkey
    /// is not revoked; false when another sign-in or a revocation came first.
    func recordSignIn(_ id: String, previous: Int64, signCount: Int64, backedUp: Bool, at: Int64) async throws -> Bool {
        !(try await db.update("passkeys").set("sign_count", to: signCount).set("backed_up", to: backedUp ? 1 : 0).set("last_used_at", to: at)
            .where("id", .equal, id).where("sign_count", .equal, previous).where("revoked_at", .is, SQLLiteral.null)
            .returning("id").all()).isEmpty
    }

    private func select() -> SQLSelectBuilder { db.select().columns(Self.columns.map { SQLColumn($0) }).from("passkeys") }
}

extension PasskeyInfo {
    /// A `passkeys` row.
    init(row: any SQLRow) throws {
        guard let credentialID = Base64URL.decode(try row.decode(column: "credential_id", as: String.self)) else {
            throw UnreadableRow(table: "passkeys", column: "credential_id")
        }
        guard let publicKey = Base64URL.decode(try row.decode(column: "public_key", as: String.self)) else {
            throw UnreadableRow(table: "passkeys", column: "public_key")
        }
        let transports = try row.decode(column: "transports", as: String.self)
        self.init(
            id: try row.decode(column: "id", as: String.self),
            accountID: try row.decode(column: "account_id", as: String.self),
            credentialID: credentialID,
            publicKey: publicKey,
            algorithm: try row.decode(column: "algorithm", as: Int.self),
            signCount: try row.decode(column: "sign_count", as: Int64.self),
            aaguid: try row.decode(column: "aaguid", as: String.self),
            backupEligible: try row.decode(column: "backup_eligible", as: Int.self) != 0,
            backedUp: try row.decode(column: "backed_up", as: Int.self) != 0,
            attestationFormat: try row.decode(column: "attestation_format", as: String.self),
            attestationType: try row.decode(column: "attestation_type", as: String.self),
            attestationTrusted: try row.decode(column: "attestation_trusted", as: Int.self) != 0,
            transports: transports.isEmpty ? [] : transports.split(separator: ",").map(String.init),
            name: try row.decode(column: "name", as: String.self),
            createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
            lastUsedAt: Date(storedMilliseconds: try row.decode(column: "last_used_at", as: Int64?.self)),
            revokedAt: Date(storedMilliseconds: try row.decode(column: "revoked_at", as: Int64?.self))
        )
    }
}
