import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A secret the server keeps in a file of its own, outside the database (the receipt-signing key, the PIN key):
/// read when the file exists, otherwise made and written with owner-only permissions. An existing file is never
/// replaced, even when it cannot be read: losing a key must be a decision, not an accident.
enum SecretFile {
    /// The contents of the file at `path` parsed by `parse`, or — when there is no file — `make()`'s secret,
    /// written there first (mode 0600, created exclusively) and said at `notice` on `logger` (the file, never the
    /// secret): a new key where one was expected means the old one is lost, and must not pass unseen. `what` names the
    /// secret in errors and in that line.
    static func loadOrCreate<Secret>(
        path: String,
        what: String,
        logger: Logger? = nil,
        parse: (String) -> Secret?,
        make: () -> (secret: Secret, text: String)
    ) throws -> Secret {
        if FileManager.default.fileExists(atPath: path) {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8), let secret = parse(text) else {
                throw ConfigurationError(message: "the \(what) file \(path) cannot be read as one")
            }
            return secret
        }
        let made = make()
        try create(path: path, text: made.text, what: what)
        logger?.notice(
            "created a new key file: back it up now, the server cannot work without it on another start",
            metadata: ["file": "\(path)", "key": "\(what)"]
        )
        return made.secret
    }

    /// Writes `text` to a new file at `path` (mode 0600, created exclusively: an existing file is an error).
    static func create(path: String, text: String, what: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw ConfigurationError(message: "cannot create the \(what) file \(path)") }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else {
            throw ConfigurationError(message: "cannot write the \(what) file \(path)")
        }
    }
}
