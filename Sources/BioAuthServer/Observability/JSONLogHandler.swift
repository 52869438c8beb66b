import BioAuthCore
import Foundation
import Logging
import NIOConcurrencyHelpers

/// Writes each log line as one JSON object on standard error, for log collectors (`bioauth serve --log-format json`):
///
/// ```json
/// {"time":"2026-11-23T14:02:11.532Z","level":"info","message":"POST /v1/sessions 201 3.1ms","label":"bioauth","duration_ms":3.1,"method":"POST","request_id":"…","route":"/v1/sessions","status":201}
/// ```
///
/// `time` (UTC, milliseconds), `level`, `message` and `label` come first; the line's metadata follows as members in key
/// order, numbers as JSON numbers. The server never puts a token, password, PIN, challenge or signature into a log line, in either format.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (String) -> Void

    /// A handler for the logger `label`, adding `metadataProvider`'s metadata to every line.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil) {
        self.init(label: label, metadataProvider: metadataProvider, write: Self.standardError)
    }

    /// A handler that hands each line (with its newline) to `write` (tests).
    init(label: String, metadataProvider: Logger.MetadataProvider?, write: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `event` as one line. An error attached to the event (swift-log's `error:`) becomes the `error` member,
    /// unless the metadata already has one.
    public func log(event: LogEvent) {
        var all = self.metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { $1 } }
        if let explicit = event.metadata { all.merge(explicit) { $1 } }
        if let error = event.error, all["error"] == nil { all["error"] = "\(error)" }
        var text = "{\"time\":\(Self.quoted(Self.timestamp(Date()))),\"level\":\(Self.quoted(event.level.rawValue))"
        text += ",\"message\":\(Self.quoted(event.message.description)),\"label\":\(Self.quoted(label))"
        for key in all.keys.sorted() where !["time", "level", "message", "label"].contains(key) {
            text += ",\(Self.quoted(key)):\(Self.json(all[key]!))"
        }
        write(text + "}\n")
    }

    // MARK: Encoding

    private static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string): return quoted(string)
        case .stringConvertible(let value):
            if let number = value as? any BinaryInteger { return "\(number)" }
            if let number = value as? Double, number.isFinite { return "\(number)" }
            return quoted(value.description)
        case .array(let values): return "[" + values.map(json).joined(separator: ",") + "]"
        case .dictionary(let members):
            return "{" + members.keys.sorted().map { "\(quoted($0)):\(json(members[$0]!))" }.joined(separator: ",") + "}"
        }
    }

    /// `string` as a JSON string: quotes, backslashes and control characters escaped (RFC 8259 §7).
    static func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// RFC 3339 in UTC with milliseconds: `2026-11-23T14:02:11.532Z`.
    static func timestamp(_ date: Date) -> String {
        guard let seconds = try? InternetDateTime().encode(date) else { return "\(date)" }
        let since = date.timeIntervalSince1970
        let milliseconds = min(999, Int(((since - since.rounded(.down)) * 1000).rounded(.down)))
        return seconds.dropLast() + String(format: ".%03dZ", milliseconds)
    }

    private static let lock = NIOLock()

    /// One line to standard error, whole: lines from several threads never interleave.
    private static let standardError: @Sendable (String) -> Void = { line in
        lock.withLock { FileHandle.standardError.write(Data(line.utf8)) }
    }
}
