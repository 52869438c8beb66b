import Foundation

/// base64url without padding (RFC 4648 §5), the encoding of every binary value on BioAuth's wire.
///
/// Decoding is strict: padding, white space, characters of standard base64 and non-canonical trailing bits
/// are refused, so one value has exactly one spelling. Both directions work on bytes (no string
/// replacements): the server encodes and decodes several values per request.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each ASCII byte's 6-bit value, or 0xFF for a byte outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    /// Encodes `data`.
    public static func encode(_ data: Data) -> String {
        let count = data.count
        let length = (count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: length) { output in
            data.withUnsafeBytes { input in
                var out = 0
                var index = 0
                while index + 3 <= count {
                    let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    output[out] = alphabet[Int(chunk >> 18)]
                    output[out + 1] = alphabet[Int(chunk >> 12 & 0x3F)]
                    output[out + 2] = alphabet[Int(chunk >> 6 & 0x3F)]
                    output[out + 3] = alphabet[Int(chunk & 0x3F)]
                    out += 4
                    index += 3
                }
                switch count - index {
                case 1:
                    let chunk = UInt32(input[index]) << 16
                    output[out] = alphabet[Int(chunk >> 18)]
                    output[out + 1] = alphabet[Int(chunk >> 12 & 0x3F)]
                    out += 2
                case 2:
                    let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
                    output[out] = alphabet[Int(chunk >> 18)]
                    output[out + 1] = alphabet[Int(chunk >> 12 & 0x3F)]
                    output[out + 2] = alphabet[Int(chunk >> 6 & 0x3F)]
                    out += 3
                default: break
                }
                return out
            }
        }
    }

    /// Decodes `text`, or returns `nil` when it is not canonical unpadded base64url.
    public static func decode(_ text: String) -> Data? {
        var text = text
        return text.withUTF8 { input -> Data? in
            let count = input.count
            guard count % 4 != 1 else { return nil }
            var output = Data(count: count * 3 / 4)
            let complete = output.withUnsafeMutableBytes { (output: UnsafeMutableRawBufferPointer) -> Bool in
                var out = 0
                var accumulator: UInt32 = 0
                var bits = 0
                for byte in input {
                    let value = values[Int(byte)]
                    guard value != 0xFF else { return false }
                    accumulator = accumulator << 6 | UInt32(value)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        output[out] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                        out += 1
                    }
                }
                // The bits left over must be zero: otherwise two spellings would decode to the same bytes.
                return accumulator & ((1 << UInt32(bits)) - 1) == 0
            }
            return complete ? output : nil
        }
    }
}
