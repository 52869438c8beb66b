import BioAuthCore
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Refuses a request whose form body, query or path holds a value that begins with U+FEFF, sent raw or as `%EF%BB%BF`.
///
/// The generated code percent-decodes those values through Foundation, whose UTF-8 decoding drops a leading U+FEFF (a
/// byte order mark): what the handler saw was not what was sent. A `binding_message` of U+FEFF and a text would be shown
/// and signed as the text alone. Every other invisible character reaches the rules, which refuse it; this one is refused
/// here, with `malformed_request`, before anything is read or written. JSON bodies keep it (their decoder does not
/// drop it), so the rules see it there.
///
/// It runs after ``CredentialMiddleware``, as ``StrictJSONMiddleware`` does.
struct ByteOrderMarkMiddleware: ServerMiddleware {
    let maxBodySize: Int

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        if let path = request.path, Self.hasLeadingMark(path.utf8, separators: Self.pathSeparators) {
            throw Self.refusal
        }
        guard let body, Self.isForm(request.headerFields[.contentType]) else { return try await next(request, body, metadata) }
        let bytes = try await [UInt8](collecting: body, upTo: maxBodySize)
        if Self.hasLeadingMark(bytes, separators: Self.formSeparators) { throw Self.refusal }
        return try await next(request, HTTPBody(bytes), metadata)
    }

    static let refusal = APIError(
        .malformedRequest,
        "A value of the request begins with U+FEFF (an invisible byte order mark), which would be dropped unseen: remove it."
    )

    /// What separates values in a form body: `name=value&name=value`.
    static let formSeparators: Set<UInt8> = [UInt8(ascii: "&"), UInt8(ascii: "=")]
    /// What separates values in a path and its query: `/segment/segment?name=value&name=value`.
    static let pathSeparators: Set<UInt8> = formSeparators.union([UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: ";")])

    /// Whether one of the values of `encoded` (split at `separators`) decodes to bytes that begin with EF BB BF, the UTF-8
    /// of U+FEFF: written raw or percent-encoded, in any mix.
    static func hasLeadingMark(_ encoded: some Sequence<UInt8>, separators: Set<UInt8>) -> Bool {
        let bytes = Array(encoded)
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        var decoded: [UInt8] = []
        var atStart = true
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if separators.contains(byte) {
                (decoded, atStart) = ([], true)
                continue
            }
            guard atStart else { continue }
            // The value's next decoded byte: `%XX`, or the byte itself.
            var value = byte
            if byte == UInt8(ascii: "%"), index + 1 < bytes.count, let high = hex(bytes[index]), let low = hex(bytes[index + 1]) {
                value = high << 4 | low
                index += 2
            }
            decoded.append(value)
            if decoded == mark { return true }
            if !mark.starts(with: decoded) { atStart = false }
        }
        return false
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Whether a `Content-Type` is a form (`application/x-www-form-urlencoded`, any parameters).
    static func isForm(_ contentType: String?) -> Bool {
        contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() == "application/x-www-form-urlencoded"
    }
}
