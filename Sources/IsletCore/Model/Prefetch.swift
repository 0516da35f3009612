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

/// Where `array` keeps its elements, for ``prefetch(_:)`` only: the address is not dereferenced,
/// and it is taken out of the closure so that no opaque call happens while the array is
/// borrowed (which would make the compiler retain it, a write to the very line to prefetch).
@inline(__always)
func elementsAddress<Element>(_ array: [Element]) -> UnsafeRawPointer {
    array.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) } ?? UnsafeRawPointer(bitPattern: 1)!
}
