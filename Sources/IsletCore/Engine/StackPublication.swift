/// Publishing a revision's touched stacks: their stored entries and the operations that turn
/// the document's old entries into them.
///
/// It reads copies of the stack table and the document and returns what to write back, so it
/// can run beside the widgets' publication: a 24 h jump publishes 10,000 stacks and 100,000
/// widgets, and on two cores the two take the time of the longer one.
struct StackPublication: Sendable {
    let stacks: EntityTable<Stack>
    let document: StateDocument
    let relevance: RelevanceSettings
    /// The touched stacks, each once, in canonical order.
    let ids: [String]

    /// What the engine writes back once the operations are written.
    struct WriteBack: Sendable {
        /// Each stack's new stored entry (`nil`: the stack is gone).
        var entries: [(id: String, entry: JSONValue?)] = []
        /// What the document now shows of each remaining stack.
        var published: [(slot: Int32, published: PublishedStack)] = []
    }

    /// A guess of the operations' encoded size (a ranking takes ~3 KiB, a rotation ~400 B), so
    /// that their buffer is not copied as it grows.
    var encodedSizeGuess: Int {
        self.ids.reduce(512) { size, id in
            guard let stack = self.stacks[id] else { return size + 64 }
            let rotations = min(stack.rotationCount - (stack.published?.rotationCount ?? 0), stack.rotations.count)
            return size + 3_584 + 400 * rotations
        }
    }

    /// Appends every touched stack's operations. A stack's stored entry holds neither its
    /// ranking nor its rotation log (``VirtualMember``): the ranking's operations come from
    /// comparing its rows with the ones the document showed (the operations the diff of their
    /// JSON would give), and the log only gains records at the end and loses the oldest past
    /// `rotationsKept`, so its operations follow from counts. A stack the document did not show
    /// as this stack (new, or deleted and created again in the revision) is written whole.
    func run(into patch: inout EncodedPatch) -> WriteBack {
        var writeBack = WriteBack()
        writeBack.entries.reserveCapacity(self.ids.count)
        writeBack.published.reserveCapacity(self.ids.count)
        for id in self.ids {
            let path = JSONPointer(tokens: [DocumentSection.stacks.rawValue, id])
            let old = self.document[.stacks, id]
            guard let slot = self.stacks.slot(of: id), let stack = self.stacks[slot: slot] else {
                if old != nil { patch.append(.remove(path)) }
                writeBack.entries.append((id, nil))
                continue
            }
            let ranking = stack.shownRanking
            let new = stack.storedJSON(relevance: self.relevance)
            writeBack.entries.append((id, new))
            writeBack.published.append((slot, PublishedStack(stack, ranking: ranking)))
            guard let old, let published = stack.published else {
                var whole = new
                try? whole.set(.array(ranking.map(\.json)), at: Engine.rankingPointer)
                try? whole.set(stack.rotationLog, at: Engine.rotationsPointer)
                patch.append(old == nil ? .add(path, whole) : .replace(path, whole))
                continue
            }
            JSONPatch.diff(old, new, path, &patch)
            JSONPatch.diff(
                published.ranking, ranking, path.appending(Engine.rankingPointer), &patch, json: \.json,
                element: { ShownRankingRow.diff($0, $1, $2, &$3) })
            let logPath = path.appending(Engine.rotationsPointer)
            let length = stack.rotations.count
            let kept = min(stack.rotationCount - published.rotationCount, length)
            for _ in 0..<(published.rotationLength + kept - length) { patch.append(.remove(logPath.appending(0))) }
            for index in (length - kept)..<length {
                patch.append(.add(logPath.appending(index), stack.rotations[index].json))
            }
        }
        return writeBack
    }
}

extension Stack {
    /// The stack's stored entry: without `ranking` and `rotations`, which the document splices
    /// in when read (``VirtualMember``).
    func storedJSON(relevance settings: RelevanceSettings) -> JSONValue {
        let effective = settings.applying(self.overrides)
        let relevance: JSONObject = [
            "hysteresis": .number(effective.hysteresis), "minDwellSeconds": .number(effective.minDwellSeconds),
            "overrides": self.overrides.json, "weights": effective.weights.json,
        ]
        let object: JSONObject = [
            "device": .string(self.device),
            "family": .string(self.family.rawValue),
            "id": .string(self.id),
            "relevance": .object(relevance),
            "smartRotate": .bool(self.smartRotate),
            "suggestions": .bool(self.suggestions),
            "top": self.top.map(JSONValue.string) ?? .null,
            "topSince": date(self.topSince),
            "widgets": .array(self.members.map { .string($0.widget) }),
        ]
        return .object(object)
    }

    /// SS-5: the last rotations, as the document shows them.
    var rotationLog: JSONValue { .array(self.rotations.map(\.json)) }
}
