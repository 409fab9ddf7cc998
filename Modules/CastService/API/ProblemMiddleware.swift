import HTTPTypes
import OpenAPIRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Answers what fails before or outside an operation's handler — a body that is not JSON, a missing field, a
/// wrong type, a path parameter outside its enum — as an RFC 9457 problem (400), not as an empty 500.
///
/// It also drops the request's `Accept` header: castd answers JSON (problems as `application/problem+json`)
/// whatever it asks, as RFC 9110 §12.5.1 allows. The generated layer checks `Accept` only after the handler ran,
/// so `Accept: application/json` alone turned every problem into a 500, with the command already carried out.
struct ProblemMiddleware: ServerMiddleware {
    let metrics: ServiceMetrics

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.accept] = nil
        do {
            return try await next(request, body, metadata)
        } catch let error as ServerError {
            // The generated layer failed to read the request: the client's fault. Anything else is ours.
            let problem =
                error.operationInput == nil
                ? CastServiceError(unreadableRequest: error.underlyingError)
                : CastServiceError(.module("internalError"), "\(error.underlyingError)", httpStatus: 500)
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
