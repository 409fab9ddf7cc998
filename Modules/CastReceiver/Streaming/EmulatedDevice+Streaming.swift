import CastStreaming
import CastTransport

/// The mirroring apps' control messages: OFFER → ANSWER (the reference receiver's choices, a fresh UDP port),
/// a new OFFER renegotiates, GET_CAPABILITIES says what it decodes and that it does no remoting.
extension EmulatedDevice {
    /// The Cast Streaming receiver of the running mirroring app once it answered an OFFER, else the last one
    /// (closed, its statistics final).
    public var streamingEndpoint: StreamingReceiverEndpoint? {
        state.withLockedValue { $0.running.streaming ?? $0.lastStreaming }
    }

    /// Error codes the reference receiver sends (10000 + its error enum).
    private enum StreamingErrorCode {
        static let parameterInvalid = 10092
        static let noStreamSelected = 10107
        static let remotingNotSupported = 10106
        static let socketClosed = 10023
    }

    func handleStreaming(
        _ message: CastMessage,
        from requester: Requester,
        connection: CastConnection,
        state: inout State
    )
        -> [Outgoing]
    {
        guard let json = try? message.json(), let type = json["type"]?.stringValue?.uppercased() else { return [] }
        // Without a sequence number no reply can be matched: the reference receiver drops such messages.
        guard let sequenceNumber = json["seqNum"]?.intValue, sequenceNumber >= 0 else { return [] }
        let reply: @Sendable (JSONValue) -> Outgoing = { body in
            Outgoing(
                connection: connection,
                message: CastMessage(
                    sourceID: message.destinationID,
                    destinationID: message.sourceID,
                    namespace: message.namespace,
                    json: body
                )
            )
        }
        switch type {
        case "OFFER":
            let offer: StreamingOffer
            do {
                offer = try StreamingOffer(json: json["offer"] ?? .null)
            } catch {
                let description = (error as? CastStreamingError)?.message ?? "\(error)"
                return [
                    reply(
                        StreamingAnswer.errorMessage(
                            sequenceNumber: sequenceNumber,
                            code: StreamingErrorCode.parameterInvalid,
                            description: description
                        )
                    )
                ]
            }
            answer(offer, sequenceNumber: sequenceNumber, sessionID: state.running.sessionID, host: state.host) {
                [weak self] body in self?.deliver([reply(body)])
            }
            return []
        case "GET_CAPABILITIES":
            return [
                reply(
                    [
                        "type": "CAPABILITIES_RESPONSE", "seqNum": .number(Double(sequenceNumber)), "result": "ok",
                        "capabilities": [
                            "mediaCaps": .array(
                                (configuration.streaming.audioCodecs + configuration.streaming.videoCodecs + [
                                    "audio", "video",
                                ])
                                .map { .string($0) }
                            )
                        ],
                    ]
                )
            ]
        default:
            return []
        }
    }

    /// Binds the new receiver (closing the one of an earlier OFFER) and answers, unless the app changed meanwhile.
    private func answer(
        _ offer: StreamingOffer,
        sequenceNumber: Int,
        sessionID: String,
        host: String,
        send: @escaping @Sendable (JSONValue) -> Void
    ) {
        let options = configuration.streaming
        let logger = self.logger
        Task {
            let previous = state.withLockedValue { state -> StreamingReceiverEndpoint? in
                defer { state.running.streaming = nil }
                return state.running.sessionID == sessionID ? state.running.streaming : nil
            }
            await previous?.close()
            do {
                let endpoint = try await StreamingReceiverEndpoint.answering(offer, host: host, options: options)
                let current = state.withLockedValue { state -> Bool in
                    guard state.running.sessionID == sessionID else { return false }
                    state.running.streaming = endpoint
                    state.lastStreaming = endpoint
                    return true
                }
                guard current else {
                    await endpoint.close()
                    return
                }
                logger.debug(
                    "streaming answered",
                    metadata: ["cast.udp_port": "\(endpoint.answer.udpPort)", "cast.streams": "\(endpoint.kinds)"]
                )
                send(endpoint.answer.message(sequenceNumber: sequenceNumber))
            } catch let error as CastStreamingError {
                let code =
                    error.code == .noStreamSelected
                    ? StreamingErrorCode.noStreamSelected : StreamingErrorCode.socketClosed
                send(
                    StreamingAnswer.errorMessage(sequenceNumber: sequenceNumber, code: code, description: error.message)
                )
            } catch {
                send(
                    StreamingAnswer.errorMessage(
                        sequenceNumber: sequenceNumber,
                        code: StreamingErrorCode.socketClosed,
                        description: "\(error)"
                    )
                )
            }
        }
    }
}
