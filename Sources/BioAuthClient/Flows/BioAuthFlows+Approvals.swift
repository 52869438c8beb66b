import BioAuthCore
import Foundation

extension BioAuthFlows {
    /// The requests waiting for this customer's answer, newest first: sign-ins and operations that started on another
    /// channel (the bank's backend asked through OpenID CIBA). Show each with ``ApprovalDetails/summary``; for a sign-in,
    /// ask the user to pick the number the other channel shows among ``ApprovalDetails/numberChoices``.
    public func pendingApprovals() async throws -> [ApprovalDetails] {
        try requireInUse(await session.snapshot)
        return try await withAccessToken { token in try await self.api.approvals(status: "pending", accessToken: token) }
    }

    /// Approves `approval` with biometrics: the prompt names who asks and what, the key signs the canonical approval of
    /// exactly what was shown (with the `number` the user picked, for a sign-in), and the server's signed approval is
    /// checked against its published receipt keys before this returns.
    ///
    /// A sign-in, and a new device asking to be bound (`bind_device`), need `number`, one of
    /// ``ApprovalDetails/numberChoices``: a wrong one denies the request (`approval_number_mismatch`), so the user gets one
    /// pick, not three.
    public func approve(_ approval: ApprovalDetails, number: Int? = nil) async throws -> ApprovalDetails {
        if approval.kind.matchesNumber {
            guard let number, approval.numberChoices.contains(number) else {
                throw APIProblem(.malformedRequest, detail: "pick one of the numbers the request offers")
            }
        }
        let canonical = try approval.canonical(number: number)
        let binding = try await usableBinding(signedOut: false)
        return try await withAccessToken { token in
            let context = try await self.evaluate(.approveRequest(approval.summary), biometry: binding.biometry)
            let counter = try await self.nextCounter()
            let challenge = ServerChallenge(
                id: approval.id,
                challenge: approval.challenge,
                purpose: .approval,
                relyingPartyID: approval.relyingPartyID,
                keyID: binding.publicKey.keyID,
                paymentID: nil,
                expiresAt: approval.expiresAt
            )
            let proof = try await self.sign(
                .approval,
                challenge,
                tag: binding.keyTag,
                keyID: binding.publicKey.keyID,
                counter: counter,
                context: context,
                transactionHash: canonical.hash
            )
            let assertion = try await self.appAttestAssertion(for: proof.payload)
            let approved: ApprovalDetails
            do {
                approved = try await self.api.approve(
                    approval.id,
                    keyID: binding.publicKey.keyID,
                    counter: counter,
                    number: approval.kind.matchesNumber ? number : nil,
                    approvalHash: canonical.hash,
                    signature: proof.signature,
                    appAttestAssertion: assertion,
                    accessToken: token
                )
            } catch let problem as APIProblem {
                throw try await self.handleServerRefusal(problem)
            }
            try await self.checkSignedApproval(of: approved, for: canonical)
            return approved
        }
    }

    /// Opens a web page's sign-in QR code the camera read (`url`, what the code held): the server turns it into this
    /// customer's sign-in request, with the browser, platform and address the page was opened from. Show it with
    /// ``ApprovalDetails/summary`` and the three numbers, then ``approve(_:number:)`` with the one the user picks (the
    /// page shows it beside the code) or ``deny(_:)``. A code is good once, for 30 seconds (`qr_code_used`,
    /// `qr_code_not_found`).
    ///
    /// A URL that is not exactly one of this bank's codes (``Configuration/signInCodeOrigins``: its origin, `/web/q/`,
    /// the code, nothing else) is refused with `qr_code_not_found` before anything is sent, so a live code printed under
    /// another site's address opens nothing.
    public func openScannedURL(_ url: String) async throws -> ApprovalDetails {
        try requireInUse(await session.snapshot)
        guard configuration.isSignInCode(url) else {
            throw APIProblem(.qrCodeNotFound, detail: "This is not a sign-in code of this bank's web pages.")
        }
        return try await withAccessToken { token in try await self.api.scanQRSignIn(url, accessToken: token) }
    }

    /// Denies `approvalID`: the customer did not start it. No biometric is needed to say no.
    public func deny(_ approvalID: String) async throws -> ApprovalDetails {
        try requireInUse(await session.snapshot)
        return try await withAccessToken { token in try await self.api.deny(approvalID, accessToken: token) }
    }

    /// The signed approval must be signed by one of the server's published receipt keys and be for exactly what was shown.
    func checkSignedApproval(of approval: ApprovalDetails, for canonical: CanonicalApproval) async throws {
        guard let signed = approval.signedApproval, signed.approval?.hash == canonical.hash,
            try await signedByReceiptKey({ signed.isValid(signedBy: $0) })
        else { throw APIProblem(.unexpectedResponse, detail: "the signed approval is not for what was shown, or does not verify") }
    }
}
