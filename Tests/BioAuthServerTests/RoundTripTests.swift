import Foundation
import TestTools
import Testing

@testable import BioAuthServer

/// What each request of a sign-in and of a payment costs in PostgreSQL round trips, by the server's own count
/// (`bioauth_database_statements_total`: every statement sent, `BEGIN` and `COMMIT` included). docs/PERFORMANCE.md's
/// figures rest on these counts (a round trip is a few percent of a request's CPU), so a statement added to one of these
/// paths fails here and is seen, instead of showing only as a slower bench.
@Suite("PostgreSQL round trips per request")
struct RoundTripTests {
    /// The series the server counts its statements in.
    static let series = #"bioauth_database_statements_total{engine="postgres"}"#

    /// Runs `body` against a live server on a fresh PostgreSQL database with nothing running in the background (no
    /// retention purge, no webhook dispatcher), so that every statement counted is a request's; `sent()` reads the count.
    static func run(_ body: @escaping @Sendable (API, _ sent: @escaping @Sendable () async throws -> Double) async throws -> Void) async throws {
        try await TestServer.run(
            .live,
            backend: .postgres,
            configure: { configuration in
                configuration.metricsPort = 0
                configuration.retention.interval = 0
                configuration.webhooks.pollInterval = 0
            },
            { api in
                let port = try #require(await api.metricsPorts.first { _ in true })
                try await body(api) { try #require(try await MetricsTests.scrape(port).value(Self.series)) }
            }
        )
    }

    @Test(
        "a biometric sign-in is 10 round trips: its challenge 3, the sign-in 7",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func signIn() async throws {
        try await Self.run { api, sent in
            let key = TestKey()
            _ = try await api.enrolled(key)
            // Twice: the first time a connection runs a statement it prepares it, which these counts do not show anyway.
            for counter: UInt64 in 1...2 {
                let start = try await sent()
                let challenge = try await api.signInChallenge(key)
                #expect(challenge.status == 201, "\(challenge.raw)")
                let issued = try await sent()
                #expect(try await api.biometricSignIn(key, counter: counter, challenge: challenge).status == 201)
                let signedIn = try await sent()
                #expect(issued - start == 3, "the challenge: both rate-limit hits in one statement, the device, the challenge's insert")
                #expect(
                    signedIn - issued == 7,
                    "the sign-in: BEGIN, the challenge's use, the counter, the account's row, the session, the audit event, COMMIT"
                )
            }
        }
    }

    @Test(
        "a biometric payment is 20 round trips: its creation 7, its challenge 4, its authorization 9",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func payment() async throws {
        try await Self.run { api, sent in
            let key = TestKey()
            let (tokens, _) = try await api.enrolled(key)
            try await api.registerPayeeIfValid("merchant-coffee-042", name: "Coffee Shop")
            for counter: UInt64 in 1...2 {
                let start = try await sent()
                let payment = try await api.createPayment(token: tokens.access, register: false)
                #expect(payment.status == 201, "\(payment.raw)")
                let created = try await sent()
                let paymentID = try #require(payment["paymentId"])
                let challenge = try await api.call(.post, "/v1/payments/\(paymentID)/challenges", json: ["keyId": key.keyID], token: tokens.access)
                let issued = try await sent()
                let authorized = try await api.authorizeWithBiometrics(
                    payment,
                    key: key,
                    counter: counter,
                    token: tokens.access,
                    challenge: challenge
                )
                #expect(authorized.status == 200, "\(authorized.raw)")
                let done = try await sent()
                #expect(created - start == 7, "the creation")
                #expect(issued - created == 4, "the challenge")
                #expect(done - issued == 9, "the authorization")
            }
        }
    }
}
