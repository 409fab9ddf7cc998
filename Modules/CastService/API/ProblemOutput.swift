/// An operation output that answers failures with problem documents. The generated enums' cases witness the
/// requirements, so `.answering(error)` picks the case for the error's HTTP status among those the operation
/// declares in `openapi.yaml`; a failure no module classified is 500, and any other status the operation does not
/// declare is answered as a bad gateway.
protocol ProblemOutput {
    static func notFound(_ problem: Components.Responses.Problem) -> Self
    static func gatewayTimeout(_ problem: Components.Responses.Problem) -> Self
    static func badGateway(_ problem: Components.Responses.Problem) -> Self
    static func internalServerError(_ problem: Components.Responses.Problem) -> Self
    /// The cases of the other problem statuses the operation declares (400, 403, 409, …), by status.
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] { get }
}

extension ProblemOutput {
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] { [:] }

    /// The answer to `error`.
    static func answering(_ error: any Error) -> Self {
        let error = CastServiceError(error)
        let problem = APIModel.problem(error)
        switch error.httpStatus {
        case 404: return .notFound(problem)
        case 504: return .gatewayTimeout(problem)
        case 500: return .internalServerError(problem)
        default: return declaredProblems[error.httpStatus]?(problem) ?? .badGateway(problem)
        }
    }
}

extension Operations.GetDevice.Output: ProblemOutput {}
extension Operations.StopApp.Output: ProblemOutput {}
extension Operations.SetVolume.Output: ProblemOutput {
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] { [400: badRequest] }
}
extension Operations.LoadMedia.Output: ProblemOutput {
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] {
        [400: badRequest, 403: forbidden, 422: unprocessableContent, 501: notImplemented]
    }
}
extension Operations.ControlMedia.Output: ProblemOutput {
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] { [400: badRequest, 409: conflict] }
}
