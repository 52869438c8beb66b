import BioAuthCore
import BioAuthTesting
import Foundation
import HTTPTypes
import Testing

@testable import BioAuthServer

/// What a support lead reads and does beyond one customer's calls: every live session with the device and address it
/// came from, ended one at a time; sign-ins approved on the phone (CIBA, QR) in the overview; webhook endpoints'
/// health by client name.
@Suite("Support lead")
struct SupportLeadTests {
    static let safari =
        "Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"

    @Test(
        "each live session shows the device that opened it and where from; support ends one, the others go on; an ended, another customer's or a made-up session changes nothing",
        arguments: StorageBackend.available
    )
    func endOneSession(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            let desk = try await SupportDeskTests.desk(api)
            let key = TestKey()
            let (_, deviceID) = try await api.enrolled(key)
            let phone = try await api.biometricSignIn(key, counter: 1)
            try #require(phone.status == 201, "\(phone.raw)")
            let ipad = try await api.call(
                .post,
                "/v1/sessions",
                json: ["username": "alice", "password": "correct horse", "installationId": "ipad-1"],
                headers: [.userAgent: Self.safari]
            )
            try #require(ipad.status == 201)
            try await api.createAccount("bob")
            let bob = try await api.signIn("bob", installation: "bob-phone")

            let record = try await desk.customer("alice")
            let phoneSession = try #require(record.sessions.first { $0.id == phone["sessionId"] })
            let ipadSession = try #require(record.sessions.first { $0.id == ipad["sessionId"] })
            #expect(phoneSession.method == "biometric" && phoneSession.deviceID == deviceID)
            #expect(phoneSession.clientAddress == "127.0.0.1", "the address its sign-in came from: \(String(describing: phoneSession.clientAddress))")
            #expect(ipadSession.method == "password" && ipadSession.userAgent == Self.safari && ipadSession.clientAddress == "127.0.0.1")

            // A viewer can't; a made-up id and bob's session are not alice's; nothing ended.
            await #expect(throws: SupportError.self) {
                try await desk.endSession(try #require(ipad["sessionId"]), customer: "alice", operator: "vic", reason: "viewer")
            }
            for other in ["ses_made-up", "../x", bob.sessionID] {
                await #expect(throws: SupportError.notFound("the customer has no session \(other)")) {
                    try await desk.endSession(other, customer: "alice", operator: "mei", reason: "not hers")
                }
            }
            #expect(try await api.call(.get, "/v1/me", token: bob.access).status == 200, "bob's session goes on")

