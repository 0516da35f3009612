/// A pixel comparison of two images for visual regression tests.
public struct ImageDiff: Sendable {
    /// Pixels whose largest channel difference exceeds the per-channel tolerance.
    public let differing: Int
    public let total: Int
    /// The actual image greyed out, with every differing pixel in red; `nil` when the sizes differ.
    public let image: PNGImage?

    /// The share of differing pixels, 0…1 (1 when the sizes differ).
    public var ratio: Double { self.total == 0 ? 0 : Double(self.differing) / Double(self.total) }

    /// Compares `actual` with `baseline`. `tolerance` (0…255) absorbs anti-aliasing noise.
    public init(baseline: PNGImage, actual: PNGImage, tolerance: Int = 8) {
        guard baseline.width == actual.width, baseline.height == actual.height else {
            self.differing = max(baseline.width * baseline.height, actual.width * actual.height)
            self.total = self.differing
            self.image = nil
            return
        }
        var marked = actual.pixels
        var differing = 0
        for pixel in 0..<(actual.width * actual.height) {
            let i = pixel * 4
            let delta = (0..<4).map { abs(Int(baseline.pixels[i + $0]) - Int(actual.pixels[i + $0])) }.max() ?? 0
            if delta > tolerance {
                differing += 1
                marked[i] = 255; marked[i + 1] = 0; marked[i + 2] = 0; marked[i + 3] = 255
            } else {
                let sum = Int(actual.pixels[i]) + Int(actual.pixels[i + 1]) + Int(actual.pixels[i + 2])
                let grey = UInt8(sum / 6 + 128)  // a light grey that keeps the picture readable
                marked[i] = grey; marked[i + 1] = grey; marked[i + 2] = grey; marked[i + 3] = 255
            }
        }
        self.differing = differing
        self.total = actual.width * actual.height
        self.image = PNGImage(width: actual.width, height: actual.height, pixels: marked)
    }
}
