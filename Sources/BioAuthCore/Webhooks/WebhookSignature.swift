import Crypto
import Foundation

/// The `BioAuth-Signature` header of a webhook delivery: made by the server, checked by the bank's backend.
///
/// The header is `t=<unix seconds>,v1=<hex>` with one `v1` per live endpoint secret (two during a rotation). Each `v1`
/// is HMAC-SHA256, keyed with the secret's UTF-8 bytes (the whole `whsec_…` text), over the timestamp's decimal digits,
/// a `.`, and the request body exactly as received, written as 64 lowercase hex digits.
///
/// A receiver verifies the exact bytes it read, before parsing them:
///
/// ```swift
/// // Partial: assumes signatureHeader: String?; rawBody: Data
/// let signature = WebhookSignature(secret: "whsec_…")  // from POST /v1/service/webhook-endpoints
/// try signature.verify(header: signatureHeader, body: rawBody)  // the request's BioAuth-Signature header, its raw body
/// let event = try JSONSerialization.jsonObject(with: rawBody)  // only now parsed; deduplicate by its "id"
/// ```
///
/// Verification passes when any `v1` matches (compared in constant time) and the timestamp is within ``tolerance`` of
/// the receiver's clock, so a captured delivery cannot be replayed later. Deliveries are at least once: deduplicate
/// by the event id.
public struct WebhookSignature: Sendable {
    /// The header's name.
    public static let headerName = "BioAuth-Signature"

    /// Why a delivery did not verify.
    public enum Failure: Error, Equatable, Sendable {
        /// No header, or one that is not `t=…,v1=…` (no timestamp, or no `v1`).
        case malformedHeader
        /// The timestamp is further than the tolerance from now: an old delivery replayed, or a clock far off.
        case timestampOutsideTolerance
        /// No `v1` is the HMAC of this body and timestamp under this secret.
        case signatureMismatch
    }

    /// The endpoint's secret, `whsec_` and 43 base64url characters.
    public let secret: String
    /// How far the timestamp may be from now, either way: 5 minutes unless given.
    public let tolerance: TimeInterval

    /// A verifier (or signer) for one secret. During a rotation, a receiver that already has the new secret checks with
    /// it; the old one keeps verifying until it expires.
    public init(secret: String, tolerance: TimeInterval = 300) {
        self.secret = secret
        self.tolerance = tolerance
    }

    /// The `v1` value for `body` sent at `timestamp` (unix seconds).
    public func signature(body: Data, timestamp: Int64) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Self.signedContent(body: body, timestamp: timestamp), using: key)
        return Data(mac).map { String(format: "%02x", $0) }.joined()
    }

    /// The header the server sends: the timestamp and one `v1` for each of `secrets`, in order.
    public static func header(body: Data, timestamp: Int64, secrets: [String]) -> String {
        (["t=\(timestamp)"] + secrets.map { "v1=" + WebhookSignature(secret: $0).signature(body: body, timestamp: timestamp) })
            .joined(separator: ",")
    }

    /// Checks `header` against `body` and this secret at `now`; returns the signed timestamp.
    @discardableResult
    public func verify(header: String?, body: Data, now: Date = Date()) throws(Failure) -> Int64 {
        guard let header, header.utf8.count <= 1024 else { throw .malformedHeader }
        var timestamp: Int64?
        var candidates: [Data] = []
        for part in header.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.trimmingCharacters(in: .whitespaces)
            guard let equals = pair.firstIndex(of: "=") else { throw .malformedHeader }
            let name = pair[..<equals]
            let value = pair[pair.index(after: equals)...]
            switch name {
            case "t":
                guard timestamp == nil, value.utf8.count <= 12, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let seconds = Int64(value)
                else { throw .malformedHeader }
                timestamp = seconds
            case "v1":
                guard let bytes = Self.hexBytes(value), bytes.count == 32 else { throw .malformedHeader }
                candidates.append(bytes)
            default:
                continue  // a later scheme (v2, …) this verifier does not know
            }
        }
        guard let timestamp, !candidates.isEmpty else { throw .malformedHeader }
        guard abs(now.timeIntervalSince1970 - Double(timestamp)) <= tolerance else { throw .timestampOutsideTolerance }
        let content = Self.signedContent(body: body, timestamp: timestamp)
        guard candidates.contains(where: { HMAC<SHA256>.isValidAuthenticationCode($0, authenticating: content, using: key) }) else {
            throw .signatureMismatch
        }
        return timestamp
    }

    private var key: SymmetricKey { SymmetricKey(data: Data(secret.utf8)) }

    private static func signedContent(body: Data, timestamp: Int64) -> Data {
        Data("\(timestamp).".utf8) + body
    }

    private static func hexBytes(_ text: Substring) -> Data? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes = Data(capacity: digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: digit - 0x30
        case 0x61...0x66: digit - 0x61 + 10
        case 0x41...0x46: digit - 0x41 + 10
        default: nil
        }
    }
}
