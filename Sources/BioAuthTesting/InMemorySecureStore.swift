import BioAuthClient
import Foundation

/// A `SecureStore` in memory. Gone when the process ends, which is what tests want.
/// Share one instance between two `SessionMachine`s to simulate a relaunch.
public actor InMemorySecureStore: SecureStore {
    private var values: [String: Data] = [:]

    /// An empty store.
    public init() {}

    /// The value stored under `key`, or `nil`.
    public func data(forKey key: String) throws -> Data? {
        try Self.validate(key: key)
        return values[key]
    }

    /// Stores `data` under `key`.
    public func set(_ data: Data, forKey key: String) throws {
        try Self.validate(key: key)
        values[key] = data
    }

    /// Removes the value under `key`; removing what is not there is not an error.
    public func removeValue(forKey key: String) throws {
        try Self.validate(key: key)
        values[key] = nil
    }

    /// Whether a value is stored under `key`.
    public func containsValue(forKey key: String) throws -> Bool {
        try Self.validate(key: key)
        return values[key] != nil
    }

    /// Every key stored, sorted (for tests that check what was written).
    public var keys: [String] { values.keys.sorted() }
}