            try await desk.endSession(try #require(ipad["sessionId"]), customer: "alice", operator: "mei", reason: "iPad left at the hotel")
            let ended = try await api.call(.get, "/v1/me", token: try #require(ipad["accessToken"]))
            #expect(ended.status == 401 && ended.code == "session_ended", "\(ended.raw)")
            #expect(try await api.call(.get, "/v1/me", token: try #require(phone["accessToken"])).status == 200, "the phone's session goes on")
            let after = try await desk.customer("alice")
            #expect(after.sessions.map(\.id) == [phone["sessionId"]], "\(after.sessions)")
            #expect(after.devices.allSatisfy { $0.revokedAt == nil }, "the device stays registered")
            let event = try #require(after.events.first { $0.kind == "session_ended" })
            #expect(event.reason == "iPad left at the hotel" && event.operatorID != nil)

            // Ending it again changes nothing and is not audited twice.
            try await desk.endSession(try #require(ipad["sessionId"]), customer: "alice", operator: "mei", reason: "again")
            #expect(try await api.auditKinds().filter { $0.hasPrefix("session_ended") } == ["session_ended:success"])
            await desk.close()
        }
    }

    @Test(
        "the overview counts sign-ins approved on the phone for a service client (CIBA) and by a scanned QR code, and what became of each channel's requests",
        arguments: StorageBackend.available
    )
    func approvedSignInsInTheOverview(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend, configure: QRSignInTests.configure) { api in
            let desk = try await SupportDeskTests.desk(api)
            let client = try await ApprovalTests.callCentre(api)
            let key = TestKey()
            let (user, _) = try await api.enrolled(key)

            // The call centre: one sign-in approved and collected, one denied with a wrong number.
            let asked = try await api.backchannel(client, ["login_hint": "alice"])
            let number = try #require(asked.json["match_number"] as? Int)
            let request = try #require(try await api.pendingApprovals(user.access).first)
            #expect(try await api.approve(request, key: key, counter: 1, token: user.access, number: number).status == 200)
            #expect(try await api.cibaToken(client, try #require(asked["auth_req_id"]))["access_token"] != nil)
            let guessed = try await api.backchannel(client, ["login_hint": "alice"])
            let shown = try #require(guessed.json["match_number"] as? Int)
            let attack = try #require(try await api.pendingApprovals(user.access).first)
            let wrong = try #require((attack["numberChoices"] as? [Int])?.first { $0 != shown })
            #expect(try await api.approve(attack, key: key, counter: 2, token: user.access, number: wrong).code == "approval_number_mismatch")

            // The web page: a QR code scanned, approved and collected by the browser that showed it.
            let page = try await api.call(.post, "/v1/qr-sign-ins")
            let cookie = String(try #require(page.headers[.setCookie]?.split(separator: ";").first))
            let scanned = try await api.call(.post, "/v1/qr-sign-ins/scans", json: ["url": try #require(page["url"])], token: user.access)
            let matched = try #require(page.json["matchNumber"] as? Int)
            #expect(try await api.approve(scanned.json, key: key, counter: 3, token: user.access, number: matched).status == 200)
            let collected = try await api.call(
                .post,
                "/v1/qr-sign-ins/\(try #require(page["qrSignInId"]))/session",
                json: ["installationId": "web-1"],
                headers: [.cookie: cookie]
            )
            #expect(collected["status"] == "signed_in", "\(collected.raw)")

            let overview = try await desk.overview(hours: 24)
            #expect(overview.hours.map(\.ciba).reduce(0, +) == 1 && overview.hours.map(\.qr).reduce(0, +) == 1, "\(overview.hours.last!)")
            #expect(overview.hours.map(\.password).reduce(0, +) == 1 && overview.hours.map(\.biometric).reduce(0, +) == 0)
            #expect(overview.cibaApprovals == .init(requested: 2, approved: 1, denied: 1, expired: 0), "\(overview.cibaApprovals)")
            #expect(overview.qrApprovals == .init(requested: 1, approved: 1, denied: 0, expired: 0), "\(overview.qrApprovals)")
            let chart = Console.chart(overview, language: .english, time: ConsoleTime(timeZone: "UTC", language: .english, now: api.clock.now))
            #expect(chart.contains("approved on the phone (service client)") && chart.contains("scanned QR code") && chart.contains("#7c3aed"))

            // A request left unanswered expires, and counts so once it is found expired.
            let late = try await api.backchannel(client, ["login_hint": "alice"])
            api.clock.advance(by: 301)
            _ = try await api.cibaToken(client, try #require(late["auth_req_id"]))
            #expect(try await desk.overview(hours: 24).cibaApprovals.expired == 1)
            await desk.close()
        }
    }

    @Test(
        "an endpoint's health counts its last day's deliveries: delivered, retrying after a 500 (with the status), given up after three days",
        arguments: StorageBackend.available
    )
    func webhookHealth(backend: StorageBackend) async throws {
        try await WebhookTests.withSetup(backend: backend) { setup in
            let api = setup.api
            let desk = try await SupportDesk.open(database: api.database, configuration: api.service.configuration, clock: api.clock)
            #expect(try await desk.webhookEndpoints().first?.health == WebhookHealth(), "nothing sent yet")
            try await api.createAccount()
            let tokens = try await api.signIn()
            #expect(try await api.register(TestKey(), token: tokens.access).status == 201)
            try await setup.deliver()
            setup.receiver.script(.status(503))
            #expect(try await api.bind(TestKey(), token: tokens.access, name: "Alice's iPad").status == 201)
            try await setup.deliver()

            let health = try #require(try await desk.webhookEndpoints().first { $0.id == setup.endpoint }?.health)
            #expect(health.delivered == 1 && health.retrying == 1 && health.givenUp == 0 && health.isFailing, "\(health)")
            #expect(health.lastDeliveredAt != nil && health.lastFailure?.statusCode == 503, "\(health)")
            #expect(health.lastFailure?.error == "not delivered")

            // The receiver stays down: three days later the delivery is given up, and a day later it is out of the window.
            for _ in 0..<40 {
                setup.receiver.script(.status(503))
                api.clock.advance(by: 3 * 3600)
                try await setup.deliver()
            }
            let givenUp = try #require(try await desk.webhookEndpoints(hours: 168).first?.health)
            #expect(givenUp.givenUp == 1 && givenUp.retrying == 0 && givenUp.isFailing, "\(givenUp)")
            #expect(try await desk.webhookEndpoints(hours: 24).first?.health == WebhookHealth(), "older than a day: not counted")
            await #expect(throws: SupportError.self) { try await desk.webhookEndpoints(hours: 0) }
            await desk.close()
        }
    }
}
