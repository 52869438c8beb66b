import Foundation

/// Proof, signed by the server's receipt key, that a customer approved a request on their phone. The bank's backend
/// verifies it offline, as it verifies a payment receipt, with the key published at `GET /v1/receipt-keys`.
///
/// The signature (ECDSA P-256 / SHA-256, DER, base64url) covers ``signedBytes()``:
///
/// ```
/// "BIOAUTH" 0x00, version 0x01
/// "approved"           u16 length ‖ ASCII
/// receipt key id       u16 length ‖ 32 bytes (SHA-256 of the server key's X9.63 form)
/// approval hash        u16 length ‖ 32 bytes (SHA-256 of the CanonicalApproval of the fields below)
/// account id           u16 length ‖ UTF-8
/// device key id        u16 length ‖ 32 bytes (the approving phone's key)
/// amr                  u16 length ‖ ASCII, the methods joined by one space (e.g. "hwk face")
/// approved at          u64 big-endian, milliseconds since 1970
/// ```
public struct SignedApproval: Codable, Hashable, Sendable {
    /// Format version (1).
    public var version: Int
    /// The approval request.
    public var approvalId: String
    /// The customer who approved.
    public var accountId: String
    /// `"sign_in"` or `"operation"`.
    public var kind: String
    /// The asking service's display name, as shown.
    public var requester: String
    /// The operation's message (or the new device, for a binding) as shown; absent for a sign-in.
    public var bindingMessage: String?
    /// The channel's browser as shown, when known.
    public var channelBrowser: String?
    /// The channel's platform as shown, when known.
    public var channelPlatform: String?
    /// The channel's client address as shown, when known.
    public var channelAddress: String?
    /// The number the user picked, for a sign-in or a binding.
    public var number: Int?
    /// When the request was made, in milliseconds since 1970.
    public var createdAtMs: Int64
    /// The approving device key's id, base64url.
    public var deviceKeyId: String
    /// How the customer approved (RFC 8176): `hwk` and the biometric that unlocked the key.
    public var amr: [String]
    /// When it was approved, in milliseconds since 1970.
    public var approvedAtMs: Int64
    /// The server receipt key's id, base64url.
    public var keyId: String
    /// The signature, base64url.
    public var signature: String

    /// An approval of `approval` by the device key `deviceKeyID` (the server fills in ``keyId`` and ``signature``).
    public init(
        _ approval: CanonicalApproval,
        accountId: String,
        deviceKeyID: Data,
        amr: [String],
        approvedAtMs: Int64,
        keyId: String = "",
        signature: String = ""
    ) {
        self.version = 1
        self.approvalId = approval.approvalID
        self.accountId = accountId
        self.kind = approval.kind.rawValue
        self.requester = approval.requester
        self.bindingMessage = approval.bindingMessage.isEmpty ? nil : approval.bindingMessage
        self.channelBrowser = approval.channel.browser.isEmpty ? nil : approval.channel.browser
        self.channelPlatform = approval.channel.platform.isEmpty ? nil : approval.channel.platform
        self.channelAddress = approval.channel.address.isEmpty ? nil : approval.channel.address
        self.number = approval.kind.matchesNumber ? Int(approval.number) : nil
        self.createdAtMs = approval.createdAtMs
        self.deviceKeyId = Base64URL.encode(deviceKeyID)
        self.amr = amr
        self.approvedAtMs = approvedAtMs
        self.keyId = keyId
        self.signature = signature
    }

    /// A signed approval exactly as it arrived on the wire; ``isValid(signedBy:)`` decides whether it is any good.
    public init(
        version: Int,
        approvalId: String,
        accountId: String,
        kind: String,
        requester: String,
        bindingMessage: String?,
        channelBrowser: String?,
        channelPlatform: String?,
        channelAddress: String?,
        number: Int?,
        createdAtMs: Int64,
        deviceKeyId: String,
        amr: [String],
        approvedAtMs: Int64,
        keyId: String,
        signature: String
    ) {
        self.version = version
        self.approvalId = approvalId
        self.accountId = accountId
        self.kind = kind
        self.requester = requester
        self.bindingMessage = bindingMessage
        self.channelBrowser = channelBrowser
        self.channelPlatform = channelPlatform
        self.channelAddress = channelAddress
        self.number = number
        self.createdAtMs = createdAtMs
        self.deviceKeyId = deviceKeyId
        self.amr = amr
        self.approvedAtMs = approvedAtMs
        self.keyId = keyId
        self.signature = signature
    }

    /// The approval request the fields describe, or `nil` when they are not a valid one.
    public var approval: CanonicalApproval? {
        guard let kind = CanonicalApproval.Kind(rawValue: kind) else { return nil }
        let number: UInt8
        switch (kind.matchesNumber, self.number) {
        case (true, .some(let value)) where (10...99).contains(value): number = UInt8(value)
        case (false, .none): number = 0
        default: return nil
        }
        return try? CanonicalApproval(
            approvalID: approvalId,
            kind: kind,
            requester: requester,
            bindingMessage: bindingMessage ?? "",
            channel: .init(browser: channelBrowser ?? "", platform: channelPlatform ?? "", address: channelAddress ?? ""),
            number: number,
            createdAtMs: createdAtMs
        )
    }

    /// The bytes the signature covers, or `nil` when a field is malformed.
    public func signedBytes() -> Data? {
        guard version == 1, let approval, let keyID = Base64URL.decode(keyId), keyID.count == 32,
            let deviceKeyID = Base64URL.decode(deviceKeyId), deviceKeyID.count == 32, approvedAtMs >= 0,
            (1...255).contains(accountId.utf8.count), !amr.isEmpty,
            amr.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (0x61...0x7A).contains($0) } })
        else { return nil }
        var writer = CanonicalWriter(version: 1)
        writer.field("approved")
        writer.field(keyID)
        writer.field(approval.hash)
        writer.field(accountId)
        writer.field(deviceKeyID)
        writer.field(amr.joined(separator: " "))
        writer.uint64(UInt64(approvedAtMs))
        return writer.bytes
    }

    /// Whether this approval was signed by `serverKey` and is intact. Never throws: anything malformed is simply not
    /// valid.
    public func isValid(signedBy serverKey: DevicePublicKey) -> Bool {
        guard Base64URL.decode(keyId) == serverKey.keyID, let bytes = signedBytes(), let signature = Base64URL.decode(signature)
        else { return false }
        return serverKey.isValidSignature(signature, for: bytes)
    }
}
