internal import HashTreeCollections

/// A map from ids to entities that also numbers them: each entity gets a slot in a dense,
/// chunked array, so the engine's hot paths (a widget's entry transition, a stack's
/// re-ranking) reach it by number in O(1) and in memory order, instead of walking a hash tree
/// and copying the value out.
///
/// Slots are an in-memory detail: they are given in insertion order (freed ones reused last in,
/// first out), never serialized, and never decide the order of anything in the document.
/// Copying the table (an atomic batch runs on a copy of the engine) copies the id map's root and
/// the chunk list; the first change to a chunk in the copy copies that chunk only.
struct EntityTable<Value: Sendable>: Sendable {
    private var slots: TreeDictionary<String, Int32> = [:]
    private var chunks: [[Value?]] = []
    private var free: [Int32] = []

    /// Entities per chunk: small enough that copying one on a batch's first change is cheap.
    private static var chunkSize: Int { 64 }

    init() {}

    var count: Int { self.slots.count }
    var isEmpty: Bool { self.slots.isEmpty }
    /// The ids, in no particular order.
    var keys: TreeDictionary<String, Int32>.Keys { self.slots.keys }

    /// The slot of `id`.
    /// - Complexity: O(log n).
    func slot(of id: String) -> Int32? { self.slots[id] }

    subscript(id: String) -> Value? {
        get { self.slots[id].flatMap { self[slot: $0] } }
        set {
            if let newValue {
                if let slot = self.slots[id] {
                    let (chunk, index) = Self.position(slot)
                    self.chunks[chunk][index] = newValue
                } else {
                    self.insert(newValue, id: id)
                }
            } else {
                self.removeValue(forKey: id)
            }
        }
    }

    /// The entity in `slot` (a copy), if any.
    subscript(slot slot: Int32) -> Value? {
        let (chunk, index) = Self.position(slot)
        guard chunk < self.chunks.count else { return nil }
        return self.chunks[chunk][index]
    }

    /// Prefetches the entity in `slot` (its own bytes, not what it points to; see
    /// ``prefetch(_:)``), without reading it.
    @inline(__always)
    func prefetch(slot: Int32) {
        let (chunk, index) = Self.position(slot)
        guard chunk < self.chunks.count else { return }
        guard let elements = elementsAddress(self.chunks[chunk]) else { return }
        IsletCore.prefetch(lines: elements + index * MemoryLayout<Value?>.stride, bytes: MemoryLayout<Value?>.size)
    }

    /// Calls `body` on the entity in `slot` in place; `nil` when the slot is empty.
    /// - Complexity: O(1) (plus copying the chunk the first time a copied table changes it).
    @inline(__always)
    mutating func modify<R>(slot: Int32, _ body: (inout Value) -> R) -> R? {
        let (chunk, index) = Self.position(slot)
        guard chunk < self.chunks.count, self.chunks[chunk][index] != nil else { return nil }
        return body(&self.chunks[chunk][index]!)
    }

    /// Calls `body` on the entity of `id` in place; `nil` when there is none.
    @inline(__always)
    mutating func modifyExisting<R>(_ id: String, _ body: (inout Value) -> R) -> R? {
        guard let slot = self.slots[id] else { return nil }
        return self.modify(slot: slot, body)
    }

    /// Swaps the content of `slot` with `value`, uncopied: moves an entity out and back in.
    /// Meanwhile its slot is empty but its id still numbered: `count` and `keys` include it,
    /// `self[id]` and `modify` do not find it.
    /// - Precondition: `slot` was given by this table.
    mutating func exchange(slot: Int32, with value: inout Value?) {
        let (chunk, index) = Self.position(slot)
        precondition(chunk < self.chunks.count, "slot \(slot) was never given")
        swap(&value, &self.chunks[chunk][index])
    }

    @discardableResult
    mutating func removeValue(forKey id: String) -> Value? {
        guard let slot = self.slots.removeValue(forKey: id) else { return nil }
        let (chunk, index) = Self.position(slot)
        let old = self.chunks[chunk][index]
        self.chunks[chunk][index] = nil
        self.free.append(slot)
        return old
    }

    private mutating func insert(_ value: Value, id: String) {
        let slot: Int32
        if let reused = self.free.popLast() {
            slot = reused
        } else {
            slot = Int32(
                self.chunks.count == 0
                    ? 0 : (self.chunks.count - 1) * Self.chunkSize + self.chunks[self.chunks.count - 1].count)
            if self.chunks.isEmpty || self.chunks[self.chunks.count - 1].count == Self.chunkSize {
                self.chunks.append([])
                self.chunks[self.chunks.count - 1].reserveCapacity(Self.chunkSize)
            }
            self.chunks[self.chunks.count - 1].append(nil)
        }
        let (chunk, index) = Self.position(slot)
        self.chunks[chunk][index] = value
        self.slots[id] = slot
    }

    private static func position(_ slot: Int32) -> (chunk: Int, index: Int) {
        (Int(slot) / Self.chunkSize, Int(slot) % Self.chunkSize)
    }
}
