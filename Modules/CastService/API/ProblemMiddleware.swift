import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Answers what fails before or outside an operation's handler — a body that is not JSON, a missing field, a
/// wrong type, a path parameter outside its enum — as an RFC 9457 problem (400), not as an empty 500.
struct ProblemMiddleware: ServerMiddleware {
    let metrics: ServiceMetrics

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        // A failure is answered as application/problem+json whatever the client accepts (RFC 9457 §3): a client
        // that asks for application/json must get the problem, not a content negotiation failure in its place.
        var request = request
        if let accept = request.headerFields[.accept], !accept.contains("problem+json") {
            request.headerFields[.accept] = accept + ", application/problem+json"
        }
        do {
            return try await next(request, body, metadata)
        } catch let error as ServerError {
            // The generated layer failed to read the request: the client's fault. Anything else is ours.
            let problem =
                error.operationInput == nil
                ? CastServiceError(unreadableRequest: error.underlyingError)
                : CastServiceError(.module("internalError"), "\(error)", httpStatus: 500)
            metrics.recordError(problem)
            return Self.response(problem)
        }
    }

    static func response(_ problem: CastServiceError) -> (HTTPResponse, HTTPBody?) {
        let document = APIModel.json(APIModel.problemDocument(problem)).jsonString
        var response = HTTPResponse(status: .init(code: problem.httpStatus))
        response.headerFields[.contentType] = "application/problem+json"
        return (response, HTTPBody(document))
    }
}
