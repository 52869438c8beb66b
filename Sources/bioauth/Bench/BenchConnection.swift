import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import OpenAPIRuntime

/// The load generator's HTTP/1.1 transport: one keep-alive connection, one request at a time, bodies read whole.
///
/// Each bench worker drives its devices one operation after another, so it needs no pool, no streaming and no
/// redirects; AsyncHTTPClient provides all three and its per-request bookkeeping was about 40 % of the load
/// generator's CPU, which on a 2-core machine is taken from the server being measured. The requests are the
/// same bytes the client library sends (the generated client builds them); only the plumbing under it is lighter.
/// A connection that closes (or fails) is opened again on the next request; the failed request is reported
/// like any transport error, as is a response that does not arrive within `timeout`.
final class BenchConnection: ClientTransport, Sendable {
    private let host: String
    private let port: Int
    private let basePath: String
    private let group: any EventLoopGroup
    private let timeout: TimeAmount
    private let channel = NIOLockedValueBox<(any Channel)?>(nil)

    /// The largest response body accepted; the API's responses are a few hundred bytes.
    static let maximumBodyBytes = 1 << 20

    init(serverURL: URL, timeout: TimeAmount = .seconds(30), group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        guard let host = serverURL.host, let port = serverURL.port ?? (serverURL.scheme == "http" ? 80 : nil), serverURL.scheme == "http" else {
            throw BenchError("the bench's HTTP client speaks plain http to a host and port, not \(serverURL.absoluteString)")
        }
        self.host = host
        self.port = port
        var path = serverURL.path
        while path.hasSuffix("/") { path.removeLast() }
        basePath = path
        self.timeout = timeout
        self.group = group
    }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        var bytes: ByteBuffer?
        if let body { bytes = ByteBuffer(bytes: try await [UInt8](collecting: body, upTo: Self.maximumBodyBytes)) }
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method.rawValue), uri: basePath + (request.path ?? "/"))
        head.headers.reserveCapacity(request.headerFields.count + 2)
        for field in request.headerFields { head.headers.add(name: field.name.rawName, value: field.value) }
        if !head.headers.contains(name: "host") { head.headers.add(name: "host", value: "\(host):\(port)") }
        head.headers.replaceOrAdd(name: "content-length", value: String(bytes?.readableBytes ?? 0))

        let channel = try await connected()
        let promise = channel.eventLoop.makePromise(of: BenchExchangeHandler.Response.self)
        // A write that fails before the handler has the exchange (the channel closed in between) must fail the
        // response too, or the request would wait forever; once the handler has it, a second failure is ignored.
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { promise.fail($0) }
        let limit = timeout
        let expiry = channel.eventLoop.scheduleTask(in: limit) {
            promise.fail(BenchError("no response within \(limit.nanoseconds / 1_000_000) ms"))
        }
        promise.futureResult.whenComplete { _ in expiry.cancel() }
        channel.writeAndFlush(BenchExchangeHandler.Exchange(head: head, body: bytes, response: promise), promise: written)
        let response: BenchExchangeHandler.Response
        do {
            response = try await promise.futureResult.get()
        } catch {
            // The connection may still deliver the response later; it is closed so that it cannot answer the next
            // request with this one's response.
            forget(channel)
            throw error
        }
        if !response.keepAlive { forget(channel) }
        var fields = HTTPFields()
        fields.reserveCapacity(response.head.headers.count)
        for (name, value) in response.head.headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        let status = HTTPResponse.Status(code: Int(response.head.status.code), reasonPhrase: response.head.status.reasonPhrase)
        let responseBody = response.body.map { HTTPBody(Array($0.readableBytesView)) }
        return (HTTPResponse(status: status, headerFields: fields), responseBody)
    }

    /// Closes the connection, if one is open.
    func close() async {
        let open = channel.withLockedValue { channel in
            defer { channel = nil }
            return channel
        }
        try? await open?.close()
    }

    /// The open connection, or a new one.
    private func connected() async throws -> any Channel {
        if let open = channel.withLockedValue({ $0 }), open.isActive { return open }
        let fresh = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(BenchExchangeHandler())
                }
            }
            .connect(host: host, port: port).get()
        let stale = channel.withLockedValue { channel in
            defer { channel = fresh }
            return channel
        }
        try? await stale?.close()
        return fresh
    }

    /// Drops `used` after a failure or a `Connection: close`, so the next request opens a new connection.
    private func forget(_ used: any Channel) {
        let dropped = channel.withLockedValue { channel -> (any Channel)? in
            guard let open = channel, open === used else { return nil }
            channel = nil
            return open
        }
        dropped?.close(promise: nil)
    }
}

/// Writes one request and completes its promise with the response; one exchange at a time per connection.
final class BenchExchangeHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Exchange
    typealias OutboundOut = HTTPClientRequestPart

    /// A request to write and the promise its response completes.
    struct Exchange: Sendable {
        var head: HTTPRequestHead
        var body: ByteBuffer?
        var response: EventLoopPromise<Response>
    }

    /// A whole response.
    struct Response: Sendable {
        var head: HTTPResponseHead
        var body: ByteBuffer?
        var keepAlive: Bool
    }

    private var pending: EventLoopPromise<Response>?
    private var head: HTTPResponseHead?
    private var body: ByteBuffer?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        guard pending == nil else {
            exchange.response.fail(BenchError("the bench's HTTP connection already has a request in flight"))
            promise?.fail(ChannelError.inappropriateOperationForState)
            return
        }
        pending = exchange.response
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        if let body = exchange.body, body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.write(wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let received):
            head = received
            body = nil
        case .body(var part):
            if body == nil {
                body = part
            } else if body!.readableBytes + part.readableBytes > BenchConnection.maximumBodyBytes {
                fail(context: context, BenchError("a response body larger than \(BenchConnection.maximumBodyBytes) bytes"))
            } else {
                body!.writeBuffer(&part)
            }
        case .end:
            guard let head, let promise = pending else { return }
            pending = nil
            self.head = nil
            let keepAlive = head.isKeepAlive
            promise.succeed(Response(head: head, body: body, keepAlive: keepAlive))
            body = nil
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(context: context, BenchError("the server closed the connection before responding"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context: context, error)
        context.close(promise: nil)
    }

    private func fail(context: ChannelHandlerContext, _ error: any Error) {
        guard let promise = pending else { return }
        pending = nil
        head = nil
        body = nil
        promise.fail(error)
        context.close(promise: nil)
    }
}
