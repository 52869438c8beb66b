import Testing

@testable import BioAuthServer

@Suite("Start-up settings")
struct StartupSettingsTests {
    @Test("a bcrypt cost outside 4-16 stops start-up before any hashing (31 used to hash for hours first)", arguments: [3, 17, 31, 300, -1])
    func bcryptCost(_ cost: Int) async throws {
        await #expect(throws: ConfigurationError.self) {
            try await TestServer.run(configure: { $0.bcryptCost = cost }, { _ in })
        }
        await #expect(throws: ConfigurationError.self) { _ = try await PasswordHasher.start(cost: cost, threads: 1, metrics: .prometheus()) }
    }
}
