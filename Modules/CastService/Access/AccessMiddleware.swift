import CastLogging
import HTTPTypes
import Hummingbird
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What every request passes before the API sees it, in this order: the client's rate limit (so guessing tokens
/// is limited too), the bearer token when tokens are configured, and the body size limit. Each refusal is an
/// RFC 9457 problem: 429 with `Retry-After`, 401 with `WWW-Authenticate`, 413.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext

    let tokens: [BearerTokenHash]
    let rateLimiter: RateLimiter?
    let maximumBodySize: Int
    let metrics: ServiceMetrics

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let wait = rateLimiter?.admit(context.clientKey) {
            let seconds = max(1, Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
            var response = refuse(
                CastServiceError(
                    .rateLimited,
                    "too many requests from this client; retry in \(seconds) s",
                    httpStatus: 429
                )
            )
            response.headers[.retryAfter] = String(seconds)
            return response
        }
        if tokens.isEmpty, let authority = request.head.authority, !Self.namesLoopback(authority) {
            // Without tokens castd listens on loopback only, so a browser naming another host reached it through
            // DNS rebinding (a page whose name now resolves to 127.0.0.1): its same-origin requests must not pass.
            return refuse(
                CastServiceError(
                    .forbiddenOrigin,
                    "requests for host \(authority) are refused: without tokens castd answers only for 127.0.0.1, "
                        + "localhost or [::1]",
                    httpStatus: 403
                )
            )
        }
        if !tokens.isEmpty {
            guard let token = Self.bearerToken(request.headers[.authorization]),
                tokens.contains(where: { $0.matches(token) })
            else {
                var response = refuse(
                    CastServiceError(
                        .unauthorized,
                        "this castd needs a bearer token: send 'Authorization: Bearer TOKEN'",
                        httpStatus: 401
                    )
                )
                response.headers[.wwwAuthenticate] = "Bearer realm=\"castd\""
                return response
            }
        }
        var request = request
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maximumBodySize {
            return refuse(Self.tooLarge(maximumBodySize))
        }
        if request.method == .post || request.method == .put || request.method == .patch,
            request.headers[.contentLength] != "0"
        {
            do {
                _ = try await request.collectBody(upTo: maximumBodySize)
            } catch is NIOTooManyBytesError {
                return refuse(Self.tooLarge(maximumBodySize))
            }
        }
        return try await next(request, context)
    }

    /// Whether a `Host` (`name[:port]`, `[v6]:port`) names this machine's loopback: `localhost` (and names under
    /// it), 127.0.0.0/8 or `::1`.
    static func namesLoopback(_ authority: String) -> Bool {
        var host = authority.lowercased()
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":"), host.filter({ $0 == ":" }).count == 1 {
            host = String(host[..<colon])
        }
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// The token of an `Authorization: Bearer TOKEN` header (the scheme is case-insensitive, RFC 6750).
    static func bearerToken(_ header: String?) -> String? {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        let token = String(header.dropFirst(7).trimmingWhitespace())
        return token.isEmpty ? nil : token
    }

    private static func tooLarge(_ limit: Int) -> CastServiceError {
        CastServiceError(.bodyTooLarge, "the request body is over \(limit) bytes", httpStatus: 413)
    }

    /// The problem answering a refused request, counted in the metrics.
    private func refuse(_ problem: CastServiceError) -> Response { Self.refuse(problem, counting: metrics) }

    /// The problem answering a request refused before the API saw it (here or by ``CrossOriginMiddleware``),
    /// counted in the metrics.
    static func refuse(_ problem: CastServiceError, counting metrics: ServiceMetrics) -> Response {
        metrics.recordError(problem)
        return Self.problem(problem)
    }

    static func problem(_ problem: CastServiceError) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        let document = APIModel.json(APIModel.problemDocument(problem)).jsonString
        return Response(
            status: .init(code: problem.httpStatus),
            headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: document))
        )
    }
}
