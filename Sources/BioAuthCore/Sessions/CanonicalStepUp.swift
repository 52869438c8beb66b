import Crypto
import Foundation

/// An action of the sensitive-operations table (docs/PROTOCOL.md, "Step-up") that a step-up can be bound to. A step-up
/// bound to one action counts for that action only; one bound to none (``any``) for every action of the table.
public struct StepUpAction: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// Changing the account password.
    public static let changePassword = StepUpAction(rawValue: "change_password")
    /// Setting or changing the payment PIN.
    public static let setPaymentPIN = StepUpAction(rawValue: "set_payment_pin")
    /// Adding a passkey to the account.
    public static let addPasskey = StepUpAction(rawValue: "add_passkey")
    /// Revoking a device other than the session's own.
    public static let revokeDevice = StepUpAction(rawValue: "revoke_device")
    /// Revoking a passkey.
    public static let revokePasskey = StepUpAction(rawValue: "revoke_passkey")
    /// Creating the customer's recovery codes (a new set voids the old).
    public static let createRecoveryCodes = StepUpAction(rawValue: "create_recovery_codes")
    /// No one action: the step-up counts for every action of the table while it lasts.
    public static let any = StepUpAction(rawValue: "")

    /// Every action a step-up can be bound to, ``any`` aside.
    public static let all: [StepUpAction] = [.changePassword, .setPaymentPIN, .addPasskey, .revokeDevice, .revokePasskey, .createRecoveryCodes]

    /// The action as signed and sent: lowercase ASCII letters and `_`, or empty for ``any``.
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue.isEmpty ? "any" : rawValue }
}

/// The canonical bytes of a step-up, whose SHA-256 a `stepup` signature carries: the session it raises and the action it
/// is for, so that a signature made for one session, or for one action, is refused for another.
///
/// ```
/// "BIOAUTH" 0x00, version 0x01
/// "stepup"             u16 length ‖ ASCII
/// session id           u16 length ‖ UTF-8
/// action               u16 length ‖ ASCII (empty: any action of the table)
/// ```
public struct CanonicalStepUp: Hashable, Sendable {
    /// The session the step-up raises (`sid` in introspection).
    public let sessionID: String
    /// The action it is for, or ``StepUpAction/any``.
    public let action: StepUpAction

    /// A step-up of `sessionID` for `action`.
    ///
    /// - Throws: ``StepUpFormatError`` when the session id is not 1 to 255 bytes, or the action is over 64 bytes or holds
    ///   anything but lowercase ASCII letters and `_`.
    public init(sessionID: String, action: StepUpAction = .any) throws(StepUpFormatError) {
        guard (1...255).contains(sessionID.utf8.count) else { throw StepUpFormatError("the session id must be 1 to 255 bytes") }
        guard action.rawValue.utf8.count <= 64, action.rawValue.utf8.allSatisfy({ (0x61...0x7A).contains($0) || $0 == 0x5F }) else {
            throw StepUpFormatError("the action must be at most 64 lowercase ASCII letters and underscores")
        }
        self.sessionID = sessionID
        self.action = action
    }

    /// The canonical bytes.
    public var bytes: Data {
        var writer = CanonicalWriter(version: 1)
        writer.field(SignedPayload.Purpose.stepUp.rawValue)
        writer.field(sessionID)
        writer.field(action.rawValue)
        return writer.bytes
    }

    /// SHA-256 of ``bytes``: the `transactionHash` of a step-up's ``SignedPayload``.
    public var hash: Data { Data(SHA256.hash(data: bytes)) }
}

/// A step-up field is out of range.
public struct StepUpFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
