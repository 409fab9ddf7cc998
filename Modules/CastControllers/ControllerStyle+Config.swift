import CastStyleConfig

extension ControllerStyle {
    /// The controllers' glyphs and escape sequences from a resolved XML style, for `view` (the mini or expanded
    /// controller, the cast dialog, …) on a terminal with `mode` colors (`.none` gives plain text).
    public init(style: ResolvedStyle, view: StyleView, mode: TerminalColorMode) {
        let attributes = style.attributes(for: view)
        let styler = TerminalStyler(mode: mode)
        var glyphs = ControllerStyle.plain.glyphs
        glyphs.merge(attributes.glyphsByName) { _, styled in styled }
        self.init(
            glyphs: glyphs,
            heading: styler.escape(foreground: attributes.headingTextColor, font: attributes.headingTextFont),
            body: styler.escape(foreground: attributes.bodyTextColor, font: attributes.bodyTextFont),
            caption: styler.escape(foreground: attributes.captionTextColor, font: attributes.captionTextFont),
            button: styler.escape(foreground: attributes.buttonTextColor, font: attributes.buttonTextFont),
            progressFilled: styler.escape(background: attributes.progressFilledColor),
            progressUnfilled: styler.escape(background: attributes.progressUnfilledColor),
            progressAd: styler.escape(background: attributes.progressAdMarkerColor),
            reset: mode == .none ? "" : styler.reset
        )
    }
}
