/// The kind of biometric sensor a device has, as LocalAuthentication reports it after a successful
/// availability check.
///
/// A struct of static members rather than an enum, so that a sensor Apple adds later does not break
/// callers that switch over the known ones. Its `rawValue` is the stable wire and storage value.
public struct BiometryKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    private enum Backing: String, CaseIterable {
        case none
        case touchID
        case faceID
        case opticID
    }

    private let backing: Backing

    /// No biometric sensor, or not known yet.
    public static let none = BiometryKind(.none)
    /// Touch ID (指纹 / 触控 ID).
    public static let touchID = BiometryKind(.touchID)
    /// Face ID (面容 ID).
    public static let faceID = BiometryKind(.faceID)
    /// Optic ID (Apple Vision Pro).
    public static let opticID = BiometryKind(.opticID)

    /// Every known kind, `none` first.
    public static let allKnown: [BiometryKind] = Backing.allCases.map(BiometryKind.init)

    private init(_ backing: Backing) { self.backing = backing }

    /// The wire value: `"none"`, `"touchID"`, `"faceID"` or `"opticID"`. Unknown values are refused.
    public init?(rawValue: String) {
        guard let backing = Backing(rawValue: rawValue) else { return nil }
        self.backing = backing
    }

    /// The stable name: `"faceID"`, `"touchID"`, `"opticID"` or `"none"`.
    public var rawValue: String { backing.rawValue }
    public var description: String { backing.rawValue }

    /// Whether this is an actual sensor (anything but ``none``).
    public var isBiometric: Bool { backing != .none }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let kind = BiometryKind(rawValue: raw) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown biometry kind")
        }
        self = kind
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
