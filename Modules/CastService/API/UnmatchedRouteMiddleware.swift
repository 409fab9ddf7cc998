import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers

/// Answers a request no route takes as a problem: 405 with `Allow` when its path exists for other methods (a
/// `GET` of a command, a `DELETE` of the device list), else 404. Hummingbird alone answers both with a bare 404,
/// which tells a client that typed the right path with the wrong method nothing.
struct UnmatchedRouteMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The routes, filled in once they are all registered (this middleware must come before them).
    let routes: RouteTable
    let metrics: ServiceMetrics

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = routes.methods(for: request.uri.path)
            guard !allowed.isEmpty else {
                return AccessMiddleware.refuse(
                    CastServiceError(.routeNotFound, "castd has no \(request.uri.path)", httpStatus: 404),
                    counting: metrics
                )
            }
            // Hummingbird answers HEAD wherever GET is served.
            let names = (allowed.contains(.get) ? allowed.union([.head]) : allowed).map(\.rawValue).sorted()
                .joined(separator: ", ")
            var response = AccessMiddleware.refuse(
                CastServiceError(
                    .methodNotAllowed,
                    "\(request.uri.path) takes \(names), not \(request.method.rawValue)",
                    httpStatus: 405
                ),
                counting: metrics
            )
            response.headers[.allow] = names
            return response
        }
    }
}

/// The paths a router serves and their methods, for ``UnmatchedRouteMiddleware``.
final class RouteTable: Sendable {
    private let routes = NIOLockedValueBox<[(path: RouterPath, method: HTTPRequest.Method)]>([])

    /// Takes the router's routes, once they are all registered.
    func fill(with descriptions: [Router<some RequestContext>.RouteDescription]) {
        routes.withLockedValue { $0 = descriptions.map { ($0.path, $0.method) } }
    }

    /// The methods `path` is served for.
    func methods(for path: String) -> Set<HTTPRequest.Method> {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        return routes.withLockedValue { routes in
            Set(routes.filter { Self.matches($0.path, segments) }.map(\.method))
        }
    }

    private static func matches(_ route: RouterPath, _ segments: [Substring]) -> Bool {
        var index = 0
        for element in route.components {
            if element.description == "**" { return true }
            guard index < segments.count, element ~= segments[index] else { return false }
            index += 1
        }
        return index == segments.count
    }
}
