import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Answers what fails before or outside an operation's handler — a body that is not JSON, a missing field, a
/// wrong type, a path parameter outside its enum — as an RFC 9457 problem (400), not as an empty 500.
struct ProblemMiddleware: ServerMiddleware {
    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        do {
            return try await next(request, body, metadata)
        } catch let error as ServerError {
            // The generated layer failed to read the request: the client's fault. Anything else is ours.
            let isRequestError = error.operationInput == nil
            let problem = CastServiceError(
                isRequestError ? .invalidRequest : .module("internalError"),
                isRequestError ? "the request could not be read: \(Self.reason(error.underlyingError))" : "\(error)",
                httpStatus: isRequestError ? 400 : 500,
                field: Self.field(error.underlyingError)
            )
            return Self.response(problem)
        }
    }

    static func response(_ problem: CastServiceError) -> (HTTPResponse, HTTPBody?) {
        let document = APIModel.json(APIModel.problemDocument(problem)).jsonString
        var response = HTTPResponse(status: .init(code: problem.httpStatus))
        response.headerFields[.contentType] = "application/problem+json"
        return (response, HTTPBody(document))
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): context.debugDescription
        case DecodingError.keyNotFound(let key, _): "'\(key.stringValue)' is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "'\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
        default: "\(error)"
        }
    }

    private static func field(_ error: any Error) -> String? {
        switch error {
        case DecodingError.keyNotFound(let key, _): key.stringValue
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            context.codingPath.last?.stringValue
        default: nil
        }
    }
}
