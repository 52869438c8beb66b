import BioAuthClient
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A `SecureStore` in a folder, one file per key, for the command-line phone simulator.
///
/// **Not secure**: values are plain files, protected only by file permissions (folder 0700, files 0600).
/// Never use it in an app; the Keychain store is the real one.
public actor FileSecureStore: SecureStore {
    private let directory: URL

    /// A store in `directory`, created (0700) if missing.
    public init(directory: URL) throws {
        do {
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw SecureStoreError(.ioFailure, reason: "cannot create the store folder \(directory.path)")
        }
        self.directory = directory
    }

    /// The value stored under `key`, or `nil`.
    public func data(forKey key: String) throws -> Data? {
        let url = try fileURL(key)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw SecureStoreError(.ioFailure, reason: "cannot read \(url.lastPathComponent)")
        }
    }

    /// Stores `data` under `key` (written to a temporary file, then moved into place).
    public func set(_ data: Data, forKey key: String) throws {
        let url = try fileURL(key)
        let temporary = directory.appendingPathComponent(".\(key).\(UUID().uuidString).tmp")
        // Write the new value beside the old one with owner-only permissions, then rename over it, so a crash
        // leaves either the old value or the new one.
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw SecureStoreError(.ioFailure, reason: "cannot write \(url.lastPathComponent)") }
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw SecureStoreError(.ioFailure, reason: "cannot replace \(url.lastPathComponent)")
        }
    }

    /// Removes the value under `key`; removing what is not there is not an error.
    public func removeValue(forKey key: String) throws {
        let url = try fileURL(key)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            try FileManager.default.removeItem(at: url)
        } catch {
            throw SecureStoreError(.ioFailure, reason: "cannot remove \(url.lastPathComponent)")
        }
    }

    /// Whether a value is stored under `key`.
    public func containsValue(forKey key: String) throws -> Bool {
        FileManager.default.fileExists(atPath: try fileURL(key).path)
    }

    private func fileURL(_ key: String) throws -> URL {
        try Self.validate(key: key)  // no "/" and no ".." can reach the path
        return directory.appendingPathComponent(key + ".value")
    }
}
