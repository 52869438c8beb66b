import BioAuthCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Testing

@testable import BioAuthServer

/// The payment as support opens it: who asked for it, each attempt with its code, who authorized it, the receipt
/// checked against the published keys, and the webhook deliveries of its events.
@Suite("Payment record")
struct PaymentRecordTests {
    @Test(
        "a payment's history: asked for by the bank's backend, a failed attempt with its code, authorized by the device, the receipt verified, its webhook delivered",
        arguments: StorageBackend.available
    )
    func history(backend: StorageBackend) async throws {
        // A receiver on a loaded machine may take seconds to answer: the one delivery pass waits as long as it takes
        // (the setup's default timeout is short, for the tests of timeouts).
        try await WebhookTests.withSetup(
            backend: backend,
            events: ["payment.authorized"],
            configure: { $0.webhooks.timeout = 60 },
            Self.historyBody
        )
    }

    /// The body of ``history(backend:)``.
    @Sendable static func historyBody(_ setup: WebhookTests.Setup) async throws {
        let api = setup.api
        let key = TestKey()
        let (_, deviceID) = try await api.enrolled(key)
        let desk = SupportDesk(service: api.service)
        let accountID = try await desk.customer("alice").accountID
        // The bank's backend asks for the payment; the customer's phone fails once (wrong amount shown), then signs.
        let payee = try await api.call(
            .post,
            "/v1/service/payees",
            json: ["payeeId": "tea-1", "name": "Tea House", "verification": "verified"],
            token: try await setup.serviceToken()
        )
        try #require(payee.status < 300, "\(payee.raw)")
        let payment = try await api.call(
            .post,
            "/v1/service/payments",
            json: ["accountId": accountID, "amountMinor": 12345, "currency": "CNY", "payeeId": "tea-1"],
            token: try await setup.serviceToken(),
            headers: [HTTPField.Name("Idempotency-Key")!: "order-1"]
        )
        try #require(payment.status == 201, "\(payment.raw)")
        let tokens = try await api.signIn()
        let wrong = try await api.authorizeWithBiometrics(payment, key: key, counter: 1, token: tokens.access) { $0.amount = 1 }
        #expect(wrong.code == "transaction_mismatch")
        let signed = try await api.authorizeWithBiometrics(payment, key: key, counter: 2, token: tokens.access)
        #expect(signed.status == 200, "\(signed.raw)")
        try await setup.deliver()

        let paymentID = try #require(payment["paymentId"])
        let record = try await desk.payment(paymentID, customer: "alice")
        #expect(record.payment.amount == Money(minorUnits: 12345, currency: .cny) && record.payment.status == "authorized")
        #expect(record.payeeVerified == true && record.failedAttempts == 1 && record.deviceID == deviceID)
        #expect(record.authorizationMethod == "biometric" && record.receiptVerifies)
        #expect(record.steps.map(\.kind) == ["payment_created", "payment_authorized", "payment_authorized"])
        #expect(record.steps[0].clientID == setup.client.clientID, "asked for by the bank's backend")
        #expect(!record.steps[1].succeeded && record.steps[1].code == "transaction_mismatch" && record.steps[1].deviceID == deviceID)
        #expect(record.steps[2].succeeded && record.steps[2].deviceID == deviceID)
        #expect(record.challenges.count == 2 && record.challenges.allSatisfy { $0.deviceID == deviceID && $0.consumedAt != nil }, "both used")
        #expect(record.deliveries.map(\.eventType) == ["payment.authorized"] && record.deliveries[0].status == "delivered")
        #expect(record.deliveries[0].endpointID == setup.endpoint && record.deliveries[0].lastStatusCode == 200)

        // A receipt someone changed in the database (the amount) no longer verifies.
        try await api.database.transaction { db in
            try await db.raw("UPDATE payments SET receipt = REPLACE(receipt, '12345', '12346') WHERE id = \(bind: paymentID)").run()
        }
        #expect(try await desk.payment(paymentID, customer: "alice").receiptVerifies == false)
        // Another customer's page does not show it.
        try await api.createAccount("bob")
        await #expect(throws: SupportError.notFound("the customer has no payment \(paymentID)")) {
            try await desk.payment(paymentID, customer: "bob")
        }
    }
}
