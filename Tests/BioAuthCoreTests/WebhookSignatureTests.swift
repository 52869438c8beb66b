import BioAuthCore
import Foundation
import Testing

/// The webhook signature as docs/PROTOCOL.md publishes it (vectors made with Python's hmac module).
@Suite("Webhook signatures")
struct WebhookSignatureTests {
    static let secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
    static let nextSecret = "whsec_ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8"
    static let body = Data(
        #"{"createdAt":"2026-11-19T08:26:40Z","data":{"accountId":"acct-1","amountMinor":8800,"currency":"CNY","payeeId":"merchant-coffee-042","payeeName":"Coffee Shop","paymentId":"pay-1","status":"authorized"},"id":"evt_1","type":"payment.authorized"}"#
            .utf8
    )
    static let sent = Date(timeIntervalSince1970: 1_795_000_000)

    @Test("the published vectors: one secret, two during a rotation, and a body in UTF-8 Chinese")
    func vectors() throws {
        #expect(
            WebhookSignature(secret: Self.secret).signature(body: Self.body, timestamp: 1_795_000_000)
                == "a97bb6d0c5fe9ff27d20691c7058082d3598c438f2f0af1e5bfb63e56c6d6949"
        )
        #expect(
            WebhookSignature.header(body: Self.body, timestamp: 1_795_000_000, secrets: [Self.nextSecret, Self.secret])
                == "t=1795000000,v1=f2fa209be2da56ed52259b078070aa1597a3b08f6a7f2611e11deb7710471d3f,v1=a97bb6d0c5fe9ff27d20691c7058082d3598c438f2f0af1e5bfb63e56c6d6949"
        )
        let chinese = Data(#"{"data":{"payeeName":"咖啡店"},"id":"evt_2","type":"payment.cancelled"}"#.utf8)
        #expect(
            WebhookSignature(secret: Self.secret).signature(body: chinese, timestamp: 1_795_000_001)
                == "8b1f529ad5da459e4cbebd9f5afbe3063dd3d02adfb00a81d27f4df1c6b5f166"
        )
    }

    @Test("a rotation's header verifies with the old secret and with the new one")
    func rotation() throws {
        let header = WebhookSignature.header(body: Self.body, timestamp: 1_795_000_000, secrets: [Self.nextSecret, Self.secret])
        #expect(try WebhookSignature(secret: Self.secret).verify(header: header, body: Self.body, now: Self.sent) == 1_795_000_000)
        #expect(try WebhookSignature(secret: Self.nextSecret).verify(header: header, body: Self.body, now: Self.sent) == 1_795_000_000)
        #expect(throws: WebhookSignature.Failure.signatureMismatch) {
            try WebhookSignature(secret: "whsec_other").verify(header: header, body: Self.body, now: Self.sent)
        }
    }

    @Test("a changed body, a changed timestamp or a replay after five minutes is refused")
    func attacks() throws {
        let signer = WebhookSignature(secret: Self.secret)
        let header = WebhookSignature.header(body: Self.body, timestamp: 1_795_000_000, secrets: [Self.secret])
        var changed = Self.body
        changed[changed.firstIndex(of: UInt8(ascii: "8"))!] = UInt8(ascii: "9")  // 8800 → 9800
        #expect(throws: WebhookSignature.Failure.signatureMismatch) { try signer.verify(header: header, body: changed, now: Self.sent) }
        let moved = header.replacingOccurrences(of: "t=1795000000", with: "t=1795000100")
        #expect(throws: WebhookSignature.Failure.signatureMismatch) {
            try signer.verify(header: moved, body: Self.body, now: Self.sent.addingTimeInterval(100))
        }
        #expect(throws: WebhookSignature.Failure.timestampOutsideTolerance) {
            try signer.verify(header: header, body: Self.body, now: Self.sent.addingTimeInterval(301))
        }
        #expect(throws: WebhookSignature.Failure.timestampOutsideTolerance) {
            try signer.verify(header: header, body: Self.body, now: Self.sent.addingTimeInterval(-301))
        }
        #expect(try signer.verify(header: header, body: Self.body, now: Self.sent.addingTimeInterval(299)) == 1_795_000_000)
    }

    @Test(
        "malformed headers are refused as such, never crash; an unknown scheme beside v1 is ignored",
        arguments: [
            nil, "", "t=1795000000", "v1=00", "t=abc,v1=a97b", "t=1795000000,v1=zz", "t=-1,v1=00", "t=1,t=2,v1=00",
            "t=1795000000,v1=a97bb6d0c5fe9ff27d20691c7058082d3598c438f2f0af1e5bfb63e56c6d69", "garbage",
            String(repeating: "t=1,", count: 400),
        ]
    )
    func malformed(header: String?) {
        #expect(throws: WebhookSignature.Failure.malformedHeader) {
            try WebhookSignature(secret: Self.secret).verify(header: header, body: Self.body, now: Self.sent)
        }
    }

    @Test("a later scheme sent beside v1 does not stop verification")
    func unknownScheme() throws {
        let header = "t=1795000000,v2=abc,v1=a97bb6d0c5fe9ff27d20691c7058082d3598c438f2f0af1e5bfb63e56c6d6949"
        #expect(try WebhookSignature(secret: Self.secret).verify(header: header, body: Self.body, now: Self.sent) == 1_795_000_000)
    }
}
