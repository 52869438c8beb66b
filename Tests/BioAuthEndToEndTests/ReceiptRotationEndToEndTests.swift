import BioAuthClient
import BioAuthCore
import BioAuthServer
import Foundation
import Logging
import Testing

/// The app keeps paying across a rotation of the server's receipt key: it fetches the published keys again when a
/// receipt verifies with none of those it knows.
@Suite("Receipt key rotation, end to end")
struct ReceiptRotationEndToEndTests {
    @Test("a payment after a receipt key rotation verifies, with the flows that cached the old key")
    func payAcrossRotation() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-rotation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let keyPath = folder.appendingPathComponent("receipt-key.pem").path
        let databasePath = folder.appendingPathComponent("bioauth.sqlite").path
        try await TestBackend.run(
            configure: {
                $0.databasePath = databasePath
                $0.receiptKeyPath = keyPath
                $0.pinKeyPath = folder.appendingPathComponent("pin-key").path
            },
            { backend in
                let redirect = ForwardingTransport(to: backend.server.url)
                let phone = Phone(backend, transport: redirect)
                let flows = try await phone.enrolled()
                let token = try await flows.accessToken()
                let coffee = try await phone.api.createPayment(
                    amount: Money(minorUnits: 8800, currency: .cny),
                    payeeID: "merchant-coffee-042",
                    payeeName: "Coffee Shop",
                    idempotencyKey: "order-1",
                    accessToken: token
                )
                await phone.sensor.script(.match)
                let first = try await flows.pay(coffee.id)
                #expect(first.status == "authorized")

                // The operator rotates the key and restarts the server on the same database.
                await backend.server.stop()
                let database = try await openDatabase(databasePath, logger: Logger(label: "e2e"))
                let rotation = try await ReceiptKeyRotation.rotate(keyPath: keyPath, database: database, clock: backend.clock)
                try await database.close()
                var configuration = ServerConfiguration.forTests(database: databasePath)
                configuration.receiptKeyPath = keyPath
                configuration.pinKeyPath = folder.appendingPathComponent("pin-key").path
                let restarted = try await LoopbackServer.start(configuration: configuration, clock: backend.clock, logger: Logger(label: "e2e"))
                redirect.target = restarted.url
                defer { Task { await restarted.stop() } }

                let tea = try await phone.api.createPayment(
                    amount: Money(minorUnits: 1200, currency: .cny),
                    payeeID: "merchant-tea-7",
                    payeeName: "Tea House",
                    idempotencyKey: "order-2",
                    accessToken: try await flows.accessToken()
                )
                await phone.sensor.script(.match)
                let second = try await flows.pay(tea.id)
                #expect(second.status == "authorized" && second.receipt?.keyId == rotation.newKeyID)
                #expect(first.receipt?.keyId == rotation.retiredKeyID)
                await restarted.stop()
            }
        )
    }
}
