import Foundation
import Logging
import Testing

@testable import BioAuthServer

/// What the server leaves on disk: a new SQLite database and its journal owner-only, an old world-readable one warned
/// about, and a new key file said in the log (its path, never the key).
@Suite("Files on disk")
struct FilePermissionTests {
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bioauth-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func mode(_ path: String) throws -> Int {
        try #require((try FileManager.default.attributesOfItem(atPath: path))[.posixPermissions] as? NSNumber).intValue & 0o777
    }

    static func logger(_ sink: LogSink) -> Logger {
        var logger = Logger(label: "files") { _ in CapturingLogHandler(sink: sink) }
        logger.logLevel = .info
        return logger
    }

    @Test("a new SQLite database and its -wal and -shm files are readable by their owner only; an old world-readable one is warned about")
    func sqliteOwnerOnly() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("bioauth.sqlite").path
        let sink = LogSink()
        let database = try await SQLiteDatabaseExecutor.open(path: path, logger: Self.logger(sink))
        try await database.transaction { db in try await db.raw("CREATE TABLE written (x INTEGER)").run() }
        for file in [path, path + "-wal", path + "-shm"] {
            let mode = try Self.mode(file)
            #expect(mode == 0o600, "\(file): \(String(mode, radix: 8))")
        }
        try await database.close()
        #expect(!sink.text.contains("may be read by other users"))

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let again = try await SQLiteDatabaseExecutor.open(path: path, logger: Self.logger(sink))
        try await again.close()
        #expect(sink.text.contains("the database file may be read by other users of this machine: chmod 600 it"), "\(sink.text)")
        #expect(try Self.mode(path) == 0o644, "an existing file keeps its mode")
    }

    @Test("a key file made at start-up is said in the log with its path, never its contents; one that exists is not")
    func keyFileCreationLogged() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let sink = LogSink()
        let receipt = folder.appendingPathComponent("receipt-key.pem").path
        let pin = folder.appendingPathComponent("pin-key").path
        _ = try ReceiptSigner.load(path: receipt, logger: Self.logger(sink))
        _ = try Sealers.load(path: pin, logger: Self.logger(sink))
        let lines = sink.text.split(separator: "\n").filter { $0.contains("created a new key file") }
        #expect(lines.count == 2 && lines[0].contains(receipt) && lines[1].contains(pin), "\(sink.text)")
        #expect(try Self.mode(receipt) == 0o600 && (try Self.mode(pin)) == 0o600)
        let pinText = try String(contentsOfFile: pin, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!sink.text.contains(pinText) && !sink.text.contains("PRIVATE KEY"), "never the key")

        let before = sink.text
        _ = try ReceiptSigner.load(path: receipt, logger: Self.logger(sink))
        _ = try Sealers.load(path: pin, logger: Self.logger(sink))
        #expect(sink.text == before, "loading an existing key says nothing")
    }
}
