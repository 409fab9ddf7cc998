/// The API's request bodies as ``DeviceCommand``s, with their checks: one place for the HTTP operations and the
/// MQTT command messages, which carry the same JSON.
extension APIModel {
    static func volume(_ change: Components.Schemas.VolumeChange) throws(CastServiceError) -> DeviceCommand {
        guard change.level != nil || change.muted != nil else {
            throw CastServiceError(.invalidRequest, "give level, muted or both", httpStatus: 400, field: "level")
        }
        return .setVolume(level: change.level, muted: change.muted)
    }

    static func launch(_ request: Components.Schemas.LaunchRequest) -> DeviceCommand {
        .launch(applicationID: request.appId, relaunch: request.relaunch ?? false)
    }

    static func load(_ request: Components.Schemas.LoadRequest) throws(CastServiceError) -> DeviceCommand {
        if let start = request.startTime, !(start >= 0) {
            throw CastServiceError(.invalidRequest, "startTime must be 0 or more", httpStatus: 400, field: "startTime")
        }
        return .load(try source(of: request), autoplay: request.autoplay ?? true, startTime: request.startTime)
    }

    static func tracks(_ change: Components.Schemas.TracksChange) throws(CastServiceError) -> DeviceCommand {
        .setTracks(activeTrackIDs: change.activeTrackIds, style: try change.textStyle.map(textStyle))
    }

    static func queueLoad(_ request: Components.Schemas.QueueLoadRequest) throws(CastServiceError) -> DeviceCommand {
        .loadQueue(
            try sources(request.items),
            startIndex: request.startIndex ?? 0,
            repeatMode: request.repeatMode.map(repeatMode)
        )
    }

    static func queueInsert(_ request: Components.Schemas.QueueInsertRequest) throws(CastServiceError)
        -> DeviceCommand
    {
        .insertIntoQueue(try sources(request.items), before: request.insertBefore, play: request.play ?? false)
    }

    private static func sources(_ items: [Components.Schemas.QueueItemSource]) throws(CastServiceError) -> [MediaSource]
    {
        guard !items.isEmpty else {
            throw CastServiceError(.invalidRequest, "give at least one item", httpStatus: 400, field: "items")
        }
        guard items.count <= 200 else {
            throw CastServiceError(.invalidRequest, "give at most 200 items", httpStatus: 400, field: "items")
        }
        var sources: [MediaSource] = []
        for (index, item) in items.enumerated() { sources.append(try source(of: item, at: index)) }
        return sources
    }
}
