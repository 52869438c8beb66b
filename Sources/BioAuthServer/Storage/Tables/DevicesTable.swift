import BioAuthCore
import Foundation
import SQLKit

extension SQLDatabase {
    /// `devices`: the device keys bound to accounts.
    var devices: DevicesTable { DevicesTable(db: self, keys: nil) }
    /// `app_attest_keys`: the App Attest key that vouched for a device at registration, with its assertion counter.
    var appAttestKeys: AppAttestKeysTable { AppAttestKeysTable(db: self) }
}

/// The statements on `devices`.
struct DevicesTable: Table {
    let db: any SQLDatabase
    /// Where public keys are parsed once per server, not on every read; each read parses when nil.
    let keys: SignatureInputs?

    /// The same table, parsing public keys through `keys`.
    func parsingKeys(with keys: SignatureInputs) -> DevicesTable { DevicesTable(db: db, keys: keys) }

    static let columns = [
        "id", "account_id", "public_key", "biometry_kind", "name", "installation_id", "counter", "attestation", "created_at", "last_used_at",
        "revoked_at", "bound_by", "cooling_off_until",
    ]

    /// The device of a key id, revoked or not, of any account (a sign-in names only the key).
    func find(keyID: Data) async throws -> DeviceInfo? {
        try await db.first(Self.byKeyID(Base64URL.encode(keyID))).map(device)
    }

    /// The account's device `id`, revoked or not.
    func find(_ id: String, account: String) async throws -> DeviceInfo? {
        try await select().where("id", .equal, id).where("account_id", .equal, account).first().map(device)
    }

    /// The account that holds device `id`, whoever's it is: for support's search by an id a customer reads out.
    func owner(of id: String) async throws -> String? {
        try await db.select().column("account_id").from("devices").where("id", .equal, id).first()?.decode(column: "account_id", as: String.self)
    }

    /// The account's devices, newest first, revoked ones included.
    func list(account: String) async throws -> [DeviceInfo] {
        try await select().where("account_id", .equal, account).orderBy("created_at", .descending).all().map(device)
    }

    /// Whether the account has a device that is not revoked; with `attestedOnly`, one with an App Attest key (under
    /// `require`, a device without one can prove nothing, so it approves nothing and holds no place).
    func hasLive(account: String, attestedOnly: Bool = false) async throws -> Bool {
        var query = db.select().column("id").from("devices").where("account_id", .equal, account).where("revoked_at", .is, SQLLiteral.null)
        if attestedOnly {
            query = query.where(SQLRaw("EXISTS (SELECT 1 FROM app_attest_keys k WHERE k.device_id = devices.id)"))
        }
        return try await query.limit(1).first() != nil
    }

    /// Whether any device, of any account, has this key.
    func isRegistered(keyID: Data) async throws -> Bool {
        try await db.select().column("id").from("devices").where("key_id", .equal, Base64URL.encode(keyID)).first() != nil
    }

    /// Stores a newly bound device.
    func insert(_ device: DeviceInfo) async throws {
        try await db.insert(into: "devices")
            .columns(
                "id",
                "account_id",
                "key_id",
                "public_key",
                "biometry_kind",
                "name",
                "installation_id",
                "counter",
                "attestation",
                "created_at",
                "last_used_at",
                "revoked_at",
                "bound_by",
                "cooling_off_until"
            )
            .values(
                SQLBind(device.id),
                SQLBind(device.accountID),
                SQLBind(Base64URL.encode(device.publicKey.keyID)),
                SQLBind(Base64URL.encode(device.publicKey.x963Representation)),
                SQLBind(device.biometryKind.rawValue),
                SQLBind(device.name),
                SQLBind(device.installationID),
                SQLBind(device.counter),
                SQLBind(device.attestation),
                SQLBind(device.createdAt.millisecondsSince1970),
                SQLBind(Int64?.none),
                SQLBind(Int64?.none),
                SQLBind(device.boundBy.rawValue),
                SQLBind(device.coolingOffUntil?.millisecondsSince1970)
            )
            .run()
    }

    /// Marks the device revoked at `at`.
    func markRevoked(_ id: String, at: Int64) async throws {
        try await db.update("devices").set("revoked_at", to: at).where("id", .equal, id).run()
    }

    /// Stores the device's new signature counter and when its key was last used; false (nothing stored) unless the counter
    /// is higher than the stored one and the device is not revoked, at any isolation level: the update locks the device's
    /// row, so a revocation and a use of the key are ordered by it.
    func advanceCounter(_ id: String, to counter: Int64, at: Int64) async throws -> Bool {
        !(try await db.all(Self.advanceCounterSQL(counter, at, id, counter))).isEmpty
    }

    /// Stores the new signature counter of the device with key `keyID` and when its key was last used, returning the device
    /// as it now is; nil (nothing stored) unless a device has this key, is not revoked and has a lower counter. One
    /// statement where ``find(keyID:)`` and ``advanceCounter(_:to:at:)`` take two, locking the row as the latter does.
    func advanceCounter(keyID: Data, to counter: Int64, at: Int64) async throws -> DeviceInfo? {
        try await db.first(Self.advanceCounterByKeySQL(counter, at, Base64URL.encode(keyID), counter)).map(device)
    }

