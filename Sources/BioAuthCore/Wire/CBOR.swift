import Foundation

/// A CBOR data item (RFC 8949), as far as WebAuthn and App Attest use it: integers, byte and text strings,
/// arrays, maps, booleans and null. Tags, floats, undefined and indefinite lengths are refused.
public indirect enum CBOR: Hashable, Sendable {
    /// A non-negative integer (major type 0).
    case unsigned(UInt64)
    /// A negative integer −1 − n (major type 1), stored as n.
    case negative(UInt64)
    /// A byte string.
    case bytes(Data)
    /// A UTF-8 text string.
    case text(String)
    /// An array.
    case array([CBOR])
    /// A map, in the order the pairs appear.
    case map([Pair])
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null

    /// One key–value pair of a map.
    public struct Pair: Hashable, Sendable {
        /// The key.
        public let key: CBOR
        /// The value.
        public let value: CBOR
        /// A pair.
        public init(_ key: CBOR, _ value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    /// The value under the text key `key` of a map, or `nil`.
    public subscript(key: String) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == .text(key) }?.value
    }

    /// The bytes of a byte string, or `nil`.
    public var bytesValue: Data? {
        if case .bytes(let data) = self { return data }
        return nil
    }

    /// The string of a text string, or `nil`.
    public var textValue: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    /// The items of an array, or `nil`.
    public var arrayValue: [CBOR]? {
        if case .array(let items) = self { return items }
        return nil
    }
}

/// Why CBOR input was refused. Every case is a stable code; the decoder never traps on any input.
public struct CBORError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stable code, e.g. `"cbor_truncated"`.
    public let code: String
    /// Where in the input (byte offset).
    public let offset: Int

    public var description: String { "\(code) at byte \(offset)" }

    static func truncated(_ offset: Int) -> CBORError { CBORError(code: "cbor_truncated", offset: offset) }
    static func unsupported(_ offset: Int) -> CBORError { CBORError(code: "cbor_unsupported", offset: offset) }
    static func nonCanonical(_ offset: Int) -> CBORError { CBORError(code: "cbor_non_minimal_length", offset: offset) }
    static func tooDeep(_ offset: Int) -> CBORError { CBORError(code: "cbor_too_deep", offset: offset) }
    static func tooLarge(_ offset: Int) -> CBORError { CBORError(code: "cbor_too_large", offset: offset) }
    static func invalidText(_ offset: Int) -> CBORError { CBORError(code: "cbor_invalid_utf8", offset: offset) }
    static func duplicateKey(_ offset: Int) -> CBORError { CBORError(code: "cbor_duplicate_key", offset: offset) }
    static func trailing(_ offset: Int) -> CBORError { CBORError(code: "cbor_trailing_bytes", offset: offset) }
}

/// A strict, bounded CBOR decoder for untrusted input.
///
/// Limits: the input size, the nesting depth and the total number of items are capped, so a hostile
/// document (a length of 2⁶⁴, ten thousand nested arrays, a million one-byte items) is refused quickly and
/// without large allocations. Lengths must use the shortest encoding; map keys must be unique.
public struct CBORDecoder: Sendable {
    /// Largest accepted input in bytes. 64 KiB by default (an App Attest attestation is about 5 KiB).
    public var maxInputSize: Int
    /// Deepest accepted nesting. 16 by default.
    public var maxDepth: Int
    /// Most data items in one document. 4096 by default.
    public var maxItems: Int

    /// A decoder with the given limits.
    public init(maxInputSize: Int = 64 * 1024, maxDepth: Int = 16, maxItems: Int = 4096) {
        self.maxInputSize = maxInputSize
        self.maxDepth = maxDepth
        self.maxItems = maxItems
    }

    /// Decodes exactly one item that spans all of `data`.
    public func decode(_ data: Data) throws(CBORError) -> CBOR {
        let (item, end) = try decodePrefix(data)
        guard end == data.count else { throw .trailing(end) }
        return item
    }

    /// Decodes one item at the start of `data`; returns it and the number of bytes it used.
    public func decodePrefix(_ data: Data) throws(CBORError) -> (CBOR, Int) {
        guard data.count <= maxInputSize else { throw .tooLarge(0) }
        var reader = Reader(bytes: [UInt8](data), limits: self)
        let item = try reader.item(depth: 0)
        return (item, reader.position)
    }

    private struct Reader {
        let bytes: [UInt8]
        let limits: CBORDecoder
        var position = 0
        var items = 0

        mutating func byte() throws(CBORError) -> UInt8 {
            guard position < bytes.count else { throw .truncated(position) }
            defer { position += 1 }
            return bytes[position]
        }

