import BioAuthCore
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request that cannot be parsed as HTTP/1.1 (a garbage request line, control characters in a header,
/// two `Content-Length`s, `Content-Length` with `Transfer-Encoding`, ...) with 400 and a `malformed_request`
/// problem document, then closes the connection: after a framing error nothing more on it can be trusted.
///
/// Hummingbird would answer such a request with a bare 400 and an empty body. It sits after the HTTP codec,
/// so it sees the decoder's errors before the request handler does. An error in the middle of a request's body
/// (a bad chunk size, a body shorter than its `Content-Length` before the client closes) is left to reach the
/// request, whose handler reads the body and answers the same problem itself (``HTTPProblemMiddleware``): a
/// response written here then would interleave with the one the handler writes.
///
/// The refusal is counted in `bioauth_problems_total{code="malformed_request"}`, like the refusals the handlers write.
final class FramingErrorHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Whether a request's head has arrived and its response has not been finished.
    private var requestInFlight = false
    private var answered = false
    private let metrics: ServerMetrics

    init(metrics: ServerMetrics) {
        self.metrics = metrics
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { requestInFlight = true }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { requestInFlight = false }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError, !requestInFlight else {
            context.fireErrorCaught(error)
            return
        }
        guard !answered else { return }
        answered = true
        let problem = APIError(.malformedRequest, "The request is not valid HTTP/1.1.")
        metrics.problem(problem.code)
        var fields = problem.httpHeaderFields
        fields[.contentLength] = String(problem.jsonBody().count)
        fields[.connection] = "close"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: problem.httpStatus, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: problem.jsonBody()))), promise: nil)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
    }
}