    private func select() -> SQLSelectBuilder { db.select().columns(Self.columns.map { SQLColumn($0) }).from("devices") }

    /// A device row, its key parsed through ``keys`` when given.
    private func device(_ row: any SQLRow) throws -> DeviceInfo {
        guard let keyBytes = Base64URL.decode(try row.decode(column: "public_key", as: String.self)),
            let publicKey = try? (keys.map { try $0.key(x963Representation: keyBytes) } ?? DevicePublicKey(x963Representation: keyBytes))
        else { throw UnreadableRow(table: "devices", column: "public_key") }
        guard let kind = BiometryKind(rawValue: try row.decode(column: "biometry_kind", as: String.self)) else {
            throw UnreadableRow(table: "devices", column: "biometry_kind")
        }
        guard let binding = DeviceInfo.Binding(rawValue: try row.decode(column: "bound_by", as: String.self)) else {
            throw UnreadableRow(table: "devices", column: "bound_by")
        }
        return DeviceInfo(
            id: try row.decode(column: "id", as: String.self),
            accountID: try row.decode(column: "account_id", as: String.self),
            publicKey: publicKey,
            biometryKind: kind,
            name: try row.decode(column: "name", as: String.self),
            installationID: try row.decode(column: "installation_id", as: String.self),
            counter: try row.decode(column: "counter", as: Int64.self),
            attestation: try row.decode(column: "attestation", as: String.self),
            createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
            lastUsedAt: Date(storedMilliseconds: try row.decode(column: "last_used_at", as: Int64?.self)),
            revokedAt: Date(storedMilliseconds: try row.decode(column: "revoked_at", as: Int64?.self)),
            boundBy: binding,
            coolingOffUntil: Date(storedMilliseconds: try row.decode(column: "cooling_off_until", as: Int64?.self))
        )
    }

    /// The device of a key id, on every sign-in and payment.
    static let byKeyID = FixedSQL("SELECT \(columns.joined(separator: ", ")) FROM devices WHERE key_id = ? LIMIT 1")
    static let advanceCounterSQL = FixedSQL(
        "UPDATE devices SET counter = ?, last_used_at = ? WHERE id = ? AND counter < ? AND revoked_at IS NULL RETURNING id"
    )

    static let advanceCounterByKeySQL = FixedSQL(
        """
        UPDATE devices SET counter = ?, last_used_at = ? WHERE key_id = ? AND counter < ? AND revoked_at IS NULL \
        RETURNING \(columns.joined(separator: ", "))
        """
    )

    /// Run on every sign-in and payment: `QueryPlanTests` checks each finds its row through an index.
    static let hotStatements: [FixedStatement] = [
        byKeyID("k"), advanceCounterSQL(Int64(2), Int64(1), "d", Int64(2)), advanceCounterByKeySQL(Int64(2), Int64(1), "k", Int64(2)),
    ]
}

/// The statements on `app_attest_keys`.
struct AppAttestKeysTable: Table {
    let db: any SQLDatabase

    /// What is kept of a device's attested key to check its assertions.
    struct Stored: Sendable {
        /// The key, X9.63 (unparsed: the rules decide what an unreadable key means).
        var publicKey: Data?
        var appID: String
        var counter: Int64
    }

    /// Whether any device already registered with this App Attest key.
    func isRegistered(keyID: Data) async throws -> Bool {
        try await db.select().column("device_id").from("app_attest_keys").where("key_id", .equal, Base64URL.encode(keyID)).first() != nil
    }

    /// Stores the attested key of a newly registered device, its counter at 0.
    func insert(_ key: AttestedAppKey, device: String, at: Int64) async throws {
        try await db.insert(into: "app_attest_keys")
            .columns("device_id", "key_id", "public_key", "app_id", "environment", "counter", "receipt", "created_at")
            .values(
                SQLBind(device),
                SQLBind(Base64URL.encode(key.keyID)),
                SQLBind(Base64URL.encode(key.publicKey.x963Representation)),
                SQLBind(key.appID),
                SQLBind(key.environment.rawValue),
                SQLBind(Int64(0)),
                SQLBind(Base64URL.encode(key.receipt)),
                SQLBind(at)
            )
            .run()
    }

    /// The device's attested key, if it has one.
    func find(device: String) async throws -> Stored? {
        guard
            let row = try await db.select().columns("public_key", "app_id", "counter").from("app_attest_keys")
                .where("device_id", .equal, device).first()
        else { return nil }
        return Stored(
            publicKey: Base64URL.decode(try row.decode(column: "public_key", as: String.self)),
            appID: try row.decode(column: "app_id", as: String.self),
            counter: try row.decode(column: "counter", as: Int64.self)
        )
    }

    /// Moves the key's counter to `counter` if it is still below it; false when another request got there first.
    func advanceCounter(device: String, to counter: Int64) async throws -> Bool {
        !(try await db.update("app_attest_keys").set("counter", to: counter)
            .where("device_id", .equal, device).where("counter", .lessThan, counter)
            .returning("device_id").all()).isEmpty
    }
}
