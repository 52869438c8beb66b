import BioAuthCore
import Foundation
import SQLKit

extension SQLDatabase {
    /// `payees`: the payees the bank registered, with the names prompts show.
    var payees: PayeesTable { PayeesTable(db: self) }
}

/// The statements on `payees`.
struct PayeesTable: Table {
    let db: any SQLDatabase

    /// The payee `id`.
    func find(_ id: String) async throws -> RegisteredPayee? {
        try await select().where("id", .equal, id).first().map(RegisteredPayee.init(row:))
    }

    /// The registered name of payee `id` and whether the bank verified it (every payment created reads them).
    func nameAndVerification(of id: String) async throws -> (name: String, verified: Bool)? {
        guard let row = try await db.first(Self.nameByID(id)) else { return nil }
        return (
            try row.decode(column: "name", as: String.self),
            try row.decode(column: "verification", as: String.self) == RegisteredPayee.Verification.verified.rawValue
        )
    }

    /// Every payee, by id.
    func list() async throws -> [RegisteredPayee] {
        try await select().orderBy("id").all().map(RegisteredPayee.init(row:))
    }

    /// Stores a new payee with its name's look-alike keys.
    func insert(_ payee: RegisteredPayee, keys: DisplayName.LookalikeKeys) async throws {
        try await db.insert(into: "payees")
            .columns("id", "name", "verification", "registered_by", "created_at", "updated_at", "name_key_folded", "name_key_mapped")
            .values(
                SQLBind(payee.id),
                SQLBind(payee.name),
                SQLBind(payee.verification.rawValue),
                SQLBind(payee.registeredBy),
                SQLBind(payee.createdAt.millisecondsSince1970),
                SQLBind(payee.updatedAt.millisecondsSince1970),
                SQLBind(keys.foldedFirst),
                SQLBind(keys.mappedFirst)
            )
            .run()
    }

    /// Stores a registered payee's new name (with its look-alike keys), verification state and who changed them, at
    /// `updatedAt`.
    func update(_ payee: RegisteredPayee, keys: DisplayName.LookalikeKeys) async throws {
        try await db.update("payees").set("name", to: payee.name).set("verification", to: payee.verification.rawValue)
            .set("registered_by", to: payee.registeredBy).set("updated_at", to: payee.updatedAt.millisecondsSince1970)
            .set("name_key_folded", to: keys.foldedFirst).set("name_key_mapped", to: keys.mappedFirst)
            .where("id", .equal, payee.id).run()
    }

    /// The id of a payee other than `id` whose name has either of `keys`: a name that looks like that payee's.
    func lookalike(of keys: DisplayName.LookalikeKeys, other id: String) async throws -> String? {
        try await db.select().column("id").from("payees")
            .where { group in
                group.where("name_key_folded", .equal, keys.foldedFirst).orWhere("name_key_mapped", .equal, keys.mappedFirst)
            }
            .where("id", .notEqual, id).limit(1).first()?.decode(column: "id", as: String.self)
    }

    /// Payees whose look-alike keys are not stored yet (registered before they were), oldest first: id and name.
    func withoutLookalikeKeys() async throws -> [(id: String, name: String)] {
        try await db.select().columns("id", "name").from("payees").where("name_key_folded", .is, SQLLiteral.null)
            .orderBy("created_at").orderBy("id").all()
            .map { (try $0.decode(column: "id", as: String.self), try $0.decode(column: "name", as: String.self)) }
    }

    /// Stores the look-alike keys of payee `id`'s name.
    func setLookalikeKeys(_ keys: DisplayName.LookalikeKeys, of id: String) async throws {
        try await db.update("payees").set("name_key_folded", to: keys.foldedFirst).set("name_key_mapped", to: keys.mappedFirst)
            .where("id", .equal, id).run()
    }

    static let nameByID = FixedSQL("SELECT name, verification FROM payees WHERE id = ? LIMIT 1")

    /// Run on every payment created: `QueryPlanTests` checks it finds its row through an index.
    static let hotStatements: [FixedStatement] = [nameByID("p")]

    private func select() -> SQLSelectBuilder {
        db.select().columns("id", "name", "verification", "registered_by", "created_at", "updated_at").from("payees")
    }
}

extension RegisteredPayee {
    /// A `payees` row (a state this server does not know reads as unverified).
    init(row: any SQLRow) throws {
        self.init(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            verification: Verification(rawValue: try row.decode(column: "verification", as: String.self)) ?? .unverified,
            registeredBy: try row.decode(column: "registered_by", as: String.self),
            createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
            updatedAt: Date(millisecondsSince1970: try row.decode(column: "updated_at", as: Int64.self))
        )
    }
}
