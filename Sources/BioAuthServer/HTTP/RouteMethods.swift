import HTTPTypes
import OpenAPIRuntime

/// Which methods each of the API's paths has, as the generated handlers register them, so that a request for a path
/// that exists with another method is answered 405 `method_not_allowed` with an `Allow` header (RFC 9110 §15.5.6)
/// rather than 404.
struct RouteMethods: Sendable {
    private enum Segment: Sendable, Equatable {
        case literal(Substring)
        case parameter
    }

    private var routes: [(segments: [Segment], methods: [HTTPRequest.Method])] = []

    /// Records a registration: `path` is an OpenAPI path template such as `/v1/payments/{paymentId}`.
    mutating func add(_ method: HTTPRequest.Method, _ path: String) {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? Segment.parameter : .literal(part)
        }
        if let index = routes.firstIndex(where: { $0.segments == segments }) {
            if !routes[index].methods.contains(method) { routes[index].methods.append(method) }
        } else {
            routes.append((segments, [method]))
        }
    }

    /// The methods of the route `path` matches, in the order they were registered, or `[]` for a path the API does not
    /// have. A parameter matches any one non-empty segment, as the router's does.
    func methods(for path: String) -> [HTTPRequest.Method] {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        for route in routes where route.segments.count == parts.count {
            let matches = zip(route.segments, parts).allSatisfy { segment, part in
                switch segment {
                case .literal(let literal): literal == part
                case .parameter: !part.isEmpty
                }
            }
            if matches { return route.methods }
        }
        return []
    }
}

/// A transport that only records what is registered on it: the generated handlers are registered on one first to learn
/// the API's routes, before the middleware that needs them is added to the router.
final class RouteCollector: ServerTransport {
    private(set) var routes = RouteMethods()

    func register(
        _ handler: @Sendable @escaping (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        method: HTTPRequest.Method,
        path: String
    ) throws {
        routes.add(method, path)
    }
}
