import CastMediaServer
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
            var problem =
                error.operationInput == nil
                ? CastServiceError(unreadableRequest: error.underlyingError)
                : CastServiceError(.module("internalError"), "\(error.underlyingError)", httpStatus: 500)
            if problem.httpStatus == 400, problem.field == nil,
                let parameter = Self.parameter(
                    failing: error.underlyingError,
                    query: request.path.flatMap { $0.split(separator: "?", maxSplits: 1).dropFirst().first } ?? "",
                    pathParameters: metadata.pathParameters
                )
            {
                problem = CastServiceError(
                    .invalidRequest,
                    "'\(parameter.name)' \(parameter.requirement), not '\(parameter.value.prefix(100))'",
                    httpStatus: 400,
                    field: parameter.name
                )
            }
            metrics.recordError(problem)
            return Self.response(problem)
        }
    }

    /// What the API's typed query and path parameters hold (openapi.yaml; a test keeps the two in step). Their
    /// values are decoded before any handler runs; the other parameters are strings, which cannot fail.
    enum ParameterType: String, CaseIterable {
        case number, integer, boolean, enumeration

        var requirement: String {
            switch self {
            case .number: "must be a number"
            case .integer: "must be an integer"
            case .boolean: "must be true or false"
            case .enumeration: "is not one of its values"
            }
        }

        func accepts(_ value: String) -> Bool {
            switch self {
            case .number: Double(value) != nil
            case .integer: Int64(value) != nil
            case .boolean: value == "true" || value == "false"
            case .enumeration: false
            }
        }
    }

    static let typedParameters: [String: ParameterType] = [
        "position": .number, "rate": .number, "relative": .boolean, "itemId": .integer, "limit": .integer,
        "command": .enumeration,
    ]

    /// The query or path parameter a decoding error is about, with what its value must be. The generated layer
    /// decodes each parameter alone, so its errors carry no coding path: the parameter is the typed one whose value
    /// its type refuses, or the enumeration whose value the error quotes.
    static func parameter(
        failing error: any Error,
        query: Substring,
        pathParameters: [String: Substring]
    ) -> (name: String, requirement: String, value: String)? {
        guard let error = error as? DecodingError else { return nil }
        // Path parameters come as they were written, escapes and all.
        var candidates = pathParameters.sorted { $0.key < $1.key }.map {
            (name: $0.key, value: RequestPath.decode($0.value) ?? String($0.value))
        }
        for item in query.split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) -> String {
                let text = String(text.map { $0 == "+" ? " " : $0 })
                return RequestPath.decode(text[...]) ?? text
            }
            candidates.append((decoded(parts[0]), parts.count > 1 ? decoded(parts[1]) : ""))
        }
        let failing = candidates.first { candidate in
            guard let type = typedParameters[candidate.name] else { return false }
            switch error {
            case .typeMismatch, .valueNotFound: return type != .enumeration && !type.accepts(candidate.value)
            case .dataCorrupted(let context):
                return type == .enumeration && context.debugDescription.contains(candidate.value)
            default: return false
            }
        }
        return failing.map { ($0.name, typedParameters[$0.name]?.requirement ?? "", $0.value) }
    }

    static func response(_ problem: CastServiceError) -> (HTTPResponse, HTTPBody?) {
        let document = APIModel.json(APIModel.problemDocument(problem)).jsonString
        var response = HTTPResponse(status: .init(code: problem.httpStatus))
        response.headerFields[.contentType] = "application/problem+json"
        return (response, HTTPBody(document))
    }
}
