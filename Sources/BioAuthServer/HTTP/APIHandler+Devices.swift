import BioAuthCore
import Foundation
import OpenAPIRuntime

/// Device binding: registration challenges, registration (by the binding policy), the request for a bound device's
/// approval, listing and revocation.
extension APIHandler {
    // MARK: Devices

    func createRegistrationChallenge(
        _ input: Operations.CreateRegistrationChallenge.Input
    ) async throws
        -> Operations.CreateRegistrationChallenge.Output
    {
        .created(.init(body: .json(issued(try await service.createRegistrationChallenge(session: try session())))))
    }

    func registerDevice(_ input: Operations.RegisterDevice.Input) async throws -> Operations.RegisterDevice.Output {
        guard case .json(let request) = input.body else { throw Self.unreadableBody }
        let session = try session()
        let registration = try DeviceRegistration(
            challengeID: request.challengeId,
            publicKey: request.publicKey,
            keyID: request.keyId,
            biometryKind: try BiometryKind(request.biometryKind),
            name: request.deviceName,
            counter: request.counter,
            signature: request.signature,
            appAttest: request.appAttest.map { ($0.keyId, $0.attestation) },
            approvalID: request.approvalId,
            bindingCode: request.bindingCode,
            recoveryCode: request.recoveryCode
        )
        return .created(.init(body: .json(try .init(try await service.registerDevice(session: session, registration)))))
    }

    func requestDeviceBinding(_ input: Operations.RequestDeviceBinding.Input) async throws -> Operations.RequestDeviceBinding.Output {
        guard case .json(let request) = input.body else { throw Self.unreadableBody }
        let issued = try await service.requestBindingApproval(
            keyID: request.keyId,
            name: request.deviceName,
            biometryKind: try BiometryKind(request.biometryKind),
            session: try session()
        )
        return .created(
            .init(body: .json(.init(approvalId: issued.approval.id, matchNumber: issued.matchNumber, expiresAt: issued.approval.expiresAt)))
        )
    }

    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        let devices = try await service.devices(of: try session())
        return .ok(.init(body: .json(.init(devices: try devices.map(Components.Schemas.Device.init)))))
    }

    func revokeDevice(_ input: Operations.RevokeDevice.Input) async throws -> Operations.RevokeDevice.Output {
        try await service.revokeDevice(input.path.deviceId, session: try session())
        return .noContent(.init())
    }
}
