import BioAuthCore
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A webhook receiver on 127.0.0.1 for tests and demos (`bioauth demo` prints what it receives): it checks each
/// delivery's `BioAuth-Signature` with `WebhookSignature` and keeps what arrived. How it answers is up to you: 200 by
/// default, or scripted per request — another status, a delay, or closing the connection without an answer — and it can
/// be stopped and started again on the same port to play a receiver that is down for a while.
///
/// ```swift
/// // Partial: assumes secret: String
/// let receiver = try await LoopbackWebhookReceiver.start()
/// // register receiver.url with POST /v1/service/webhook-endpoints; trust the secret it answers:
/// receiver.trust(secret: secret)
/// receiver.script(.status(500), .close)           // the first two deliveries fail
/// let events = try await receiver.waitForEvents(3)
/// await receiver.stop()
/// ```
public final class LoopbackWebhookReceiver: Sendable {
    /// How the receiver answers one delivery.
    public enum Answer: Sendable, Equatable {
        /// This HTTP status, at once.
        case status(Int)
        /// This HTTP status after a delay (longer than the server's timeout: a receiver that times out).
        case delayed(Duration, status: Int)
        /// Closes the connection without answering.
        case close
    }

    /// One delivery as it arrived.
    public struct Delivery: Sendable {
        /// The `BioAuth-Event-Id` header.
        public let eventID: String
        /// The `BioAuth-Event-Type` header.
        public let eventType: String
        /// The `BioAuth-Delivery-Attempt` header.
        public let attempt: Int
        /// The `BioAuth-Signature` header.
        public let signatureHeader: String
        /// The `Authorization` header (a CIBA ping's bearer token), or empty.
        public var authorization: String = ""
        /// The body, exactly as received.
        public let body: Data
        /// Whether the signature verified with a trusted secret (at the receiver's clock, or `verifyAt` if set).
        public let verified: Bool
        /// How the receiver answered it.
        public let answer: Answer

        /// The body as JSON.
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    }

    private struct State {
        var secrets: [String] = []
        var script: [Answer] = []
        var deliveries: [Delivery] = []
        var channel: (any Channel)?
        /// Accepted connections, closed by ``stop()`` too (a client's kept-alive connection would otherwise still work).
        var connections: [ObjectIdentifier: any Channel] = [:]
        var port: Int = 0
        var verifyAt: Date?
    }

    private let state = NIOLockedValueBox(State())

    private init() {}

    /// `http://127.0.0.1:<port>/webhooks`.
    public var url: URL { URL(string: "http://127.0.0.1:\(state.withLockedValue { $0.port })/webhooks")! }

    /// Starts a receiver on `port` (0: a free one).
    ///
    /// A free port is one of ``LoopbackPorts/webhookReceivers``, so that a receiver stopped to play one that is down
    /// gets its port back at ``restart()``.
    public static func start(port: Int = 0) async throws -> LoopbackWebhookReceiver {
        let receiver = LoopbackWebhookReceiver()
        if port == 0 {
            try await LoopbackPorts.bindFree(in: LoopbackPorts.webhookReceivers) { try await receiver.bind(port: $0) }
        } else {
            try await receiver.bind(port: port)
        }
        return receiver
    }

    /// Accepts signatures made with `secret` from now on (several may be trusted at once).
    public func trust(secret: String) { state.withLockedValue { $0.secrets.append(secret) } }

    /// Checks signatures as of `date` instead of the receiver's clock (for a server on a test clock).
    public func verifySignatures(at date: Date?) { state.withLockedValue { $0.verifyAt = date } }

    /// The answers to the next deliveries, in order; after them, 200.
    public func script(_ answers: Answer...) { state.withLockedValue { $0.script.append(contentsOf: answers) } }

    /// Forgets the scripted answers not used yet: the next deliveries get 200.
    public func clearScript() { state.withLockedValue { $0.script.removeAll() } }

    /// Every delivery so far, in the order they arrived.
    public var deliveries: [Delivery] { state.withLockedValue { $0.deliveries } }

