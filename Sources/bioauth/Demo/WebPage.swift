import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The demo's web banking page, played over HTTP as its script would: it asks for a sign-in QR code, keeps the cookie the
/// answer sets (which binds the code to this "browser"), and asks whether the phone approved.
final class WebPage: @unchecked Sendable {
    let server: URL
    private var cookie: String?
    /// The access token of the session the page was handed, once signed in.
    private(set) var accessToken: String?

    init(server: URL) { self.server = server }

    /// `POST /v1/qr-sign-ins`: the code's id, what the QR holds, and the number shown beside it.
    func showQRCode() async throws -> (id: String, url: String, number: Int) {
        let (status, headers, body) = try await post("v1/qr-sign-ins", json: nil)
        guard status == 201, let id = body["qrSignInId"] as? String, let url = body["url"] as? String, let number = body["matchNumber"] as? Int
        else { throw DemoStory.Deviation(detail: "the page got no QR code: \(status) \(body)") }
        cookie = headers.first(name: "Set-Cookie")?.split(separator: ";").first.map(String.init)
        return (id, url, number)
    }

    /// `POST /v1/qr-sign-ins/{id}/session` with this page's cookie: `signed_in` (with the session), `waiting`, `scanned`,
    /// …, or the problem's code (`qr_browser_mismatch` for a page that did not show the code).
    func poll(_ id: String) async throws -> String {
        let (_, _, body) = try await post("v1/qr-sign-ins/\(id)/session", json: ["installationId": "demo-web-page"])
        if let status = body["status"] as? String {
            if status == "signed_in", body["tokens"] == nil { return "signed_in (tokens handed over before)" }
            if let tokens = body["tokens"] as? [String: Any] { accessToken = tokens["accessToken"] as? String }
            return status
        }
        return body["code"] as? String ?? "?"
    }

    private func post(_ path: String, json: [String: String]?) async throws -> (Int, HTTPHeaders, [String: Any]) {
        var request = HTTPClientRequest(url: server.appendingPathComponent(path).absoluteString)
        request.method = .POST
        request.headers.add(
            name: "User-Agent",
            value: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 Chrome/131.0 Safari/537.36"
        )
        if let cookie { request.headers.add(name: "Cookie", value: cookie) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json)))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let body = (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:]
        return (Int(response.status.code), response.headers, body)
    }
}
