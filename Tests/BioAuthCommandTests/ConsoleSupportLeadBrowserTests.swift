import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import BioAuthServer
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// What a support lead reads and does in the console beyond one customer's call: sign-ins approved on the phone in the
/// overview, each live session with its device and address (ended one at a time), service clients by name, webhook
/// endpoints' health and operators' last sign-in.
extension InABrowser.ConsoleBrowserTests {
    static let chromeOnMac = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

    @Test(
        "a support lead's view: CIBA and QR sign-ins in the overview, each session with its device and address and ended alone after a confirmation that names it, the shop's payment by the shop's name, webhook health and last sign-ins on the admin page"
    )
    func supportLead() async throws {
        try await Self.withScene(webPage: true) { scene, http in
            let shop = try #require(scene.shop)
            let callCentre = try #require(scene.callCentre)
            let keyID = DevicePublicKey(scene.key.publicKey).keyID
            let me = try await Self.json(.GET, "\(scene.direct)/v1/me", bearer: scene.accessToken, http: http)
            let accountID = try #require(me.body["accountId"] as? String)

            // The shop's backend: two webhook endpoints for approvals (one listening, one at a closed port) and a payment.
            let shopToken = try #require(
                try await Self.json(.POST, "\(scene.direct)/oauth/token", form: "grant_type=client_credentials", basic: shop, http: http)
                    .body["access_token"] as? String
            )
            let receiver = try await LoopbackWebhookReceiver.start()
            let events = ["approval.requested", "approval.approved", "approval.denied"]
            for url in [receiver.url.absoluteString, "http://127.0.0.1:9/bioauth-events"] {
                let created = try await Self.json(
                    .POST,
                    "\(scene.direct)/v1/service/webhook-endpoints",
                    json: ["url": url, "events": events],
                    bearer: shopToken,
                    http: http
                )
                try #require(created.status == 201, "\(created.body)")
                if url == receiver.url.absoluteString { receiver.trust(secret: try #require(created.body["secret"] as? String)) }
            }
            let payment = try await Self.json(
                .POST,
                "\(scene.direct)/v1/service/payments",
                json: ["accountId": accountID, "amountMinor": 2599, "currency": "CNY", "payeeId": "tom-1"],
                bearer: shopToken,
                headers: ["Idempotency-Key": "shop-order-1"],
                http: http
            )
            let shopPaymentID = try #require(payment.body["paymentId"] as? String, "\(payment.body)")

            // The call centre signs her in after she approves with the number it reads out.
            var counter: UInt64 = 5
            func approveOnThePhone(_ request: ApprovalDetails, number: Int) async throws {
                let canonical = try request.canonical(number: number)
                let payload = try SignedPayload(
                    purpose: .approval,
                    relyingPartyID: request.relyingPartyID,
                    challenge: request.challenge,
                    keyID: keyID,
                    counter: counter,
                    transactionHash: canonical.hash
                )
                _ = try await scene.api.approve(
                    request.id,
                    keyID: keyID,
                    counter: counter,
                    number: number,
                    approvalHash: canonical.hash,
                    signature: try scene.key.signature(for: payload.bytes).derRepresentation,
                    accessToken: scene.accessToken
                )
                counter += 1
            }
            let asked = try await Self.json(
                .POST,
                "\(scene.direct)/bc-authorize",
                form: "scope=openid&login_hint=alice",
                basic: callCentre,
                http: http
            )
            let spoken = try #require(asked.body["match_number"] as? Int)
            try await approveOnThePhone(
                try #require(try await scene.api.approvals(status: "pending", accessToken: scene.accessToken).first),
                number: spoken
            )
            let cibaTokens = try await Self.json(
                .POST,
                "\(scene.direct)/oauth/token",
                form: "grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba&auth_req_id=\(try #require(asked.body["auth_req_id"] as? String))",
                basic: callCentre,
                http: http
            )
            #expect(cibaTokens.body["access_token"] != nil, "\(cibaTokens.body)")

            // She scans the web page's QR code on her Mac and approves; the page collects its session.
            let qr = try await Self.json(.POST, "\(scene.direct)/v1/qr-sign-ins", headers: ["User-Agent": Self.chromeOnMac], http: http)
            let browserCookie = try #require(qr.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init))
            let scanned = try await scene.api.scanQRSignIn(try #require(qr.body["url"] as? String), accessToken: scene.accessToken)
            try await approveOnThePhone(scanned, number: try #require(qr.body["matchNumber"] as? Int))
            let collected = try await Self.json(
                .POST,
                "\(scene.direct)/v1/qr-sign-ins/\(try #require(qr.body["qrSignInId"] as? String))/session",
                json: ["installationId": "mac-browser"],
                headers: ["Cookie": browserCookie, "User-Agent": Self.chromeOnMac],
                http: http
            )
            let webTokens = try #require(collected.body["tokens"] as? [String: Any], "\(collected.body)")
            let webSession = try #require(webTokens["sessionId"] as? String)
            let webAccess = try #require(webTokens["accessToken"] as? String)

            try await WebDriver.run(http: http) { browser in
                try await Self.signIn(browser, scene.origin, name: "mei")
                try await browser.waitForURL(endingWith: "/console/overview")
                let overview = try await browser.waitForSource(containing: "scanned QR code")
                #expect(
                    overview.contains("approved on the phone (service client) 1") && overview.contains("scanned QR code 1"),
                    "the totals count the CIBA and the QR sign-in"
                )
                #expect(overview.contains("#7c3aed") && overview.contains("#c2410c"), "each has its bars in the chart")
                // The call centre asked three times (the scene's operation, approved, and its sign-in with a wrong number), the page once.
                let requests = try #require(overview.range(of: "Requests to approve on the phone").map { String(overview[$0.lowerBound...]) })
                #expect(requests.contains("<td>approved on the phone (service client)</td><td>3</td><td>2</td><td>1</td>"), "\(requests.prefix(900))")
                #expect(requests.contains("<td>scanned QR code</td><td>1</td><td>1</td><td>0</td>"))
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("overview.png"))

                // Her sessions: the phone's Face ID one, the call centre's and the Mac's, each with where it came from.
                try await browser.go("\(scene.origin)/console/customers/\(accountID)")
                let page = try await browser.waitForSource(containing: "/sessions/\(webSession)/end")
                let sessions = try #require(page.range(of: "Live sessions").map { String(page[$0.lowerBound...].prefix(6000)) })
                #expect(sessions.contains("Alice&#39;s iPhone") || sessions.contains("Alice's iPhone"), "the device that opened a session")
                #expect(sessions.contains("127.0.0.1") && sessions.contains("Chrome/131.0.0.0"), "where from, with the browser")
                #expect(sessions.contains("Device: Alice&#39;s iPhone") || sessions.contains("Device: Alice's iPhone"))
                #expect(
                    sessions.contains("Bank Call Centre (service client)") && !sessions.contains("approval:\(callCentre.clientID)"),
                    "the call centre's by its name"
                )
                #expect(sessions.contains("mac-browser"))
                _ = try await browser.executeAsync("document.getElementById('sessions').scrollIntoView(); arguments[0](true)")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("customer-sessions.png"))

                let form = "form[action$='/sessions/\(webSession)/end']"
                try await browser.type("\(form) input[name=reason]", "Signed in at a hotel's computer and left it")
                try await browser.click("\(form) button[type=submit]")
                let asked = try await browser.waitForSource(containing: "End this session?")
                #expect(
                    asked.contains("Alice&#39;s iPhone · approved on the phone · 127.0.0.1")
                        || asked.contains("Alice's iPhone · approved on the phone · 127.0.0.1"),
                    "the confirmation names the session"
                )
                #expect(asked.contains("href=\"/console/customers/\(accountID)?lang=zh-Hans\""), "the language links lead back to a page")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("customer-confirm-end-session.png"))
                try await browser.click("section.confirm button[type=submit]")
                let after = try await browser.waitForSource(containing: "The session ended.")
                #expect(!after.contains("/sessions/\(webSession)/end") && after.contains("session ended"), "gone from the list, in the timeline")

                // The shop's payment names the shop.
                try await browser.go("\(scene.origin)/console/customers/\(accountID)/payments/\(shopPaymentID)")
                let paymentPage = try await browser.waitForSource(containing: "Example Shop")
                #expect(paymentPage.contains("service client Example Shop") && !paymentPage.contains("service client \(shop.clientID)"))
            }
            let ended = try await Self.json(.GET, "\(scene.direct)/v1/me", bearer: webAccess, http: http)
            #expect(ended.status == 401 && ended.body["code"] as? String == "session_ended", "the Mac is signed out: \(ended.body)")
            #expect(try await Self.json(.GET, "\(scene.direct)/v1/me", bearer: scene.accessToken, http: http).status == 200, "the phone is not")

