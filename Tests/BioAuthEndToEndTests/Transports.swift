import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession

// The transports tests put between the app and the server: a moving target, a broken gateway, a rewriting proxy.

/// Sends every request to `target`, whichever server that is now (a deployment restarted with other settings).
final class ForwardingTransport: ClientTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var url: URL
    private let inner = URLSessionTransport()

    init(to url: URL) { self.url = url }

    /// Where requests go from now on.
    var target: URL {
        get { lock.withLock { url } }
        set { lock.withLock { url = newValue } }
    }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        try await inner.send(request, body: body, baseURL: target, operationID: operationID)
    }
}

/// A proxy in front of the server that answers 502 with an HTML page.
struct BrokenGateway: ClientTransport {
    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        (HTTPResponse(status: .badGateway, headerFields: [.contentType: "text/html"]), HTTPBody("<html>Bad Gateway</html>"))
    }
}

/// Passes requests to the server and rewrites the `currencyExponent` of the receipt in its answers: removed, as a
/// server from before receipts carried it sends them, or stated as another value, as a tampering proxy would.
final class ReceiptRewriter: ClientTransport, @unchecked Sendable {
    enum Exponent {
        case asSent, removed
        case stated(Int)
    }

    private let lock = NSLock()
    private var rewrite = Exponent.asSent
    private let server: ForwardingTransport

    init(to url: URL) { server = ForwardingTransport(to: url) }

    /// What happens to the exponent of the next answers' receipts.
    var exponent: Exponent {
        get { lock.withLock { rewrite } }
        set { lock.withLock { rewrite = newValue } }
    }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        var (response, answer) = try await server.send(request, body: body, baseURL: baseURL, operationID: operationID)
        guard let answer else { return (response, nil) }
        let bytes = try await Data(collecting: answer, upTo: 1 << 20)
        guard var object = try? JSONSerialization.jsonObject(with: bytes) as? [String: Any], var receipt = object["receipt"] as? [String: Any]
        else { return (response, HTTPBody(bytes)) }
        switch exponent {
        case .asSent: return (response, HTTPBody(bytes))
        case .removed: receipt["currencyExponent"] = nil
        case .stated(let value): receipt["currencyExponent"] = value
        }
        object["receipt"] = receipt
        response.headerFields[.contentLength] = nil
        return (response, HTTPBody(try JSONSerialization.data(withJSONObject: object)))
    }
}
