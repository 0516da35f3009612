internal import HashTreeCollections

/// A persistent map from ids to large entities (activities, apps), each held in its own box.
///
/// A `TreeDictionary` stores values inline in its nodes, and a batch runs on a copy of the
/// engine: the first change to an entity then copies the whole node it sits in, each of its
/// (up to 32) neighbours retaining its dozen strings, arrays and objects. With boxes, copying a
/// node retains one reference per neighbour, and a change stores a new box, or (``modify``)
/// changes the box in place when no copy shares it.
struct EntityMap<Value: Sendable>: Sendable {
    /// One entity, in a buffer of its own. It is read through the buffer's pointer (so a read
    /// of a few fields loads those, where a read of a class's stored property copies the
    /// entity out and retains its dozen parts), and changed in place only while one map holds
    /// it (copy on write, like the map's own nodes), so a copy of the map never sees another's
    /// change.
    struct Box: @unchecked Sendable {
        private var buffer: ManagedBuffer<Value, UInt8>

        init(_ value: Value) {
            self.buffer = .create(minimumCapacity: 0) { _ in value }
        }

        var value: Value { self.buffer.header }

        func read<R>(_ body: (Value) -> R) -> R {
            self.buffer.withUnsafeMutablePointerToHeader { body($0.pointee) }
        }

        mutating func modify<R>(_ body: (inout Value) -> R) -> R {
            if !isKnownUniquelyReferenced(&self.buffer) { self = Box(self.value) }
            return self.buffer.withUnsafeMutablePointerToHeader { body(&$0.pointee) }
        }
    }

    private var boxes: TreeDictionary<String, Box> = [:]

    init() {}

    /// The ids, in no particular order.
    var keys: TreeDictionary<String, Box>.Keys { self.boxes.keys }
    var count: Int { self.boxes.count }

    /// - Complexity: O(log n).
    subscript(id: String) -> Value? {
        get { self.boxes[id]?.value }
        set { self.boxes[id] = newValue.map(Box.init) }
    }

    /// Calls `body` on the entity of `id` in place, or on a copy of it in a box of its own
    /// when a copy of the map shares its box; `nil` when there is none.
    /// - Complexity: O(log n).
    mutating func modify<R>(_ id: String, _ body: (inout Value) -> R) -> R? {
        self.boxes.updateValue(forKey: id) { box -> R? in
            guard box != nil else { return nil }
            return box!.modify(body)
        }
    }

    /// Calls `body` on the entity of `id` in its box; `nil` when there is none. A body that
    /// reads a few fields loads only those; one that hands the whole entity to a function
    /// still copies it (the compiler cannot borrow it from a pointer across the call).
    /// - Complexity: O(log n).
    func read<R>(_ id: String, _ body: (Value) -> R) -> R? {
        self.boxes[id]?.read(body)
    }

    /// Whether an entity has this id, without copying it out of its box.
    /// - Complexity: O(log n).
    func contains(_ id: String) -> Bool { self.boxes[id] != nil }

    /// Removes an entity and returns it.
    /// - Complexity: O(log n).
    @discardableResult
    mutating func removeValue(forKey id: String) -> Value? {
        self.boxes.removeValue(forKey: id)?.value
    }
}

extension EntityMap: Sequence {
    /// The entities in no particular order.
    struct Iterator: IteratorProtocol {
        var base: TreeDictionary<String, Box>.Iterator

        mutating func next() -> (key: String, value: Value)? {
            self.base.next().map { ($0.key, $0.value.value) }
        }
    }

    func makeIterator() -> Iterator { Iterator(base: self.boxes.makeIterator()) }
}
