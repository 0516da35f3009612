internal import HashTreeCollections

/// A sorted multiset stored as a list of small sorted chunks.
///
/// The engine copies its whole state for every atomic batch, so an ordered index of 10,000
/// activities must not be one big array (the copy would cost O(n) per batch). Chunks of up to
/// 128 elements make a copy-then-mutate cost O(n / 64) pointer copies plus one chunk.
struct SortedChunks<Element: Comparable & Sendable>: Sendable {
    private var chunks: [[Element]] = []
    private(set) var count = 0
    private static var maxChunk: Int { 128 }

    init() {}

    var isEmpty: Bool { self.count == 0 }
    var first: Element? { self.chunks.first?.first }

    /// Inserts `element` after any equal ones.
    /// - Complexity: O(log n + chunk size + n / chunk size).
    mutating func insert(_ element: Element) {
        self.count += 1
        guard !self.chunks.isEmpty else {
            self.chunks = [[element]]
            return
        }
        let chunkIndex = self.chunkIndex(for: element)
        var chunk = self.chunks[chunkIndex]
        self.chunks[chunkIndex] = []
        chunk.insert(element, at: upperBound(chunk, element))
        if chunk.count > Self.maxChunk {
            let half = chunk.count / 2
            self.chunks[chunkIndex] = Array(chunk[..<half])
            self.chunks.insert(Array(chunk[half...]), at: chunkIndex + 1)
        } else {
            self.chunks[chunkIndex] = chunk
        }
    }

    /// Removes one element equal to `element`; returns whether there was one.
    /// - Complexity: O(log n + chunk size + n / chunk size).
    @discardableResult
    mutating func remove(_ element: Element) -> Bool {
        guard !self.chunks.isEmpty else { return false }
        var chunkIndex = self.firstChunk(notBelow: element)
        while chunkIndex < self.chunks.count {
            let chunk = self.chunks[chunkIndex]
            let index = lowerBound(chunk, element)
            if index < chunk.count {
                guard chunk[index] == element else { return false }
                self.chunks[chunkIndex].remove(at: index)
                if self.chunks[chunkIndex].isEmpty { self.chunks.remove(at: chunkIndex) }
                self.count -= 1
                return true
            }
            chunkIndex += 1
        }
        return false
    }

    /// The position of an element equal to `element` in the whole order, or `nil`.
    /// - Complexity: O(log n + n / chunk size).
    func position(of element: Element) -> Int? {
        let chunkIndex = self.firstChunk(notBelow: element)
        guard chunkIndex < self.chunks.count else { return nil }
        let index = lowerBound(self.chunks[chunkIndex], element)
        guard index < self.chunks[chunkIndex].count, self.chunks[chunkIndex][index] == element else { return nil }
        var before = 0
        for chunk in self.chunks[..<chunkIndex] { before += chunk.count }
        return before + index
    }

    /// Calls `body` on elements in order until it returns `false`.
    func forEach(while body: (Element) -> Bool) {
        for chunk in self.chunks {
            for element in chunk where !body(element) { return }
        }
    }

    /// Every element, in order.
    var elements: [Element] { self.chunks.flatMap { $0 } }

    /// The chunk where `element` belongs: the first whose last element is greater than it.
    private func chunkIndex(for element: Element) -> Int {
        var low = 0
        var high = self.chunks.count - 1
        while low < high {
            let mid = (low + high) / 2
            if self.chunks[mid].last! <= element { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first chunk whose last element is not below `element`.
    private func firstChunk(notBelow element: Element) -> Int {
        var low = 0
        var high = self.chunks.count
        while low < high {
            let mid = (low + high) / 2
            if self.chunks[mid].last! < element { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

private func lowerBound<E: Comparable>(_ array: [E], _ element: E) -> Int {
    var low = 0
    var high = array.count
    while low < high {
        let mid = (low + high) / 2
        if array[mid] < element { low = mid + 1 } else { high = mid }
    }
    return low
}

private func upperBound<E: Comparable>(_ array: [E], _ element: E) -> Int {
    var low = 0
    var high = array.count
    while low < high {
        let mid = (low + high) / 2
        if array[mid] <= element { low = mid + 1 } else { high = mid }
    }
    return low
}
