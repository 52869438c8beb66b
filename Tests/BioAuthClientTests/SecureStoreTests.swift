import BioAuthClient
import BioAuthTesting
import Foundation
import Testing

/// One conformance suite for every ``SecureStore`` that runs on Linux.
@Suite("Secure stores")
struct SecureStoreTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case memory, file
        var testDescription: String { rawValue }
    }

    /// A folder of its own for a file store, which the caller removes.
    static func newFolder() -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("bioauth-store-\(UUID())") }

    /// Runs `body` with a new store of `kind`; a file store's folder is removed afterwards.
    static func withStore(_ kind: Kind, _ body: (any SecureStore) async throws -> Void) async throws {
        switch kind {
        case .memory:
            try await body(InMemorySecureStore())
        case .file:
            let folder = newFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            try await body(try FileSecureStore(directory: folder))
        }
    }

    @Test("values round-trip, are replaced and removed", arguments: Kind.allCases)
    func roundTrip(kind: Kind) async throws {
        try await Self.withStore(kind) { store in try await Self.roundTrip(store) }
    }

    static func roundTrip(_ store: any SecureStore) async throws {
        #expect(try await store.data(forKey: "a.b-c_1") == nil)
        #expect(try await !store.containsValue(forKey: "a.b-c_1"))
        try await store.set(Data("one".utf8), forKey: "a.b-c_1")
        #expect(try await store.data(forKey: "a.b-c_1") == Data("one".utf8))
        try await store.set(Data("two".utf8), forKey: "a.b-c_1")
        #expect(try await store.data(forKey: "a.b-c_1") == Data("two".utf8))
        #expect(try await store.containsValue(forKey: "a.b-c_1"))
        try await store.set(Data(), forKey: "empty")
        #expect(try await store.data(forKey: "empty") == Data())
        try await store.removeValue(forKey: "a.b-c_1")
        try await store.removeValue(forKey: "a.b-c_1")
        #expect(try await store.data(forKey: "a.b-c_1") == nil)
    }

    @Test("malformed keys are refused with a code and touch nothing", arguments: Kind.allCases)
    func invalidKeys(kind: Kind) async throws {
        try await Self.withStore(kind) { store in try await Self.refusesInvalidKeys(store) }
    }

    static func refusesInvalidKeys(_ store: any SecureStore) async throws {
        for key in ["", "..", ".", "../secret", "a/b", "a b", "名字", String(repeating: "k", count: 129), "a\u{0}b"] {
            do {
                try await store.set(Data("x".utf8), forKey: key)
                Issue.record("accepted \(key.debugDescription)")
            } catch let error as SecureStoreError {
                #expect(error.code == .invalidKey)
            }
        }
    }

    @Test("the file store keeps values across instances, owner-only")
    func filePersistence() async throws {
        let folder = Self.newFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await FileSecureStore(directory: folder).set(Data("kept".utf8), forKey: "session")
        #expect(try await FileSecureStore(directory: folder).data(forKey: "session") == Data("kept".utf8))
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(files == ["session.value"])
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("session.value").path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let folderAttributes = try FileManager.default.attributesOfItem(atPath: folder.path)
        #expect((folderAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    }
}