        /// The argument of a head whose additional information is `info`, shortest form required.
        mutating func argument(_ info: UInt8, at start: Int) throws(CBORError) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27:
                let count = 1 << Int(info - 24)
                guard bytes.count - position >= count else { throw .truncated(position) }
                var value: UInt64 = 0
                for _ in 0..<count { value = value << 8 | UInt64(try byte()) }
                let minimum: UInt64 = [24, 0x100, 0x1_0000, 0x1_0000_0000][Int(info - 24)]
                guard value >= minimum else { throw .nonCanonical(start) }
                return value
            default:
                throw .unsupported(start)  // 28-30 reserved, 31 indefinite length
            }
        }

        mutating func length(_ info: UInt8, at start: Int, perItem: Int) throws(CBORError) -> Int {
            let value = try argument(info, at: start)
            // Every element needs at least one byte, so a length beyond what is left is a lie.
            guard value <= UInt64(bytes.count - position) / UInt64(perItem) else { throw .truncated(start) }
            return Int(value)
        }

        mutating func item(depth: Int) throws(CBORError) -> CBOR {
            let start = position
            guard depth <= limits.maxDepth else { throw .tooDeep(start) }
            items += 1
            guard items <= limits.maxItems else { throw .tooLarge(start) }
            let head = try byte()
            let major = head >> 5
            let info = head & 0x1F
            switch major {
            case 0:
                return .unsigned(try argument(info, at: start))
            case 1:
                return .negative(try argument(info, at: start))
            case 2:
                let count = try length(info, at: start, perItem: 1)
                defer { position += count }
                return .bytes(Data(bytes[position..<position + count]))
            case 3:
                let count = try length(info, at: start, perItem: 1)
                defer { position += count }
                guard let text = String(bytes: bytes[position..<position + count], encoding: .utf8) else {
                    throw .invalidText(start)
                }
                return .text(text)
            case 4:
                let count = try length(info, at: start, perItem: 1)
                var array: [CBOR] = []
                array.reserveCapacity(count)
                for _ in 0..<count { array.append(try item(depth: depth + 1)) }
                return .array(array)
            case 5:
                let count = try length(info, at: start, perItem: 2)
                var pairs: [CBOR.Pair] = []
                pairs.reserveCapacity(count)
                var keys = Set<CBOR>()
                for _ in 0..<count {
                    let keyStart = position
                    let key = try item(depth: depth + 1)
                    guard keys.insert(key).inserted else { throw .duplicateKey(keyStart) }
                    pairs.append(CBOR.Pair(key, try item(depth: depth + 1)))
                }
                return .map(pairs)
            case 7:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                default: throw .unsupported(start)  // undefined, simple values, floats, break
                }
            default:
                throw .unsupported(start)  // tags (major type 6)
            }
        }
    }
}

/// Encodes ``CBOR`` items in the shortest form. Used to build test attestations and assertions.
public enum CBOREncoder {
    /// The encoding of `item`.
    public static func encode(_ item: CBOR) -> Data {
        var out = Data()
        write(item, to: &out)
        return out
    }

    private static func head(_ major: UInt8, _ value: UInt64, to out: inout Data) {
        switch value {
        case 0..<24: out.append(major << 5 | UInt8(value))
        case 24..<0x100: out.append(contentsOf: [major << 5 | 24, UInt8(value)])
        case 0x100..<0x1_0000:
            out.append(major << 5 | 25)
            append(value, bytes: 2, to: &out)
        case 0x1_0000..<0x1_0000_0000:
            out.append(major << 5 | 26)
            append(value, bytes: 4, to: &out)
        default:
            out.append(major << 5 | 27)
            append(value, bytes: 8, to: &out)
        }
    }

    private static func append(_ value: UInt64, bytes: Int, to out: inout Data) {
        for shift in stride(from: (bytes - 1) * 8, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    private static func write(_ item: CBOR, to out: inout Data) {
        switch item {
        case .unsigned(let value): head(0, value, to: &out)
        case .negative(let value): head(1, value, to: &out)
        case .bytes(let data):
            head(2, UInt64(data.count), to: &out)
            out.append(data)
        case .text(let text):
            let utf8 = Data(text.utf8)
            head(3, UInt64(utf8.count), to: &out)
            out.append(utf8)
        case .array(let items):
            head(4, UInt64(items.count), to: &out)
            for element in items { write(element, to: &out) }
        case .map(let pairs):
            head(5, UInt64(pairs.count), to: &out)
            for pair in pairs {
                write(pair.key, to: &out)
                write(pair.value, to: &out)
            }
        case .bool(let value): out.append(value ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        }
    }
}
