import BioAuthCore
import Foundation
import OpenAPIRuntime

/// The customer's payments: creation, reads, challenges, authorization with biometrics or the PIN, cancellation, the
/// payment PIN, and the published receipt keys.
extension APIHandler {
    // MARK: Payments

    func createPayment(_ input: Operations.CreatePayment.Input) async throws -> Operations.CreatePayment.Output {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        let session = try session()
        let request = try PaymentRequest(
            amountMinor: body.amountMinor,
            currency: body.currency,
            payeeID: body.payeeId,
            payeeName: body.payeeName,
            memo: body.memo,
            idempotencyKey: input.headers.idempotencyKey
        )
        return .created(.init(body: .json(try .init(try await service.createPayment(session: session, request)))))
    }

    func listPayments(_ input: Operations.ListPayments.Input) async throws -> Operations.ListPayments.Output {
        let limit = input.query.limit ?? 50
        guard (1...200).contains(limit) else { throw APIError(.malformedRequest, "limit must be 1-200.") }
        let status = input.query.status.flatMap { PaymentInfo.Status(rawValue: $0.rawValue) }
        let payments = try await service.payments(session: try session(), limit: limit, status: status)
        return .ok(.init(body: .json(.init(payments: try payments.map(Components.Schemas.Payment.init)))))
    }

    func getPayment(_ input: Operations.GetPayment.Input) async throws -> Operations.GetPayment.Output {
        .ok(.init(body: .json(try .init(try await service.payment(input.path.paymentId, session: try session())))))
    }

    func createPaymentChallenge(_ input: Operations.CreatePaymentChallenge.Input) async throws -> Operations.CreatePaymentChallenge.Output {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        let challenge = try await service.createPaymentChallenge(input.path.paymentId, keyID: body.keyId, session: try session())
        return .created(.init(body: .json(issued(challenge))))
    }

    func authorizePaymentWithBiometrics(
        _ input: Operations.AuthorizePaymentWithBiometrics.Input
    ) async throws
        -> Operations.AuthorizePaymentWithBiometrics.Output
    {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        let payment = try await counted(
            { service.metrics.paymentAuthorization(.biometric, outcome: $0) },
            {
                try await service.authorizeWithBiometrics(
                    input.path.paymentId,
                    challengeID: body.challengeId,
                    keyID: body.keyId,
                    counter: body.counter,
                    transactionHash: body.transactionHash,
                    signature: body.signature,
                    appAttestAssertion: body.appAttestAssertion,
                    session: try session()
                )
            }
        )
        return .ok(.init(body: .json(try .init(payment))))
    }

    func authorizePaymentWithPIN(_ input: Operations.AuthorizePaymentWithPIN.Input) async throws -> Operations.AuthorizePaymentWithPIN.Output {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        let payment = try await counted(
            { service.metrics.paymentAuthorization(.pin, outcome: $0) },
            {
                try await service.authorizeWithPIN(input.path.paymentId, pin: body.pin, session: try session())
            }
        )
        return .ok(.init(body: .json(try .init(payment))))
    }

    func cancelPayment(_ input: Operations.CancelPayment.Input) async throws -> Operations.CancelPayment.Output {
        .ok(.init(body: .json(try .init(try await service.cancelPayment(input.path.paymentId, session: try session())))))
    }

    func createPaymentPINChallenge(
        _ input: Operations.CreatePaymentPINChallenge.Input
    ) async throws
        -> Operations.CreatePaymentPINChallenge.Output
    {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        return .created(.init(body: .json(issued(try await service.createPaymentPINChallenge(keyID: body.keyId, session: try session())))))
    }

    func setPaymentPIN(_ input: Operations.SetPaymentPIN.Input) async throws -> Operations.SetPaymentPIN.Output {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        let session = try session()
        let proof = try body.biometric.map {
            try BiometricProof(challengeID: $0.challengeId, keyID: $0.keyId, counter: $0.counter, signature: $0.signature)
        }
        try await service.setPaymentPIN(body.pin, currentPassword: body.currentPassword, biometric: proof, session: session)
        return .noContent(.init())
    }

    func listReceiptKeys(_ input: Operations.ListReceiptKeys.Input) async throws -> Operations.ListReceiptKeys.Output {
        .ok(
            .init(
                body: .json(
                    .init(
                        keys: try await service.receiptKeys().map { key in
                            .init(
                                keyId: Base64URL.encode(key.publicKey.keyID),
                                publicKey: Base64URL.encode(key.publicKey.x963Representation),
                                algorithm: .es256,
                                notBefore: key.notBefore,
                                retiredAt: key.retiredAt
                            )
                        }
                    )
                )
            )
        )
    }
}
