/// An operation output that answers failures with problem documents; the generated enums' cases witness the
/// requirements, so `.answering(error)` picks the case for the error's HTTP status among those the operation
/// declares in `openapi.yaml` (a status it does not declare is answered as a bad gateway).
protocol ProblemOutput {
    static func notFound(_ problem: Components.Responses.Problem) -> Self
    static func gatewayTimeout(_ problem: Components.Responses.Problem) -> Self
    static func badGateway(_ problem: Components.Responses.Problem) -> Self
    /// The answer to `error`.
    static func answering(_ error: any Error) -> Self
}

/// An output that also declares 400 (the operation takes input it can reject).
protocol BadRequestOutput: ProblemOutput {
    static func badRequest(_ problem: Components.Responses.Problem) -> Self
}

/// An output that also declares 409 (the command may not fit what the device does).
protocol ConflictOutput: BadRequestOutput {
    static func conflict(_ problem: Components.Responses.Problem) -> Self
}

extension ProblemOutput {
    static func answering(_ error: any Error) -> Self {
        answer(CastServiceError(error), badRequest: nil, conflict: nil)
    }

    fileprivate static func answer(
        _ error: CastServiceError,
        badRequest: ((Components.Responses.Problem) -> Self)?,
        conflict: ((Components.Responses.Problem) -> Self)?
    ) -> Self {
        let problem = APIModel.problem(error)
        switch error.httpStatus {
        case 400: return badRequest?(problem) ?? .badGateway(problem)
        case 404: return .notFound(problem)
        case 409: return conflict?(problem) ?? .badGateway(problem)
        case 504: return .gatewayTimeout(problem)
        default: return .badGateway(problem)
        }
    }
}

extension BadRequestOutput {
    static func answering(_ error: any Error) -> Self {
        answer(CastServiceError(error), badRequest: Self.badRequest, conflict: nil)
    }
}

extension ConflictOutput {
    static func answering(_ error: any Error) -> Self {
        answer(CastServiceError(error), badRequest: Self.badRequest, conflict: Self.conflict)
    }
}

extension Operations.GetDevice.Output: ProblemOutput {}
extension Operations.StopApp.Output: ProblemOutput {}
extension Operations.SetVolume.Output: BadRequestOutput {}
extension Operations.LoadMedia.Output: BadRequestOutput {}
extension Operations.ControlMedia.Output: ConflictOutput {}
