import NIOCore

/// Counts the open HTTP connections in ``ServerMetrics``: one per connection pipeline, from when the handler is added
/// (the connection was accepted) until it is removed (the connection closed).
final class ConnectionCounter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let metrics: ServerMetrics
    private var counted = false

    init(metrics: ServerMetrics) { self.metrics = metrics }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = true
        metrics.connectionsOpen(1)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        guard counted else { return }
        counted = false
        metrics.connectionsOpen(-1)
    }
}