            // The admin page: each endpoint's health by its client's name, and when each operator last signed in.
            try await WebDriver.run(http: http) { browser in
                try await Self.signIn(browser, scene.origin, name: "ada")
                try await browser.waitForURL(endingWith: "/console/overview")
                var admin = ""
                for _ in 0..<100 {
                    try await browser.go("\(scene.origin)/console/admin")
                    admin = try await browser.waitForSource(containing: "Webhook endpoints")
                    if admin.contains("<strong>healthy</strong>") && admin.contains("<strong>failing</strong>") { break }
                    try await Task.sleep(for: .milliseconds(200))
                }
                #expect(admin.contains("<strong>healthy</strong>") && admin.contains("<strong>failing</strong>"), "\(admin)")
                #expect(admin.contains("Last failure: not delivered") && admin.contains("<tr class=\"failing\">"))
                #expect(admin.contains("Example Shop") && admin.contains("shown to customers as Bank Call Centre"))
                let operators = try #require(admin.range(of: "<h2>Operators</h2>").map { String(admin[$0.lowerBound...].prefix(4000)) })
                let mei = try #require(operators.range(of: "<td>mei ").map { String(operators[$0.lowerBound...].prefix(400)) })
                #expect(!mei.contains("never"), "mei signed in: \(mei)")
                let vic = try #require(operators.range(of: "<td>vic ").map { String(operators[$0.lowerBound...].prefix(400)) })
                #expect(vic.contains("never"), "vic never did: \(vic)")
                _ = try await browser.executeAsync("document.querySelector('tr.failing').scrollIntoView(); arguments[0](true)")
                try await browser.screenshot(to: Self.screenshots.appendingPathComponent("admin-webhooks.png"))
            }
            #expect(receiver.acceptedEvents.contains { $0.eventType == "approval.approved" }, "the listening endpoint got the events")
            await receiver.stop()
        }
    }

    /// A request of the test's own, answered as JSON: the status, the body's object and the headers.
    static func json(
        _ method: HTTPMethod,
        _ url: String,
        json: [String: any Sendable]? = nil,
        form: String? = nil,
        bearer: String? = nil,
        basic: ServiceClients.Credentials? = nil,
        headers: [String: String] = [:],
        http: HTTPClient
    ) async throws -> (status: Int, body: [String: Any], headers: HTTPHeaders) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json)))
        } else if let form {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: form))
        }
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        if let basic {
            request.headers.add(name: "Authorization", value: "Basic \(Data("\(basic.clientID):\(basic.secret)".utf8).base64EncodedString())")
        }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await http.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        let parsed = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
        return (Int(response.status.code), parsed, response.headers)
    }
}
