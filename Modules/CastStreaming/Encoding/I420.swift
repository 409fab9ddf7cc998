/// I420 pictures (Y, then U, then V, each plane row after row), as the capture hands them over.
enum I420 {
    /// The byte count of a picture of `resolution`.
    static func size(of resolution: Resolution) -> Int { resolution.width * resolution.height * 3 / 2 }

    /// The size a picture of `resolution` has at half its width and height (even, as encoders need).
    static func halved(_ resolution: Resolution) -> Resolution {
        Resolution(width: max(2, resolution.width / 4 * 2), height: max(2, resolution.height / 4 * 2))
    }

    /// `picture` at half its width and height: each output sample the mean of a 2×2 block.
    static func halve(_ picture: [UInt8], from resolution: Resolution) -> [UInt8] {
        let target = halved(resolution)
        var output = [UInt8](repeating: 0, count: size(of: target))
        picture.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                let planes = [
                    (0, resolution.width, resolution.height, 0, target.width, target.height),
                    (
                        resolution.width * resolution.height, resolution.width / 2, resolution.height / 2,
                        target.width * target.height, target.width / 2, target.height / 2
                    ),
                    (
                        resolution.width * resolution.height * 5 / 4, resolution.width / 2, resolution.height / 2,
                        target.width * target.height * 5 / 4, target.width / 2, target.height / 2
                    ),
                ]
                for (sourceStart, sourceWidth, sourceHeight, targetStart, targetWidth, targetHeight) in planes {
                    for row in 0..<targetHeight {
                        let top = sourceStart + min(2 * row, sourceHeight - 1) * sourceWidth
                        let bottom = sourceStart + min(2 * row + 1, sourceHeight - 1) * sourceWidth
                        for column in 0..<targetWidth {
                            let left = min(2 * column, sourceWidth - 1)
                            let right = min(2 * column + 1, sourceWidth - 1)
                            let sum =
                                Int(source[top + left]) + Int(source[top + right]) + Int(source[bottom + left])
                                + Int(source[bottom + right])
                            destination[targetStart + row * targetWidth + column] = UInt8((sum + 2) / 4)
                        }
                    }
                }
            }
        }
        return output
    }
}
