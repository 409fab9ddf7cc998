/// Where an image will be shown; pickers use it to choose among a media item's images
/// (GCKMediaMetadataImageType).
public enum ImageUsage: Sendable, Hashable {
    case castDialog, miniController, expandedControllerBackground, queueItem, lockScreen
}

/// What an image is wanted for: the usage and, if known, the size it will be drawn at.
public struct ImageHints: Sendable, Hashable {
    /// Where the image will be shown.
    public var usage: ImageUsage
    /// Width and height in pixels, if known.
    public var preferredWidth: Int?
    /// Height in pixels, if known.
    public var preferredHeight: Int?

    /// Hints for `usage`, at a size when it is known.
    public init(usage: ImageUsage, preferredWidth: Int? = nil, preferredHeight: Int? = nil) {
        self.usage = usage
        self.preferredWidth = preferredWidth
        self.preferredHeight = preferredHeight
    }
}

/// Chooses which of a media item's images to show (GCKUIImagePicker).
public protocol ImagePicker: Sendable {
    /// The image to show for `hints`, or `nil` for none.
    func image(from metadata: MediaMetadata, for hints: ImageHints) -> WebImage?
}

/// The SDK's default: the first image, whatever the usage.
public struct FirstImagePicker: ImagePicker {
    /// The default picker.
    public init() {}
    /// The first image, whatever `hints` say.
    public func image(from metadata: MediaMetadata, for hints: ImageHints) -> WebImage? { metadata.images.first }
}

/// Picks the image closest in area to the preferred size, preferring images at least that large; without a
/// preferred size, the largest image for backgrounds and the smallest otherwise.
public struct SizeMatchingImagePicker: ImagePicker {
    /// A picker by size.
    public init() {}

    /// The image closest in size to `hints`' preferred size (see the type's description).
    public func image(from metadata: MediaMetadata, for hints: ImageHints) -> WebImage? {
        let images = metadata.images
        guard images.count > 1 else { return images.first }
        func area(_ image: WebImage) -> Int { (image.width ?? 0) * (image.height ?? 0) }
        guard let width = hints.preferredWidth, let height = hints.preferredHeight else {
            return hints.usage == .expandedControllerBackground
                ? images.max { area($0) < area($1) } : images.min { area($0) < area($1) }
        }
        let wanted = width * height
        let bigEnough = images.filter { area($0) >= wanted }
        if let best = bigEnough.min(by: { area($0) < area($1) }) { return best }
        return images.max { area($0) < area($1) }
    }
}
