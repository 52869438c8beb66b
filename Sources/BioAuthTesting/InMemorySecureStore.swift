import BioAuthClient
import Foundation

/// A ``BioAuthClient/SecureStore`` in memory. Gone when the process ends, which is what tests want.
/// Share one instance between two ``BioAuthClient/SessionMachine``s to simulate a relaunch.
public actor InMemorySecureStore: SecureStore {
    private var values: [String: Data] = [:]

    /// An empty store.
    public init() {}

    public func data(forKey key: String) throws -> Data? {
        try Self.validate(key: key)
        return values[key]
    }

    public func set(_ data: Data, forKey key: String) throws {
        try Self.validate(key: key)
        values[key] = data
    }

    public func removeValue(forKey key: String) throws {
        try Self.validate(key: key)
        values[key] = nil
    }

    public func containsValue(forKey key: String) throws -> Bool {
        try Self.validate(key: key)
        return values[key] != nil
    }

    /// Every key stored, sorted (for tests that check what was written).
    public var keys: [String] { values.keys.sorted() }
}
