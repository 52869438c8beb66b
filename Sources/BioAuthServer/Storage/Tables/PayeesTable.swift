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

    /// Stores a new payee.
    func insert(_ payee: RegisteredPayee) async throws {
        try await db.insert(into: "payees").columns("id", "name", "verification", "registered_by", "created_at", "updated_at")
            .values(
                SQLBind(payee.id),
                SQLBind(payee.name),
                SQLBind(payee.verification.rawValue),
                SQLBind(payee.registeredBy),
                SQLBind(payee.createdAt.millisecondsSince1970),
                SQLBind(payee.updatedAt.millisecondsSince1970)
            )
            .run()
    }

    /// Stores a registered payee's new name, verification state and who changed them, at `updatedAt`.
    func update(_ payee: RegisteredPayee) async throws {
        try await db.update("payees").set("name", to: payee.name).set("verification", to: payee.verification.rawValue)
            .set("registered_by", to: payee.registeredBy).set("updated_at", to: payee.updatedAt.millisecondsSince1970)
            .where("id", .equal, payee.id).run()
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
