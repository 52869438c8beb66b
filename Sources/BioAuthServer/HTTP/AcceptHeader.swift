import Foundation

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
            let type = range[..<slash].lowercased()
            let subtype = range[range.index(after: slash)...].lowercased()
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
                type == "*"
                ? 0
                : type != mediaType.type
                    ? -1
                    : subtype == "*"
                        ? 1
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
        var start = text.startIndex
        var index = text.startIndex
        var quoted = false
        var escaped = false
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
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
                default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }
}
