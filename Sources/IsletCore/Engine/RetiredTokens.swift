internal import HashTreeCollections
internal import HeapModule

/// The retired push tokens (AP-4) in the order they are forgotten past their cap: the oldest
/// dismissal first, then by token. The order is total, so a live engine, its
/// replay and an engine restored from a snapshot (which stores only the tokens) evict the same
/// ones.
struct RetiredTokens: Sendable {
    struct Entry: Sendable, Comparable {
        var dismissedAt: Instant
        var token: String

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.dismissedAt, lhs.token) < (rhs.dismissedAt, rhs.token)
        }
    }

    private var order = Heap<Entry>()

    var count: Int { self.order.count }

    /// Adds a token; returns the ones to forget past `cap`, oldest first (possibly this one).
    /// - Complexity: O(log n) per token added or returned.
    mutating func insert(_ token: String, dismissedAt: Instant, cap: Int) -> [String] {
        self.order.insert(Entry(dismissedAt: dismissedAt, token: token))
        return self.trim(to: cap)
    }

    /// Rebuilds the order from the token table (after an app's tokens went, or a restore);
    /// returns the ones to forget past `cap`.
    /// - Complexity: O(n).
    mutating func rebuild(from tokens: TreeDictionary<String, TokenOwner>, cap: Int) -> [String] {
        self.order = Heap(
            tokens.compactMap { token, owner in
                guard case .retired(_, _, let dismissedAt) = owner else { return nil }
                return Entry(dismissedAt: dismissedAt, token: token)
            })
        return self.trim(to: cap)
    }

    private mutating func trim(to cap: Int) -> [String] {
        var evicted: [String] = []
        while self.order.count > cap, let oldest = self.order.popMin() { evicted.append(oldest.token) }
        return evicted
    }
}

extension Engine {
    /// AP-4: a forgotten dismissed activity's token keeps answering 410 (until its app is
    /// deleted, or it is among the oldest past `EngineLimits.retiredTokens`).
    mutating func retireToken(_ token: String, activity: String, app: String, dismissedAt: Instant) {
        self.tokens[token] = .retired(activity: activity, app: app, dismissedAt: dismissedAt)
        self.forget(self.retiredTokens.insert(token, dismissedAt: dismissedAt, cap: self.bounds.retiredTokens))
    }

    /// Forgets every retired token of a deleted app.
    /// - Complexity: O(n) in the number of tokens.
    mutating func forgetRetiredTokens(of app: String) {
        for (token, owner) in self.tokens {
            if case .retired(_, app: app, _) = owner { self.tokens[token] = nil }
        }
        self.forget(self.retiredTokens.rebuild(from: self.tokens, cap: self.bounds.retiredTokens))
    }

    private mutating func forget(_ evicted: [String]) {
        for token in evicted { self.tokens[token] = nil }
        self.changes.discards.retiredTokens += evicted.count
    }
}
