import HTTPTypes
import Hummingbird

/// Browsers' cross-origin requests: answered only for the configured origins (CORS), refused for any other.
///
/// Refusing — not merely leaving out the CORS headers — matters because a page on another site can make a
/// browser send a body-less `POST` (pausing a device, say) without asking first; the response would be hidden from
/// the page, but the command would have run. Requests without `Origin` (curl, scripts) and same-origin requests
/// (a page castd itself serves) pass untouched.
struct CrossOriginMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext

    let allowedOrigins: Set<String>
    let metrics: ServiceMetrics

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let origin = request.headers[.origin] else { return try await next(request, context) }
        if let host = request.head.authority,
            origin == "http://\(host)" || origin == "https://\(host)"
        {
            return try await next(request, context)
        }
        guard allowedOrigins.contains(origin) else {
            return AccessMiddleware.refuse(
                CastServiceError(
                    .forbiddenOrigin,
                    "requests from the web page at \(origin) are not allowed (castd --allow-origin adds an origin)",
                    httpStatus: 403
                ),
                counting: metrics
            )
        }
        if request.method == .options {
            var headers = HTTPFields()
            headers[.accessControlAllowOrigin] = origin
            headers[.accessControlAllowMethods] = "GET, POST, PUT, DELETE, OPTIONS"
            headers[.accessControlAllowHeaders] = "Accept, Authorization, Content-Type, Last-Event-ID"
            headers[.accessControlMaxAge] = "600"
            headers[.vary] = "Origin"
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.vary] = "Origin"
        return response
    }
}
