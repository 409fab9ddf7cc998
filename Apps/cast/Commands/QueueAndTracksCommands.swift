import ArgumentParser
import CastControllers
import CastMedia
import CastSession
import CastTransport

/// `cast queue …`: the receiver's queue.
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "List and edit the queue.",
        subcommands: [List.self, Add.self, Remove.self, Move.self, Jump.self, Repeat.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the queue.",
            discussion: "Example: cast queue list"
        )
        @OptionGroup var global: GlobalOptions
        func run() async throws {
            if try await ViaService.handle(global, .queueList) { return }
            try await CLIRuntime.withControlledSession(global) { runtime, session in
                let client = try runtime.mediaClient(session)
                try await client.requestStatus().response()
                let ids = try await client.queue.reload()
                var items: [QueueItem] = []
                for index in ids.indices { items.append(try await client.queue.item(at: index)) }
                let current = client.mediaStatus?.currentItemID
                let json: JSONValue = [
                    "currentItemId": current.map { .number(Double($0)) } ?? .null,
                    "items": .array(
                        items.map { item in
                            [
                                "itemId": .number(Double(item.itemID ?? 0)),
                                "title": .string(item.media.metadata?.displayTitle ?? item.media.contentID),
                                "contentId": .string(item.media.contentID),
                            ]
                        }
                    ),
                ]
                runtime.emit(
                    json: json,
                    text: ListingText.queue(
                        items.map { ($0.itemID ?? 0, $0.media.metadata?.displayTitle ?? $0.media.contentID) },
                        current: current
                    )
                )
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add URLs to the queue.",
            discussion: "Example: cast queue add https://example.com/b.mp4 --next"
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Media URLs.") var urls: [String]
        @Flag(help: "Insert after the current item instead of at the end.") var next = false
        func validate() throws {
            for url in urls {
                try MediaTypes.checkFetchable(url, localHint: "'cast play --queue FILE' adds local files")
            }
        }

        func run() async throws {
            let urls = self.urls
            let next = self.next
            let items = urls.map { ViaService.item($0, title: nil, contentType: nil) }
            if try await ViaService.handle(global, .queueAdd(items, next: next)) { return }
            try await MediaControl.run(global) { _, client in
                let items = urls.map { QueueItem(media: MediaTypes.media(for: $0)) }
                var before: Int?
                if next {
                    let ids = try await client.queue.reload()
                    if let current = client.mediaStatus?.currentItemID, let index = ids.firstIndex(of: current),
                        index + 1 < ids.count
                    {
                        before = ids[index + 1]
                    }
                }
                try await client.queueInsert(items, before: before).response()
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove items by id.",
            discussion: "Example: cast queue remove 3 4"
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Item ids.") var ids: [Int]
        func run() async throws {
            let ids = self.ids
            if try await ViaService.handle(global, .queueRemove(ids)) { return }
            try await MediaControl.run(global) { _, client in
                try await MediaControl.requireItems(ids, of: client)
                try await client.queueRemove(ids).response()
            }
        }
    }

    struct Move: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move an item before another (or to the end).",
            discussion: "Example: cast queue move 4 --before 2"
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The item to move.") var id: Int
        @Option(help: "The item to move it before; omit for the end.") var before: Int?
        func run() async throws {
            let (id, before) = (self.id, self.before)
            if try await ViaService.handle(global, .queueMove(id, before: before)) { return }
            try await MediaControl.run(global) { _, client in
                try await MediaControl.requireItems([id] + (before.map { [$0] } ?? []), of: client)
                try await client.queueMove(itemID: id, before: before).response()
            }
        }
    }

    struct Jump: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Play the item with an id.",
            discussion: "Example: cast queue jump 3"
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Item id.") var id: Int
        func run() async throws {
            let id = self.id
            if try await ViaService.handle(global, .queueJump(id)) { return }
            try await MediaControl.run(global) { _, client in
                try await MediaControl.requireItems([id], of: client)
                try await client.queueJump(toItemID: id).response()
            }
        }
    }

    struct Repeat: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the repeat mode: off, all, single, shuffle.",
            discussion: "Example: cast queue repeat all"
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "off, all, single or shuffle.") var mode: PlayCommand.Repeat
        func run() async throws {
            let mode: RepeatMode = [.off: .off, .all: .all, .single: .single, .shuffle: .allAndShuffle][self.mode]!
            if try await ViaService.handle(global, .queueRepeat(mode.rawValue)) { return }
            try await MediaControl.run(global) { _, client in try await client.queueSetRepeatMode(mode).response() }
        }
    }
}

