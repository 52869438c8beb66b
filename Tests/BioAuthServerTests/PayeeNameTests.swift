import BioAuthCore
import Foundation
import SQLKit
import Testing

@testable import BioAuthServer

/// A prompt shows only the payee's name, so no two payees may look alike: not in another case, not with look-alike
/// characters (Unicode TS #39's skeleton), and not by a rename.
@Suite("Payee names are unique by what a person sees")
struct PayeeNameTests {
    @Test(
        "a name that looks like a registered one is refused with its own code, on SQLite and PostgreSQL, and nothing is written",
        arguments: StorageBackend.available
    )
    func lookalikesRefused(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let clients = ServiceClients(database: api.database, clock: api.clock)
            let token = try #require(try await api.serviceToken(try await clients.create(name: "payees", scopes: ["payees:write"]))["access_token"])
            #expect(try await api.registerPayee("merchant-coffee-042", name: "Coffee Shop", token: token).status == 201)
            #expect(try await api.registerPayee("llya-books", name: "llya Books", token: token).status == 201)
            let before = try await api.snapshot()
            for (id, name) in [
                ("attacker-coffee", "Coffee Shop"), ("attacker-2", "coffee shop"), ("attacker-3", "COFFEE SHOP"), ("attacker-4", "C0ffee Shop"),
                ("attacker-5", "Coffee Sh0p"), ("attacker-6", "CoFFee sHoP"), ("attacker-7", "Ilya Books"), ("attacker-8", "LLYA BOOKS"),
            ] {
                let reply = try await api.registerPayee(id, name: name, token: token)
                #expect(reply.status == 409 && reply.code == "payee_name_taken", "\(name): \(reply.raw)")
                #expect(reply.raw.contains("merchant-coffee-042") || reply.raw.contains("llya-books"), "it says which payee: \(reply.raw)")
            }
            // A rename of another payee onto the look is refused too; a payee keeps (or re-cases) its own name.
            #expect(try await api.registerPayee("tea-1", name: "Tea House", token: token).status == 201)
            let afterTea = try await api.snapshot()
            #expect(try await api.registerPayee("tea-1", name: "Coffee Shop", token: token).code == "payee_name_taken")
            #expect(try await api.snapshot() == afterTea)
            #expect(try await api.registerPayee("merchant-coffee-042", name: "COFFEE SHOP", token: token).status == 200)
            #expect(try await api.registerPayee("merchant-coffee-042", name: "Coffee Shop", token: token).status == 200)
            #expect(try await api.registerPayee("coffee-2", name: "Coffee Shop 2", token: token).status == 201, "a name people tell apart")
            #expect(before.count == afterTea.count)
        }
    }

    @Test(
        "the outside testers' look-alikes are refused where they enter",
        arguments: ["Al\u{0131}\u{0307}pay", "Cafe\u{0301}\u{0301}", "Bä\u{0308}r", "Café\u{0302}\u{0303}"]
    )
    func markTricks(name: String) async throws {
        try await TestServer.run { api in
            let clients = ServiceClients(database: api.database, clock: api.clock)
            let token = try #require(try await api.serviceToken(try await clients.create(name: "payees", scopes: ["payees:write"]))["access_token"])
            let reply = try await api.registerPayee("p-1", name: name, token: token)
            #expect(reply.status == 400 && reply.code == "invalid_payee", "\(reply.raw)")
        }
    }

    @Test("payees registered before the keys existed get them (at start-up); of two that look alike the later keeps none and is reported")
    func legacyPayees() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("payee-keys-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let database = try await openDatabase(path, logger: .init(label: "test"))
        // An older server's rows: no keys, and two names that look alike.
        try await database.transaction { db in
            for (id, name, at) in [("coffee-1", "Coffee Shop", 1), ("coffee-2", "COFFEE SHOP", 2), ("tea-1", "Tea House", 3)] {
                try await db.raw(
                    "INSERT INTO payees (id, name, verification, registered_by, created_at, updated_at) VALUES (\(bind: id), \(bind: name), 'verified', 'admin', \(bind: at), \(bind: at))"
                ).run()
            }
        }
        let registry = PayeeRegistry(database: database)
        let clashes = try await registry.storeLegacyLookalikeKeys()
        #expect(clashes.map(\.id) == ["coffee-2"] && clashes.map(\.looksLike) == ["coffee-1"], "\(clashes)")
        let keyed = try await database.transaction { db in
            try await db.raw("SELECT id FROM payees WHERE name_key_folded IS NOT NULL ORDER BY id").all().map {
                try $0.decode(column: "id", as: String.self)
            }
        }
        #expect(keyed == ["coffee-1", "tea-1"])
        #expect(try await registry.storeLegacyLookalikeKeys().map(\.id) == ["coffee-2"], "run again (another instance): the same")
        // The operator renames the later one; from then on it is kept apart like any other.
        _ = try await registry.register(id: "coffee-2", name: "Coffee Corner")
        #expect(try await registry.storeLegacyLookalikeKeys().isEmpty)
        await #expect(throws: ConfigurationError.self) { try await registry.register(id: "coffee-3", name: "coffee corner") }
        try await database.close()
    }
}