    /// The deliveries answered with a 2xx, one per event id (the first).
    public var acceptedEvents: [Delivery] {
        var seen = Set<String>()
        return deliveries.filter { delivery in
            guard case .status(let code) = delivery.answer, (200..<300).contains(code) else { return false }
            return seen.insert(delivery.eventID).inserted
        }
    }

    /// Waits until `count` distinct events were accepted, or `timeout` passes (then throws).
    @discardableResult
    public func waitForEvents(_ count: Int, timeout: Duration = .seconds(30)) async throws -> [Delivery] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let accepted = acceptedEvents
            if accepted.count >= count { return accepted }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TimeoutError(message: "expected \(count) accepted events, got \(acceptedEvents.count) (\(deliveries.count) deliveries)")
    }

    /// What ``waitForEvents(_:timeout:)`` throws.
    public struct TimeoutError: Error, CustomStringConvertible {
        /// What was expected and what came.
        public let description: String
        init(message: String) { self.description = message }
    }

    /// Stops listening and closes every connection (deliveries then fail with a refused connection) until ``restart()``.
    public func stop() async {
        let channels = state.withLockedValue { state -> [any Channel] in
            defer {
                state.channel = nil
                state.connections = [:]
            }
            return (state.channel.map { [$0] } ?? []) + Array(state.connections.values)
        }
        for channel in channels { try? await channel.close() }
    }

    /// Listens again on the same port.
    public func restart() async throws {
        try await bind(port: state.withLockedValue { $0.port })
    }

    private func bind(port: Int) async throws {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let id = ObjectIdentifier(channel)
                self.state.withLockedValue { $0.connections[id] = channel }
                channel.closeFuture.whenComplete { _ in _ = self.state.withLockedValue { $0.connections.removeValue(forKey: id) } }
                return channel.pipeline.configureHTTPServerPipeline().flatMap { channel.pipeline.addHandler(Handler(receiver: self)) }
            }
            .bind(host: "127.0.0.1", port: port).get()
        state.withLockedValue {
            $0.channel = channel
            $0.port = channel.localAddress?.port ?? port
        }
    }

    /// Records a delivery and decides the answer.
    fileprivate func received(head: HTTPRequestHead, body: Data) -> Answer {
        state.withLockedValue { state in
            let answer = state.script.isEmpty ? .status(200) : state.script.removeFirst()
            let header = head.headers.first(name: WebhookSignature.headerName) ?? ""
            let now = state.verifyAt ?? Date()
            let verified = state.secrets.contains { secret in
                (try? WebhookSignature(secret: secret).verify(header: header, body: body, now: now)) != nil
            }
            state.deliveries.append(
                Delivery(
                    eventID: head.headers.first(name: "BioAuth-Event-Id") ?? "",
                    eventType: head.headers.first(name: "BioAuth-Event-Type") ?? "",
                    attempt: Int(head.headers.first(name: "BioAuth-Delivery-Attempt") ?? "") ?? 0,
                    signatureHeader: header,
                    authorization: head.headers.first(name: "Authorization") ?? "",
                    body: body,
                    verified: verified,
                    answer: answer
                )
            )
            return answer
        }
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let receiver: LoopbackWebhookReceiver
        var head: HTTPRequestHead?
        var body = Data()

        init(receiver: LoopbackWebhookReceiver) { self.receiver = receiver }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = Data()
            case .body(var buffer):
                if let bytes = buffer.readBytes(length: buffer.readableBytes) { body.append(contentsOf: bytes) }
            case .end:
                guard let head else { return }
                switch receiver.received(head: head, body: body) {
                case .close:
                    context.close(promise: nil)
                case .status(let code):
                    respond(code, context: context)
                case .delayed(let delay, let code):
                    let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                    context.eventLoop.scheduleTask(in: .nanoseconds(delay.nanoseconds)) {
                        self.respond(code, context: loopBound.value)
                    }
                }
            }
        }

        private func respond(_ code: Int, context: ChannelHandlerContext) {
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "0")
            let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: code), headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
