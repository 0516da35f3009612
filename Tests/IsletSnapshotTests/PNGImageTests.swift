@testable import IsletSnapshot
import Testing

@Suite("PNG codec and pixel diff of islet snapshot")
struct PNGImageTests {
    /// A 3×2 image whose pixels all differ, so a wrong filter or stride shows.
    static let sample = PNGImage(width: 3, height: 2, pixels: (0..<24).map { UInt8($0 * 10) })

    @Test("an image survives encoding and decoding; crops keep their pixels")
    func roundTrip() throws {
        let decoded = try PNGImage(png: Self.sample.png)
        #expect(decoded == Self.sample)
        let crop = Self.sample.cropped(x: 1, y: 1, width: 5, height: 5)
        #expect(crop.width == 2 && crop.height == 1)
        #expect(crop.pixels == Array(Self.sample.pixels[16..<24]))
    }

    @Test("the five row filters of an RGB file decode (Sub, Up, Average, Paeth, None)")
    func filters() throws {
        // Each row filtered with another filter by hand: 1×… RGB rows of width 2.
        let rows: [[UInt8]] = [[10, 20, 30, 40, 50, 60], [11, 21, 31, 41, 51, 61], [5, 5, 5, 200, 100, 0],
                               [9, 8, 7, 6, 5, 4], [1, 2, 3, 4, 5, 6]]
        var filtered: [UInt8] = []
        for (index, row) in rows.enumerated() {
            let filter = [0, 1, 2, 3, 4][index]
            let above = index > 0 ? rows[index - 1] : [UInt8](repeating: 0, count: 6)
            filtered.append(UInt8(filter))
            for i in 0..<6 {
                let a = i >= 3 ? Int(row[i - 3]) : 0, b = Int(above[i]), c = i >= 3 ? Int(above[i - 3]) : 0
                let p = a + b - c
                let (pa, pb, pc) = (abs(p - a), abs(p - b), abs(p - c))
                let paeth = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                let predicted = [0, a, b, (a + b) / 2, paeth][filter]
                filtered.append(UInt8((Int(row[i]) - predicted) & 0xFF))
            }
        }
        let image = try PNGImage(png: PNGFixture.rgb(width: 2, height: 5, filtered: filtered))
        for (index, row) in rows.enumerated() {
            let rgba = Array(image.pixels[(index * 8)..<(index * 8 + 8)])
            #expect(rgba == [row[0], row[1], row[2], 255, row[3], row[4], row[5], 255], "row \(index)")
        }
    }

    @Test("a changed pixel is counted and drawn red; equal images differ nowhere")
    func diff() {
        var changed = Self.sample
        changed.pixels[4] = 255
        let diff = ImageDiff(baseline: Self.sample, actual: changed)
        #expect(diff.differing == 1 && diff.total == 6)
        #expect(diff.image.map { Array($0.pixels[4..<8]) } == [255, 0, 0, 255])
        #expect(ImageDiff(baseline: Self.sample, actual: Self.sample).differing == 0)
        let smaller = Self.sample.cropped(x: 0, y: 0, width: 2, height: 2)
        #expect(ImageDiff(baseline: Self.sample, actual: smaller).ratio == 1)
    }

    @Test("what is not a PNG is refused")
    func refusals() {
        #expect(throws: PNGError.self) { try PNGImage(png: Array("not a png".utf8)) }
    }
}

@Suite("Reading the dashboard's snapshot box")
struct SnapshotRectTests {
    @Test("only the <html> element's data-snapshot-rect counts; one in the page's content does not")
    func htmlOnly() {
        let dom = #"<html lang="en" data-snapshot-rect="10 20 300 400"><body><i data-snapshot-rect="1 2 3 4"></i></body></html>"#
        #expect(DashboardSnapshot.rect(in: dom) == [10, 20, 300, 400])
        let spoofed = #"<html lang="en"><body><i data-snapshot-rect="9223372036854775807 0 9223372036854775807 1"></i></body></html>"#
        #expect(DashboardSnapshot.rect(in: spoofed) == nil)
    }
}
