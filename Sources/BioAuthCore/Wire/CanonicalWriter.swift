import Foundation

/// Writes BioAuth's canonical binary encodings: the domain `"BIOAUTH" 0x00`, a version byte, then fields
/// that are either fixed-size big-endian integers or `u16 length ‖ bytes`. Shared by every format that is
/// hashed or signed, so all of them are unambiguous in the same way.
struct CanonicalWriter {
    /// The leading bytes of every canonical encoding.
    static let domain = Data("BIOAUTH\u{0}".utf8)

    private(set) var bytes: Data

    /// Starts an encoding of `version`.
    init(version: UInt8) {
        bytes = Self.domain
        bytes.append(version)
    }

    /// Appends `u16 big-endian length ‖ value`. Callers keep values under 65,536 bytes.
    mutating func field(_ value: Data) {
        precondition(value.count <= 0xFFFF, "canonical fields are at most 65535 bytes")
        bytes.append(UInt8(value.count >> 8))
        bytes.append(UInt8(value.count & 0xFF))
        bytes.append(value)
    }

    /// Appends a UTF-8 string as a length-prefixed field.
    mutating func field(_ value: String) { field(Data(value.utf8)) }

    /// Appends 8 bytes, big-endian.
    mutating func uint64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// Appends one byte.
    mutating func uint8(_ value: UInt8) { bytes.append(value) }
}
