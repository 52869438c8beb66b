import BioAuthCore
import Foundation
import OpenAPIRuntime

/// Passkeys: registration options and registration, listing, revocation, sign-in options and sign-in.
extension APIHandler {
    // MARK: Passkeys

    func createPasskeyRegistrationOptions(
        _ input: Operations.CreatePasskeyRegistrationOptions.Input
    ) async throws
        -> Operations.CreatePasskeyRegistrationOptions.Output
    {
        let options = try await service.passkeyRegistrationOptions(session: try session())
        return .created(
            .init(
                body: .json(
                    .init(
                        challengeId: options.challengeID,
                        publicKey: .init(
                            rp: .init(id: options.relyingPartyID, name: options.relyingPartyName),
                            user: .init(id: Base64URL.encode(options.userHandle), name: options.username, displayName: options.username),
                            challenge: Base64URL.encode(options.challenge),
                            pubKeyCredParams: options.algorithms.map { .init(_type: .publicKey, alg: $0) },
                            timeout: Int(options.timeout * 1000),
                            excludeCredentials: options.exclude.map(Components.Schemas.PasskeyCredentialDescriptor.init),
                            authenticatorSelection: .init(residentKey: .required, requireResidentKey: true, userVerification: .required),
                            attestation: options.directAttestation
                                ? .direct : Components.Schemas.PasskeyCreationOptions.PublicKeyPayload.AttestationPayload.none
                        )
                    )
                )
            )
        )
    }

    func registerPasskey(_ input: Operations.RegisterPasskey.Input) async throws -> Operations.RegisterPasskey.Output {
        guard case .json(let request) = input.body else { throw Self.unreadableBody }
        let session = try session()
        let credential = request.credential
        let submission = PasskeyRegistrationSubmission(
            challengeID: request.challengeId,
            credentialID: try Validation.bytes(credential.rawId, field: "rawId", maxLength: AuthenticatorData.maxCredentialIDLength),
            clientDataJSON: try Validation.bytes(credential.response.clientDataJSON, field: "clientDataJSON", maxLength: 4096),
            attestationObject: try Validation.bytes(
                credential.response.attestationObject,
                field: "attestationObject",
                maxLength: WebAuthnRelyingParty.maxAttestationObjectSize
            ),
            transports: credential.response.transports ?? [],
            name: request.name ?? "Passkey"
        )
        guard credential.id == credential.rawId else { throw APIError(.malformedRequest, "credential.id and credential.rawId differ.") }
        return .created(.init(body: .json(.init(try await service.registerPasskey(submission, session: session)))))
    }

    func listPasskeys(_ input: Operations.ListPasskeys.Input) async throws -> Operations.ListPasskeys.Output {
        let passkeys = try await service.passkeys(account: try session().accountID)
        return .ok(.init(body: .json(.init(passkeys: passkeys.map(Components.Schemas.Passkey.init)))))
    }

    func revokePasskey(_ input: Operations.RevokePasskey.Input) async throws -> Operations.RevokePasskey.Output {
        try await service.revokePasskey(input.path.passkeyId, session: try session())
        return .noContent(.init())
    }

    func createPasskeySignInOptions(_ input: Operations.CreatePasskeySignInOptions.Input) async throws -> Operations.CreatePasskeySignInOptions.Output
    {
        guard case .json(let request) = input.body else { throw Self.unreadableBody }
        let options = try await service.passkeySignInOptions(username: request.username)
        return .created(
            .init(
                body: .json(
                    .init(
                        challengeId: options.challengeID,
                        publicKey: .init(
                            challenge: Base64URL.encode(options.challenge),
                            rpId: options.relyingPartyID,
                            timeout: Int(options.timeout * 1000),
                            userVerification: .required,
                            allowCredentials: options.allow.map(Components.Schemas.PasskeyCredentialDescriptor.init)
                        )
                    )
                )
            )
        )
    }

    func signInWithPasskey(_ input: Operations.SignInWithPasskey.Input) async throws -> Operations.SignInWithPasskey.Output {
        guard case .json(let request) = input.body else { throw Self.unreadableBody }
        let credential = request.credential
        let submission = PasskeyAssertionSubmission(
            challengeID: request.challengeId,
            credentialID: try Validation.bytes(credential.rawId, field: "rawId", maxLength: AuthenticatorData.maxCredentialIDLength),
            clientDataJSON: try Validation.bytes(credential.response.clientDataJSON, field: "clientDataJSON", maxLength: 4096),
            authenticatorData: try Validation.bytes(credential.response.authenticatorData, field: "authenticatorData", maxLength: 16 * 1024),
            signature: try Validation.bytes(credential.response.signature, field: "signature", maxLength: 8 * 1024),
            userHandle: try credential.response.userHandle.flatMap {
                $0.isEmpty ? nil : try Validation.bytes($0, field: "userHandle", maxLength: 64)
            },
            installationID: request.installationId
        )
        guard credential.id == credential.rawId else { throw APIError(.malformedRequest, "credential.id and credential.rawId differ.") }
        let tokens = try await counted({ service.metrics.signIn(.passkey, outcome: $0) }, { try await service.signInWithPasskey(submission) })
        return .created(.init(body: .json(.init(tokens))))
    }
}
