// swift-cast — Apache-2.0

/// One node of the style hierarchy, mirroring GCKUIStyle's `castViews` tree.
///
/// ```
/// castViews
/// ├── deviceControllers
/// │   ├── castDialog
/// │   ├── connectionController
/// │   └── noDevicesScreen
/// ├── mediaControllers
/// │   ├── miniController
/// │   ├── expandedController
/// │   └── queueView
/// └── introductoryOverlay
/// ```
///
/// An attribute set on a view applies to it and every view below it, unless a view closer to the one being drawn
/// sets it too.
public struct StyleView: Sendable, Hashable, CustomStringConvertible {
    /// The element name in style documents, e.g. `miniController`.
    public let name: String
    private let parentName: String?

    private init(_ name: String, parent: String?) {
        self.name = name
        self.parentName = parent
    }

    /// The root: attributes here apply everywhere.
    public static let castViews = StyleView("castViews", parent: nil)
    /// The views for choosing and connecting to a device.
    public static let deviceControllers = StyleView("deviceControllers", parent: "castViews")
    /// The device list (GCK's device chooser, the Cast dialog).
    public static let castDialog = StyleView("castDialog", parent: "deviceControllers")
    /// The connected device's controller (volume, disconnect).
    public static let connectionController = StyleView("connectionController", parent: "deviceControllers")
    /// What the Cast dialog shows when no device is found.
    public static let noDevicesScreen = StyleView("noDevicesScreen", parent: "deviceControllers")
    /// The views that control media.
    public static let mediaControllers = StyleView("mediaControllers", parent: "castViews")
    /// The one-line controller shown while casting.
    public static let miniController = StyleView("miniController", parent: "mediaControllers")
    /// The full-screen controller.
    public static let expandedController = StyleView("expandedController", parent: "mediaControllers")
    /// The queue list.
    public static let queueView = StyleView("queueView", parent: "mediaControllers")
    /// The first-run hint that points at the Cast button.
    public static let introductoryOverlay = StyleView("introductoryOverlay", parent: "castViews")

    /// Every view, parents before their children, in the order above.
    public static let allViews: [StyleView] = [
        .castViews, .deviceControllers, .castDialog, .connectionController, .noDevicesScreen, .mediaControllers,
        .miniController, .expandedController, .queueView, .introductoryOverlay,
    ]

    /// The view whose element name is `name`, if there is one.
    public static func named(_ name: String) -> StyleView? {
        allViews.first { $0.name == name }
    }

    /// The enclosing view; `nil` for ``castViews``.
    public var parent: StyleView? {
        parentName.flatMap(StyleView.named)
    }

    /// The enclosing views, nearest first, ending with ``castViews``.
    public var ancestors: [StyleView] {
        var result: [StyleView] = []
        var current = parent
        while let view = current {
            result.append(view)
            current = view.parent
        }
        return result
    }

    /// The views directly below this one.
    public var children: [StyleView] {
        StyleView.allViews.filter { $0.parentName == name }
    }

    /// The dotted path from the root, e.g. `castViews.mediaControllers.miniController`.
    public var path: String {
        (ancestors.reversed() + [self]).map(\.name).joined(separator: ".")
    }

    /// The element name.
    public var description: String { name }
}

/// A named button glyph, e.g. ``play``; style documents set them in `<glyphs play="▶"/>`.
public struct ButtonGlyph: Sendable, Hashable, CustomStringConvertible {
    /// The attribute name in `<glyphs>`, e.g. `skipNext`.
    public let name: String

    private init(_ name: String) {
        self.name = name
    }

    /// Start playback.
    public static let play = ButtonGlyph("play")
    /// Pause playback.
    public static let pause = ButtonGlyph("pause")
    /// Stop playback.
    public static let stop = ButtonGlyph("stop")
    /// Next queue item.
    public static let skipNext = ButtonGlyph("skipNext")
    /// Previous queue item.
    public static let skipPrevious = ButtonGlyph("skipPrevious")
    /// Seek back.
    public static let rewind = ButtonGlyph("rewind")
    /// Seek forward.
    public static let forward = ButtonGlyph("forward")
    /// Shown while muted.
    public static let muteOn = ButtonGlyph("muteOn")
    /// Shown while not muted.
    public static let muteOff = ButtonGlyph("muteOff")
    /// Subtitles (closed captions) and audio tracks.
    public static let subtitles = ButtonGlyph("subtitles")
    /// The queue.
    public static let queue = ButtonGlyph("queue")
    /// The live-stream badge.
    public static let live = ButtonGlyph("live")
    /// The ad badge.
    public static let ad = ButtonGlyph("ad")
    /// The Cast button.
    public static let cast = ButtonGlyph("cast")
    /// Repeat the whole queue.
    public static let repeatAll = ButtonGlyph("repeatAll")
    /// Repeat the current item.
    public static let repeatOne = ButtonGlyph("repeatOne")
    /// No repeat.
    public static let repeatOff = ButtonGlyph("repeatOff")
    /// Shuffle the queue.
    public static let shuffle = ButtonGlyph("shuffle")
    /// Raise the volume.
    public static let volumeUp = ButtonGlyph("volumeUp")
    /// Lower the volume.
    public static let volumeDown = ButtonGlyph("volumeDown")

    /// Every glyph, in the order above.
    public static let allGlyphs: [ButtonGlyph] = [
        .play, .pause, .stop, .skipNext, .skipPrevious, .rewind, .forward, .muteOn, .muteOff, .subtitles, .queue,
        .live, .ad, .cast, .repeatAll, .repeatOne, .repeatOff, .shuffle, .volumeUp, .volumeDown,
    ]

    /// The glyph whose attribute name is `name`, if there is one.
    public static func named(_ name: String) -> ButtonGlyph? {
        allGlyphs.first { $0.name == name }
    }

    /// The attribute name.
    public var description: String { name }
}
