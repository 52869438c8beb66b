import BioAuthCore
import Foundation

extension BioAuthFlows {
    /// A new device's key waiting for a device bound before to approve it (a `bind_device` request).
    ///
    /// Show ``matchNumber`` large on this device ("Approve on your other iPhone and pick 47"), then
    /// ``BioAuthFlows/completeDeviceBinding(_:pollInterval:)``; ``BioAuthFlows/cancelDeviceBinding(_:)`` when the user gives
    /// up.
    public struct PendingDeviceBinding: Sendable {
        /// The request as the server made it.
        public let request: DeviceBindingRequest
        /// The number to show on this device: the customer picks it on the device that approves.
        public var matchNumber: Int { request.matchNumber }
        /// When the request expires unanswered.
        public var expiresAt: Date { request.expiresAt }
        let prepared: PreparedKey
    }

    /// Asks the account's bound devices to approve this one: a biometric prompt, a new key behind it, and a `bind_device`
    /// request naming this device and its biometry, which the bound devices list among their approvals. The customer
    /// approves it there and picks the number this device shows; a wrong pick denies it. Nothing is bound until
    /// ``completeDeviceBinding(_:pollInterval:)``.
    ///
    /// - Throws: `no_bound_device` when the account has no device that could approve (turn biometric sign-in on with
    ///   ``enableBiometricSignIn()``); `approval_limit` when the customer has as many requests waiting as allowed. The new
    ///   key is deleted on any failure.
    public func requestDeviceBinding() async throws -> PendingDeviceBinding {
        let prepared = try await prepareDeviceKey()
        do {
            let request = try await withAccessToken { token in
                try await self.api.requestDeviceBinding(
                    keyID: prepared.publicKey.keyID,
                    biometryKind: prepared.biometry,
                    deviceName: self.configuration.registeredDeviceName,
                    accessToken: token
                )
            }
            return PendingDeviceBinding(request: request, prepared: prepared)
        } catch {
            try? await keyStore.deleteKey(tag: prepared.tag)
            throw error
        }
    }

    /// Waits for the answer to `pending`, reading it every `pollInterval`, and once it is approved registers the key with
    /// it and turns biometric sign-in on (without another prompt). A denial (`access_denied`, or
    /// `approval_number_mismatch` after a wrong pick) or the request's end (`approval_expired`) deletes the key and
    /// changes nothing; so does cancelling the task.
    public func completeDeviceBinding(_ pending: PendingDeviceBinding, pollInterval: Duration = .seconds(2)) async throws {
        do {
            while true {
                let approval = try await withAccessToken { token in try await self.api.approval(pending.request.approvalID, accessToken: token) }
                switch approval.status {
                case "approved":
                    try await register(pending.prepared, evidence: .approval(id: approval.id))
                    return
                case "denied":
                    let mismatch = approval.denyReason == "number_mismatch"
                    throw APIProblem(
                        mismatch ? .approvalNumberMismatch : .accessDenied,
                        detail: mismatch ? "the number picked was not the one this device showed" : "the request was denied on the other device"
                    )
                case "expired":
                    throw APIProblem(.approvalExpired, detail: "the request expired before it was answered")
                default:
                    try await Task.sleep(for: pollInterval)
                }
            }
        } catch {
            try? await keyStore.deleteKey(tag: pending.prepared.tag)
            throw error
        }
    }

    /// Gives `pending` up: its key is deleted. The request itself expires on the server unanswered (or the customer
    /// denies it on the other device).
    public func cancelDeviceBinding(_ pending: PendingDeviceBinding) async {
        try? await keyStore.deleteKey(tag: pending.prepared.tag)
    }
}
