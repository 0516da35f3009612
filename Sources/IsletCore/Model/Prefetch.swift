internal import CPrefetch

/// Asks the CPU to bring the cache line at `address` in ahead of use. A long clock step visits
/// 100,000 widgets' timelines and 10,000 stacks' members hour after hour, each a separate heap
/// block in a world far larger than the cache, so every visit otherwise starts with a miss; the
/// next few visits are known (the front of the scheduler, the list of stacks to re-rank), and
/// their misses overlap with the work in hand. A hint only: it never faults and changes nothing.
@inline(__always)
func prefetch(_ address: UnsafeRawPointer) {
    islet_prefetch(address)
}

/// Where `array` keeps its elements, for ``prefetch(_:)`` only (never dereferenced). The address
/// is taken out of the closure so that no C call happens while the array is borrowed: reached
/// through a pointer, the array is then retained first, a write to the very line to prefetch.
@inline(__always)
func elementsAddress<Element>(_ array: [Element]) -> UnsafeRawPointer? {
    array.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
}

/// Prefetches the lines of `array`'s first `count` elements and of its count, without reading
/// it (a count read would be the miss itself).
@inline(__always)
func prefetch<Element>(_ array: [Element], upTo count: Int) {
    guard let first = elementsAddress(array) else { return }
    prefetch(lines: first - arrayCountOffset, bytes: arrayCountOffset + MemoryLayout<Element>.stride * count)
}

/// How far before its first element an array's storage holds its count (then its capacity).
let arrayCountOffset = 16

/// Prefetches every cache line of `bytes` bytes from `start`.
@inline(__always)
func prefetch(lines start: UnsafeRawPointer, bytes: Int) {
    guard bytes > 0 else { return }
    islet_prefetch_lines(start, bytes)
}
