import DequeModule
import IsletCore

/// The recent revisions' patches, for resuming subscriptions (`subscribe` with `since`):
/// a ring bounded by a number of revisions and a number of bytes. Stores each revision's
/// encoded operations only (they are parsed again on the rare resume). Loop-confined.
package struct RevisionHistory: Sendable {
    package struct Entry: Sendable {
        let rev: UInt64
        let encodedOps: [UInt8]
        var cost: Int { self.encodedOps.count + 64 }
    }

    let maxRevisions: Int
    let maxBytes: Int
    private var entries: Deque<Entry> = []
    private(set) var bytes = 0

    package init(maxRevisions: Int, maxBytes: Int) {
        self.maxRevisions = maxRevisions
        self.maxBytes = maxBytes
    }

    var count: Int { self.entries.count }
    /// The oldest revision held, if any.
    var oldest: UInt64? { self.entries.first?.rev }

    /// Adds the latest revision, then trims the oldest ones past either bound.
    package mutating func append(rev: UInt64, encodedOps: [UInt8]) {
        let entry = Entry(rev: rev, encodedOps: encodedOps)
        self.entries.append(entry)
        self.bytes += entry.cost
        while let first = self.entries.first,
            self.entries.count > self.maxRevisions || (self.bytes > self.maxBytes && self.entries.count > 0)
        {
            self.bytes -= first.cost
            self.entries.removeFirst()
        }
    }

    /// Every revision held, oldest first (what a snapshot of the server stores).
    package var allEntries: [Entry] { Array(self.entries) }

    /// Every revision after `rev` up to `latest`, in order; nil unless all of them are held.
    func entries(after rev: UInt64, latest: UInt64) -> [Entry]? {
        if rev == latest { return [] }
        guard rev < latest, let oldest = self.oldest, oldest <= rev + 1 else { return nil }
        let start = Int(rev + 1 - oldest)
        guard start < self.entries.count, self.entries[start].rev == rev + 1 else { return nil }
        return Array(self.entries[start...])
    }
}
