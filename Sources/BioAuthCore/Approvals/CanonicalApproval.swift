import Crypto
import Foundation

/// The canonical bytes of an approval request, whose SHA-256 an `approval` signature carries: the phone signs exactly
/// what it showed (who asks, what for, from where, and the number the user picked), and the server recomputes the
/// same bytes from its own record.
///
/// ```
/// "BIOAUTH" 0x00, version 0x01
/// "approval"           u16 length ‖ ASCII
/// approval id          u16 length ‖ UTF-8
/// kind                 u16 length ‖ ASCII ("sign_in", "operation" or "bind_device")
/// requester            u16 length ‖ UTF-8, the asking service's display name as shown
/// binding message      u16 length ‖ UTF-8, as shown (empty for a sign-in; the new device for a binding)
/// channel browser      u16 length ‖ UTF-8 (empty when not known)
/// channel platform     u16 length ‖ UTF-8 (empty when not known)
/// channel address      u16 length ‖ UTF-8 (empty when not known)
/// number               1 byte: the number the user picked, 10-99, for a sign-in or a binding; 0 for an operation
/// created at           u64 big-endian, milliseconds since 1970
/// ```
public struct CanonicalApproval: Hashable, Sendable {
    /// What is to be approved.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// A sign-in on another channel (a web page, a branch terminal, the call centre's system); number matching.
        case signIn = "sign_in"
        /// An operation the bank describes in a short message shown verbatim.
        case operation
        /// A new device that asks to be bound to the account, described in the binding message (its name, model and
        /// biometry); number matching against the number the new device shows.
        case bindDevice = "bind_device"

        /// Whether the user picks the number the other channel (or the new device) shows.
        public var matchesNumber: Bool { self != .operation }
    }

    /// Where a sign-in request comes from, as shown to the user; each part may be unknown (empty).
    public struct Channel: Hashable, Sendable {
        /// The browser, e.g. `"Chrome"`.
        public var browser: String
        /// The platform, e.g. `"macOS"`.
        public var platform: String
        /// The client address the request came from.
        public var address: String

        public init(browser: String = "", platform: String = "", address: String = "") {
            self.browser = browser
            self.platform = platform
            self.address = address
        }

        /// No channel details.
        public static let unknown = Channel()
    }

    /// The request's id on the server.
    public let approvalID: String
    /// What is to be approved.
    public let kind: Kind
    /// The asking service's display name.
    public let requester: String
    /// The operation's message, or the new device a binding would bind; empty for a sign-in.
    public let bindingMessage: String
    /// Where a sign-in comes from.
    public let channel: Channel
    /// The number the user picked (10-99) for a sign-in or a binding; 0 for an operation.
    public let number: UInt8
    /// When the request was made, in milliseconds since 1970.
    public let createdAtMs: Int64

    /// An approval with these fields.
    ///
    /// - Throws: ``ApprovalFormatError`` when the id or requester is empty or a text field is over 255 bytes, an
    ///   operation or a binding has no message or a sign-in has one, a sign-in's or a binding's number is not 10-99 or an
    ///   operation's not 0, or the time is negative.
    public init(
        approvalID: String,
        kind: Kind,
        requester: String,
        bindingMessage: String = "",
        channel: Channel = .unknown,
        number: UInt8,
        createdAtMs: Int64
    ) throws(ApprovalFormatError) {
        for (name, value) in [("approval id", approvalID), ("requester", requester)] where !(1...255).contains(value.utf8.count) {
            throw ApprovalFormatError("the \(name) must be 1 to 255 bytes")
        }
        for (name, value) in [
            ("binding message", bindingMessage), ("browser", channel.browser), ("platform", channel.platform), ("address", channel.address),
        ] where value.utf8.count > 255 {
            throw ApprovalFormatError("the \(name) must be at most 255 bytes")
        }
        switch kind {
        case .signIn:
            guard bindingMessage.isEmpty else { throw ApprovalFormatError("a sign-in carries no binding message") }
            guard (10...99).contains(number) else { throw ApprovalFormatError("a sign-in's number must be 10 to 99") }
        case .operation:
            guard !bindingMessage.isEmpty else { throw ApprovalFormatError("an operation needs a binding message") }
            guard number == 0 else { throw ApprovalFormatError("an operation's number must be 0") }
        case .bindDevice:
            guard !bindingMessage.isEmpty else { throw ApprovalFormatError("a binding needs a binding message") }
            guard (10...99).contains(number) else { throw ApprovalFormatError("a binding's number must be 10 to 99") }
        }
        guard createdAtMs >= 0 else { throw ApprovalFormatError("the time must not be negative") }
        self.approvalID = approvalID
        self.kind = kind
        self.requester = requester
        self.bindingMessage = bindingMessage
        self.channel = channel
        self.number = number
        self.createdAtMs = createdAtMs
    }

    /// An approval of what the phone shows with the number the user `picked` (a sign-in's or a binding's; an operation has
    /// none, and it is not read).
    ///
    /// - Throws: ``ApprovalFormatError`` as the other initializer does; a sign-in or a binding without a number 10-99 among them.
    public init(
        approvalID: String,
        kind: Kind,
        requester: String,
        bindingMessage: String = "",
        channel: Channel = .unknown,
        picked: Int?,
        createdAtMs: Int64
    ) throws(ApprovalFormatError) {
        try self.init(
            approvalID: approvalID,
            kind: kind,
            requester: requester,
            bindingMessage: bindingMessage,
            channel: channel,
            number: kind.matchesNumber ? UInt8(clamping: picked ?? 0) : 0,
            createdAtMs: createdAtMs
        )
    }

    /// The canonical bytes.
    public var bytes: Data {
        var writer = CanonicalWriter(version: 1)
        writer.field("approval")
        writer.field(approvalID)
        writer.field(kind.rawValue)
        writer.field(requester)
        writer.field(bindingMessage)
        writer.field(channel.browser)
        writer.field(channel.platform)
        writer.field(channel.address)
        writer.uint8(number)
        writer.uint64(UInt64(createdAtMs))
        return writer.bytes
    }

    /// SHA-256 of ``bytes``: the `transactionHash` of an approval's ``SignedPayload``.
    public var hash: Data { Data(SHA256.hash(data: bytes)) }
}

/// An approval field is out of range.
public struct ApprovalFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