/// `cast tracks …`: subtitles and audio tracks.
struct TracksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tracks",
        abstract: "List, enable and style tracks.",
        subcommands: [List.self, Enable.self, Disable.self, Style.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the media's tracks.",
            discussion: "Example: cast tracks list"
        )
        @OptionGroup var global: GlobalOptions
        func run() async throws {
            if try await ViaService.handle(global, .tracksList) { return }
            try await CLIRuntime.withControlledSession(global) { runtime, session in
                let client = try runtime.mediaClient(session)
                try await client.requestStatus().response()
                let tracks = client.mediaStatus?.media?.tracks ?? []
                let active = client.mediaStatus?.activeTrackIDs ?? []
                runtime.emit(
                    json: [
                        "activeTrackIds": .array(active.map { .number(Double($0)) }),
                        "tracks": .array(tracks.map(\.json)),
                    ],
                    text: ListingText.tracks(
                        tracks.map { ($0.id, $0.kind.rawValue, $0.name ?? "", $0.language ?? "") },
                        active: active
                    )
                )
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make these tracks the active ones.",
            discussion: "Example: cast tracks enable 1"
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Track ids.") var ids: [Int]
        func run() async throws {
            // Each id once, in the order given.
            var seen = Set<Int>()
            let ids = self.ids.filter { seen.insert($0).inserted }
            if try await ViaService.handle(global, .tracks(ids: ids, style: nil)) { return }
            try await MediaControl.run(global) { _, client in try await client.setActiveTrackIDs(ids).response() }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn every track off.",
            discussion: "Example: cast tracks disable"
        )
        @OptionGroup var global: GlobalOptions
        func run() async throws {
            if try await ViaService.handle(global, .tracks(ids: [], style: nil)) { return }
            try await MediaControl.run(global) { _, client in try await client.setActiveTrackIDs([]).response() }
        }
    }

    struct Style: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Style text tracks.",
            discussion: "Example: cast tracks style --font-scale 1.5 --foreground '#FFFF00FF'"
        )
        @OptionGroup var global: GlobalOptions
        @Option(help: "Font scale (1 is the default size).") var fontScale: Double?
        @Option(help: "Text color #RRGGBBAA.") var foreground: String?
        @Option(help: "Background color #RRGGBBAA.") var background: String?
        @Option(help: "Edge type: NONE, OUTLINE, DROP_SHADOW, RAISED, DEPRESSED.") var edgeType: String?
        @Option(help: "Font family.") var fontFamily: String?

        func validate() throws {
            for color in [foreground, background].compactMap({ $0 }) {
                guard color.hasPrefix("#"), [7, 9].contains(color.count), color.dropFirst().allSatisfy(\.isHexDigit)
                else {
                    throw ValidationError("'\(color)' is not a #RRGGBB or #RRGGBBAA color")
                }
            }
            if let fontScale, !(0.1...5).contains(fontScale) {
                throw ValidationError("--font-scale must be within 0.1…5")
            }
            if let edgeType, !Self.edgeTypes.contains(edgeType.uppercased()) {
                throw ValidationError("--edge-type must be one of \(Self.edgeTypes.joined(separator: ", "))")
            }
            guard
                [fontScale == nil, foreground == nil, background == nil, edgeType == nil, fontFamily == nil]
                    .contains(false)
            else {
                throw ValidationError(
                    "give at least one of --font-scale, --foreground, --background, --edge-type, --font-family"
                )
            }
        }

        /// The edge types of the media namespace's TextTrackStyle (cast-protocol.md §7.1).
        static let edgeTypes = ["NONE", "OUTLINE", "DROP_SHADOW", "RAISED", "DEPRESSED"]

        func run() async throws {
            var style = TextTrackStyle()
            style.fontScale = fontScale
            style.foregroundColor = foreground.map { $0.count == 7 ? $0 + "FF" : $0 }
            style.backgroundColor = background.map { $0.count == 7 ? $0 + "FF" : $0 }
            style.edgeType = edgeType?.uppercased()
            style.fontFamily = fontFamily
            let chosen = style
            // The flags set only what the API's TextStyle has, so the style's own JSON is the API's.
            if try await ViaService.handle(global, .tracks(ids: nil, style: chosen.json)) { return }
            try await MediaControl.run(global) { _, client in try await client.setTextTrackStyle(chosen).response() }
        }
    }
}

/// The lines of `cast queue list` and `cast tracks list`, the same whether the command went to the device or
/// through castd.
enum ListingText {
    /// One line per item, the current one marked.
    static func queue(_ items: [(id: Int, title: String)], current: Int?) -> String {
        guard !items.isEmpty else { return "the queue is empty" }
        return items.map { "\($0.id == current ? "▶" : " ") \($0.id)  \($0.title)" }.joined(separator: "\n")
    }

    /// One line per track, the active ones marked.
    static func tracks(_ tracks: [(id: Int, kind: String, name: String, language: String)], active: [Int]) -> String {
        guard !tracks.isEmpty else { return "no tracks" }
        return tracks.map { track in
            "\(active.contains(track.id) ? "●" : "○") \(track.id)  \(track.kind.lowercased())  \(track.name)  \(track.language)"
        }.joined(separator: "\n")
    }
}
