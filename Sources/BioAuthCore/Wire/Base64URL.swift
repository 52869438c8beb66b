import Foundation

/// base64url without padding (RFC 4648 §5), the encoding of every binary value on BioAuth's wire.
///
/// Decoding is strict: padding, white space, characters of standard base64 and non-canonical trailing bits
/// are refused, so one value has exactly one spelling.
public enum Base64URL {
    /// Encodes `data`.
    public static func encode(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes `text`, or returns `nil` when it is not canonical unpadded base64url.
    public static func decode(_ text: String) -> Data? {
        let utf8 = text.utf8
        guard utf8.count % 4 != 1,
            utf8.allSatisfy({ byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == 0x2D || byte == 0x5F
            })
        else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: standard), encode(data) == text else { return nil }
        return data
    }
}
