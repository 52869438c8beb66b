import Foundation
import Logging

/// The request a task works for: its request id and, when the caller sent a W3C `traceparent`, its trace.
///
/// Set by the outermost middleware for the whole of a request, so every log line written while serving it (by the
/// access log, the handlers or the service) carries `request_id` and `trace_id` through
/// ``Logging/Logger/MetadataProvider/bioAuthRequest``.
public struct RequestTrace: Sendable, Equatable {
    /// The caller's `X-Request-Id` when it is 1-128 characters of `A-Z a-z 0-9 . _ : -`, else a new UUID.
    public let requestID: String
    /// The 32 hex digits of the caller's `traceparent` trace id, when it sent a valid one.
    public let traceID: String?
    /// The 16 hex digits of the caller's span (the `traceparent`'s parent id), when it sent a valid one.
    public let parentSpanID: String?

    /// The trace of the request being served by this task, if any.
    public static var current: RequestTrace? { RequestScope.current.trace }

    /// The trace of a request with these headers. A malformed `X-Request-Id` is replaced (it is echoed in a response
    /// header and written to logs, so only a safe alphabet is kept); a malformed `traceparent` is ignored, as W3C
    /// Trace Context says.
    public init(requestIDHeader: String?, traceparent: String?) {
        if let header = requestIDHeader, (1...128).contains(header.utf8.count),
            header.utf8.allSatisfy({ Self.requestIDBytes.contains($0) })
        {
            requestID = header
        } else {
            requestID = UUID().uuidString.lowercased()
        }
        let parsed = traceparent.flatMap(Self.parse(traceparent:))
        traceID = parsed?.trace
        parentSpanID = parsed?.span
    }

    private static let requestIDBytes = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-".utf8)

    /// W3C Trace Context §3.2: `version-traceid-parentid-flags`, lowercase hex; version `ff` and all-zero ids are
    /// invalid. A version other than `00` may carry more fields after the flags.
    static func parse(traceparent: String) -> (trace: String, span: String)? {
        let fields = traceparent.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count >= 4, fields[0].count == 2, fields[1].count == 32, fields[2].count == 16, fields[3].count == 2,
            fields.prefix(4).allSatisfy({ $0.utf8.allSatisfy { Self.lowercaseHex.contains($0) } }),
            fields[0] != "ff", fields[0] != "00" || fields.count == 4,
            fields[1].contains(where: { $0 != "0" }), fields[2].contains(where: { $0 != "0" })
        else { return nil }
        return (String(fields[1]), String(fields[2]))
    }

    private static let lowercaseHex = Set("0123456789abcdef".utf8)
}

extension Logger.MetadataProvider {
    /// Adds the current request's `request_id`, and `trace_id` and `parent_span_id` when the caller sent a trace, to
    /// every log line written while a request is served.
    public static let bioAuthRequest = Logger.MetadataProvider {
        guard let trace = RequestTrace.current else { return [:] }
        var metadata: Logger.Metadata = ["request_id": .string(trace.requestID)]
        if let traceID = trace.traceID { metadata["trace_id"] = .string(traceID) }
        if let span = trace.parentSpanID { metadata["parent_span_id"] = .string(span) }
        return metadata
    }
}
