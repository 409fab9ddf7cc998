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
        default:
            if let declared = declaredProblems[error.httpStatus] { return declared(problem) }
            // The document's `status` is the response's (RFC 9457): 502 here too; `code` still names the failure.
            var undeclared = error
            undeclared.httpStatus = 502
            return .badGateway(APIModel.problem(undeclared))
        }
    }
}

/// An operation output whose success is the device's state.
protocol DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self
}

extension Operations.GetDevice.Output: ProblemOutput {}
extension Operations.GetQueue.Output: ProblemOutput {
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] { [409: conflict] }
}
extension Operations.SendMessage.Output: ProblemOutput {
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] {
        [400: badRequest, 403: forbidden, 409: conflict]
    }
}
extension Operations.SetVolume.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] { [400: badRequest, 409: conflict] }
}
extension Operations.LaunchApp.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] {
        [400: badRequest, 403: forbidden, 409: conflict]
    }
}
extension Operations.StopApp.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] { [409: conflict] }
}
extension Operations.JoinSession.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] { [403: forbidden, 409: conflict] }
}
extension Operations.LeaveSession.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
}
extension Operations.LoadMedia.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] {
        [400: badRequest, 403: forbidden, 422: unprocessableContent, 501: notImplemented]
    }
}
extension Operations.ControlMedia.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] { [400: badRequest, 409: conflict] }
}
extension Operations.SetTracks.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] {
        [400: badRequest, 403: forbidden, 409: conflict]
    }
}
extension Operations.LoadQueue.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] {
        [400: badRequest, 403: forbidden, 409: conflict, 422: unprocessableContent, 501: notImplemented]
    }
}
extension Operations.InsertQueueItems.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] {
        [400: badRequest, 403: forbidden, 409: conflict, 422: unprocessableContent, 501: notImplemented]
    }
}
extension Operations.RemoveQueueItem.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] {
        [400: badRequest, 403: forbidden, 409: conflict]
    }
}
extension Operations.PlayQueueItem.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] {
        [400: badRequest, 403: forbidden, 409: conflict]
    }
}
extension Operations.MoveQueueItem.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] {
        [400: badRequest, 403: forbidden, 409: conflict]
    }
}
extension Operations.SetRepeatMode.Output: ProblemOutput, DeviceStateOutput {
    static func answering(_ state: Components.Schemas.DeviceState) -> Self { .ok(.init(body: .json(state))) }
    static var declaredProblems: [Int: (Components.Responses.Problem) -> Self] {
        [400: badRequest, 403: forbidden, 409: conflict]
    }
}
