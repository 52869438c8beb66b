import BioAuthCore
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Decides a request's `Accept` header before the operation runs, and answers 406 `not_acceptable` when the client
/// accepts nothing the operation returns.
///
/// The generated server checks `Accept` only when it writes the response, after the operation has run: a request
/// that created an account or authorized a payment and sent `Accept: text/html` got a 500 while its change stayed
/// committed. Here the check comes first, so a refused request changes nothing. An acceptable header is then
/// removed from the request the generated code sees, which would otherwise parse it twice more per request (once
/// into the operation's input, which no handler reads, and once to check the response) — about a sixth of the
/// server's CPU for a request that does little else (docs/PERFORMANCE.md).
///
/// Problem documents (`application/problem+json`) are sent whatever `Accept` says, as RFC 9110 allows for error
/// responses: a client always learns why it was refused.
struct AcceptMiddleware: ServerMiddleware {
    /// The media type of `operationID`'s successful response as the contract has it: JSON, YAML for the contract
    /// itself, and none for the operations that answer 204 No Content (a test holds this to `openapi.yaml`).
    static func responseType(of operationID: String) -> AcceptHeader.MediaType? {
        switch operationID {
        case Operations.OpenAPIDocument.id: .init(type: "application", subtype: "yaml")
        case Operations.SignOut.id, Operations.ChangePassword.id, Operations.RevokeDevice.id, Operations.SetPaymentPIN.id: nil
        default: .json
        }
    }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let accept = request.headerFields[.accept] else { return try await next(request, body, metadata) }
        var request = request
        request.headerFields[.accept] = nil
        // An operation that answers with no content has nothing for Accept to choose; the header is ignored.
        guard let produced = Self.responseType(of: operationID) else { return try await next(request, body, metadata) }
        switch AcceptHeader.accepts(accept, produced) {
        case .yes:
            return try await next(request, body, metadata)
        case .no:
            throw APIError(.notAcceptable, "This operation answers with \(produced), which the Accept header excludes.")
        case .malformed:
            throw APIError(.malformedRequest, "The Accept header is not a list of media ranges.")
        }
    }
}

/// An HTTP `Accept` header (RFC 9110 §12.5.1), read only as far as the server needs: does it accept one media type?
enum AcceptHeader {
    /// A media type without parameters, in lower case.
    struct MediaType: Equatable, Sendable, CustomStringConvertible {
        var type: String
        var subtype: String
        static let json = MediaType(type: "application", subtype: "json")
        var description: String { "\(type)/\(subtype)" }
    }

    enum Answer: Equatable {
        case yes, no, malformed
    }

    /// Whether `header` accepts `mediaType`. The most specific matching range decides (`type/subtype` over `type/*`
    /// over `*/*`), and `q=0` means "not this". Parameters other than `q` do not narrow a range. A header with no
    /// ranges at all (empty, or only commas) accepts anything, like no header.
    static func accepts(_ header: String, _ mediaType: MediaType) -> Answer {
        // The values clients send most often, answered without parsing.
        if mediaType == .json, header == "application/json, application/problem+json" || header == "application/json" || header == "*/*" {
            return .yes
        }
        var best: (specificity: Int, quality: Int)?
        var sawRange = false
        for element in split(header[...], at: ",") {
            var parts = split(element, at: ";").makeIterator()
            let range = (parts.next() ?? "").trimmingCharacters(in: .whitespaces)
            if range.isEmpty {
                // An empty list element is allowed and ignored; one with parameters and no range is not.
                if parts.next() != nil { return .malformed }
                continue
            }
            guard let slash = range.firstIndex(of: "/") else { return .malformed }
            let type = range[..<slash].lowercased(), subtype = range[range.index(after: slash)...].lowercased()
            guard isToken(type), isToken(subtype), type != "*" || subtype == "*" else { return .malformed }
            var quality = 1000
            for parameter in parts {
                let parameter = parameter.trimmingCharacters(in: .whitespaces)
                guard let equals = parameter.firstIndex(of: "="), isToken(parameter[..<equals]) else { return .malformed }
                guard parameter[..<equals].lowercased() == "q" else { continue }
                guard let q = qualityValue(parameter[parameter.index(after: equals)...]) else { return .malformed }
                quality = q
                break  // what follows the weight is an extension the server does not use
            }
            sawRange = true
            let specificity =
                type == "*" ? 0
                : type != mediaType.type ? -1
                : subtype == "*" ? 1
                : subtype == mediaType.subtype ? 2 : -1
            guard specificity >= 0 else { continue }
            if let current = best, current.specificity > specificity || (current.specificity == specificity && current.quality >= quality) {
                continue
            }
            best = (specificity, quality)
        }
        guard sawRange else { return .yes }
        return (best?.quality ?? 0) > 0 ? .yes : .no
    }

    /// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, in thousandths.
    static func qualityValue(_ text: Substring) -> Int? {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1") else { return nil }
        var thousandths = first == UInt8(ascii: "1") ? 1000 : 0
        guard bytes.count > 1 else { return thousandths }
        guard bytes[1] == UInt8(ascii: "."), bytes.count <= 5 else { return nil }
        var scale = 100
        for digit in bytes[2...] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            thousandths += Int(digit - UInt8(ascii: "0")) * scale
            scale /= 10
        }
        return thousandths <= 1000 ? thousandths : nil
    }

    /// Splits at `separator` outside quoted strings (a parameter's value may be a quoted string with commas in it).
    static func split(_ text: Substring, at separator: Character) -> [Substring] {
        var pieces: [Substring] = []
        var start = text.startIndex, index = text.startIndex
        var quoted = false, escaped = false
        while index < text.endIndex {
            let character = text[index]
            if escaped {
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if !quoted && character == separator {
                pieces.append(text[start..<index])
                start = text.index(after: index)
            }
            index = text.index(after: index)
        }
        pieces.append(text[start...])
        return pieces
    }

    /// RFC 9110 `token`: one or more of the visible ASCII characters that are not delimiters.
    private static func isToken<S: StringProtocol>(_ text: S) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }
}
