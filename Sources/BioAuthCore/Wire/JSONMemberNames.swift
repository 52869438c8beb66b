import Foundation

/// Finds JSON objects that name a member twice (RFC 8259 §4 leaves their meaning open).
///
/// Parsers disagree on `{"amountMinor":100,"amountMinor":999}`: Foundation keeps the first value, most others
/// the last. A gateway or log in front of the server would then see a different payment than the one stored, so
/// the server refuses any body with such an object before decoding it. Names are compared after their escapes
/// are decoded and under Unicode canonical equivalence (`"a"`, `"\u0061"` are one name; so are `"é"` and
/// `"e\u0301"`), which is stricter than any parser that could disagree with us.
///
/// The scan is also a strict RFC 8259 syntax check with an explicit stack (no recursion, so deep nesting cannot
/// exhaust the stack) and a nesting limit.
public enum JSONMemberNames {
    /// What a scan found.
    public enum Finding: Equatable, Sendable {
        /// Valid JSON with no object naming a member twice.
        case unique
        /// Some object names a member more than once.
        case duplicate
        /// Not valid JSON (or nested deeper than allowed).
        case invalid
    }

    /// Nesting deeper than this is ``Finding/invalid``. Far beyond any request BioAuth takes.
    public static let maxDepth = 64

    /// Scans `bytes` (UTF-8 JSON text).
    public static func scan<Bytes: Collection>(_ bytes: Bytes) -> Finding where Bytes.Element == UInt8 {
        var scanner = Scanner(Array(bytes))
        return scanner.run()
    }

    private struct Scanner {
        /// One open container: an array, or an object with the names it has had so far.
        private enum Container {
            case array
            case object(Set<String>)
        }

        private let bytes: [UInt8]
        private var index = 0
        private var stack: [Container] = []

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func run() -> Finding {
            do {
                try value()
                skipWhitespace()
                return index == bytes.count ? .unique : .invalid
            } catch Stop.duplicate {
                return .duplicate
            } catch {
                return .invalid
            }
        }

        private enum Stop: Error { case invalid, duplicate }

        /// Reads one complete value, containers included, without recursion.
        private mutating func value() throws {
            while true {
                skipWhitespace()
                guard let byte = peek() else { throw Stop.invalid }
                switch byte {
                case UInt8(ascii: "{"):
                    index += 1
                    try push(.object([]))
                    skipWhitespace()
                    if peek() == UInt8(ascii: "}") {
                        index += 1
                        stack.removeLast()
                    } else {
                        try memberName()
                        continue
                    }
                case UInt8(ascii: "["):
                    index += 1
                    try push(.array)
                    skipWhitespace()
                    if peek() == UInt8(ascii: "]") {
                        index += 1
                        stack.removeLast()
                    } else {
                        continue
                    }
                case UInt8(ascii: "\""): _ = try string(keep: false)
                case UInt8(ascii: "t"): try literal("true")
                case UInt8(ascii: "f"): try literal("false")
                case UInt8(ascii: "n"): try literal("null")
                default: try number()
                }
                // A value ended: close containers that end here, or move to the next element or member.
                while let top = stack.last {
                    skipWhitespace()
                    guard let next = peek() else { throw Stop.invalid }
                    index += 1
                    switch (top, next) {
                    case (.array, UInt8(ascii: ",")): break
                    case (.object, UInt8(ascii: ",")):
                        skipWhitespace()
                        try memberName()
                    case (.array, UInt8(ascii: "]")), (.object, UInt8(ascii: "}")):
                        stack.removeLast()
                        continue
                    default: throw Stop.invalid
                    }
                    break
                }
                if stack.isEmpty { return }
            }
        }

        private mutating func push(_ container: Container) throws {
            guard stack.count < JSONMemberNames.maxDepth else { throw Stop.invalid }
            stack.append(container)
        }

        /// Reads `"name" :` inside the innermost object and records the name.
        private mutating func memberName() throws {
            guard peek() == UInt8(ascii: "\""), case .object(var names) = stack.last else { throw Stop.invalid }
            let name = try string(keep: true)
            guard names.insert(name).inserted else { throw Stop.duplicate }
            stack[stack.count - 1] = .object(names)
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw Stop.invalid }
            index += 1
        }

        /// Reads a string; returns its decoded text when `keep` (member names), `""` otherwise.
        private mutating func string(keep: Bool) throws -> String {
            index += 1  // the opening quote
            var scalars = String.UnicodeScalarView()
            var runStart = index
            func flush(_ end: Int) throws {
                guard keep, runStart < end else { return }
                guard let text = String(bytes: bytes[runStart..<end], encoding: .utf8) else { throw Stop.invalid }
                scalars.append(contentsOf: text.unicodeScalars)
            }
            while true {
                guard let byte = peek() else { throw Stop.invalid }
                switch byte {
                case UInt8(ascii: "\""):
                    try flush(index)
                    index += 1
                    if !keep {
                        // Values are not kept, but they must still be UTF-8.
                        guard String(bytes: bytes[runStart..<(index - 1)], encoding: .utf8) != nil else { throw Stop.invalid }
                    }
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    if !keep {
                        guard String(bytes: bytes[runStart..<index], encoding: .utf8) != nil else { throw Stop.invalid }
                    }
                    try flush(index)
                    index += 1
                    let scalar = try escape()
                    if keep { scalars.append(scalar) }
                    runStart = index
                case 0x00..<0x20: throw Stop.invalid
                default: index += 1
                }
            }
        }

        /// Reads what follows a backslash.
        private mutating func escape() throws -> Unicode.Scalar {
            guard let byte = peek() else { throw Stop.invalid }
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let unit = try hex4()
                if (0xD800..<0xDC00).contains(unit) {
                    // A high surrogate must be followed by an escaped low one.
                    guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else { throw Stop.invalid }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw Stop.invalid }
                    let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                    guard let scalar = Unicode.Scalar(value) else { throw Stop.invalid }
                    return scalar
                }
                guard let scalar = Unicode.Scalar(UInt32(unit)) else { throw Stop.invalid }  // a lone low surrogate
                return scalar
            default: throw Stop.invalid
            }
        }

        private mutating func hex4() throws -> UInt16 {
            guard index + 4 <= bytes.count else { throw Stop.invalid }
            var value: UInt16 = 0
            for byte in bytes[index..<(index + 4)] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw Stop.invalid
                }
                value = value << 4 | UInt16(digit)
            }
            index += 4
            return value
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        private mutating func number() throws {
            if peek() == UInt8(ascii: "-") { index += 1 }
            guard let first = peek(), isDigit(first) else { throw Stop.invalid }
            index += 1
            if first != UInt8(ascii: "0") { skipDigits() }
            if peek() == UInt8(ascii: ".") {
                index += 1
                guard let digit = peek(), isDigit(digit) else { throw Stop.invalid }
                skipDigits()
            }
            if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
                index += 1
                if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
                guard let digit = peek(), isDigit(digit) else { throw Stop.invalid }
                skipDigits()
            }
        }

        private mutating func literal(_ word: StaticString) throws {
            let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard index + expected.count <= bytes.count, bytes[index..<(index + expected.count)].elementsEqual(expected) else {
                throw Stop.invalid
            }
            index += expected.count
        }

        private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }
        private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        private mutating func skipDigits() { while let byte = peek(), isDigit(byte) { index += 1 } }
        private mutating func skipWhitespace() {
            while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }
    }
}
