import BioAuthCore
import Foundation

extension BioAuthFlows {
    /// Pays with biometrics: fetches the payment, shows its exact amount and payee in the prompt, signs the
    /// transaction built from what was shown, and checks the server's signed receipt before returning.
    ///
    /// When the biometric fails, the error's recovery is ``RecoveryAction/usePassword``: offer the payment PIN
    /// (``pay(_:pin:)``).
    public func pay(_ paymentID: String) async throws -> PaymentDetails {
        let binding = try await usableBinding(signedOut: false)
        return try await withAccessToken { token in
            let payment = try await self.api.payment(paymentID, accessToken: token)
            let transaction = try payment.transaction()
            let challenge: ServerChallenge
            do {
                challenge = try await self.api.paymentChallenge(paymentID, keyID: binding.publicKey.keyID, accessToken: token)
            } catch let problem as APIProblem {
                throw try await self.handleServerRefusal(problem)
            }
            guard challenge.paymentID == paymentID else {
                throw APIProblem(.unexpectedResponse, detail: "the server sent a challenge for another payment")
            }
            let context = try await self.evaluate(
                .authorizePayment(PaymentSummary(amount: payment.amount, payeeName: payment.payeeName, payeeVerified: payment.payeeVerified)),
                biometry: binding.biometry
            )
            let counter = try await self.nextCounter()
            let proof = try await self.sign(
                .payment,
                challenge,
                tag: binding.keyTag,
                keyID: binding.publicKey.keyID,
                counter: counter,
                context: context,
                transactionHash: transaction.hash
            )
            let assertion = try await self.appAttestAssertion(for: proof.payload)
            let authorized: PaymentDetails
            do {
                authorized = try await self.api.authorizeWithBiometrics(
                    paymentID,
                    challengeID: challenge.id,
                    keyID: binding.publicKey.keyID,
                    counter: counter,
                    transactionHash: transaction.hash,
                    signature: proof.signature,
                    appAttestAssertion: assertion,
                    accessToken: token
                )
            } catch let problem as APIProblem {
                throw try await self.handleServerRefusal(problem)
            }
            try await self.checkReceipt(of: authorized, for: transaction)
            return authorized
        }
    }

    /// Pays with the payment PIN, the fallback. The PIN goes to the server only; it is never stored here.
    public func pay(_ paymentID: String, pin: String) async throws -> PaymentDetails {
        try requireInUse(await session.snapshot)
        return try await withAccessToken { token in
            let transaction = try await self.api.payment(paymentID, accessToken: token).transaction()
            let authorized = try await self.api.authorizeWithPIN(paymentID, pin: pin, accessToken: token)
            try await self.checkReceipt(of: authorized, for: transaction)
            return authorized
        }
    }

    /// The receipt must be signed by one of the server's published receipt keys and be for exactly the transaction
    /// shown. The keys are fetched once and again when a receipt verifies with none of them (the server's key was
    /// rotated since), so a rotation never fails a payment.
    func checkReceipt(of payment: PaymentDetails, for transaction: CanonicalTransaction) async throws {
        guard let receipt = payment.receipt, receipt.transaction?.hash == transaction.hash,
            try await signedByReceiptKey({ receipt.isValid(signedBy: $0) })
        else { throw APIProblem(.unexpectedResponse, detail: "the payment's receipt does not verify") }
    }

    /// Whether `isValid` holds for one of the server's published receipt keys (receipts and signed approvals). The keys are
    /// fetched once, and again when nothing verifies with them (the server's key was rotated since).
    func signedByReceiptKey(_ isValid: (DevicePublicKey) -> Bool) async throws -> Bool {
        if let known = receiptKeys, known.contains(where: isValid) { return true }
        let published = try await api.receiptKeys()
        receiptKeys = published
        return published.contains(where: isValid)
    }
}
