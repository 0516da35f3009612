import Foundation

/// Latencies in nanoseconds, sorted once, read out as the benchmarks' table cells.
struct Latencies {
    let sorted: [UInt64]

    init(nanoseconds: [UInt64]) { self.sorted = nanoseconds.sorted() }

    /// The nearest-rank percentile `p` (0…1) in milliseconds, two decimals; `-` when empty.
    func milliseconds(_ p: Double) -> String {
        guard !self.sorted.isEmpty else { return "-" }
        let index = min(self.sorted.count - 1, Int((Double(self.sorted.count) * p).rounded(.up)) - 1)
        return String(format: "%.2f", Double(self.sorted[max(0, index)]) / 1e6)
    }

    /// The largest, in milliseconds; `-` when empty.
    var maximum: String { self.sorted.last.map { String(format: "%.2f", Double($0) / 1e6) } ?? "-" }
}
