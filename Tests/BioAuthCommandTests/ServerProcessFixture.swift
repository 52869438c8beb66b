import AsyncHTTPClient
import BioAuthServer
import Foundation
import Logging
import Testing

/// What a test that runs `bioauth serve` as its own process needs: the built executable, a folder of its own for the
/// server's files (removed afterwards) and an HTTP client (shut down afterwards).
enum ServerProcessFixture {
    static func run(_ label: String, _ body: (_ executable: URL, _ folder: URL, _ http: HTTPClient) async throws -> Void) async throws {
        let executable = try #require(BenchCommandTests.builtExecutable, "swift build puts bioauth beside the tests")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await body(executable, folder, http)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    /// Registers `payees` (id, name) in the SQLite file `database`, as the bank would, before a server starts on it.
    static func registerPayees(_ payees: [(String, String)], in database: URL) async throws {
        let executor = try await openDatabase(database.path, logger: Logger(label: "test-setup"))
        do {
            for (id, name) in payees { _ = try await PayeeRegistry(database: executor).register(id: id, name: name) }
        } catch {
            try? await executor.close()
            throw error
        }
        try await executor.close()
    }

    /// `BIOAUTH_*` settings for a quiet server whose key files live in `folder`, with `extra` on top.
    static func settings(in folder: URL, database: String = ":memory:", _ extra: [String: String] = [:]) -> [String: String] {
        [
            "BIOAUTH_DATABASE": database, "BIOAUTH_RECEIPT_KEY": folder.appendingPathComponent("receipt-key.pem").path,
            "BIOAUTH_PIN_KEY": folder.appendingPathComponent("pin-key").path, "BIOAUTH_LOG_LEVEL": "error",
        ].merging(extra) { $1 }
    }
}
