/// Publishing a touched activity. The document stores no activity entries (they are built from
/// the model when read, see ``Engine/activitySection``): a revision compares the activity as the
/// document showed it with the activity now, member by member in the entry's sorted order, and
/// builds JSON only for members that differ. The operations are those a diff of the two whole
/// entries gives (checked in debug builds), without building, comparing and storing two trees
/// of twenty members per update.
extension Engine {
    /// Appends the operations that turn activity `id`'s published entry into its entry now.
    /// - Parameter published: the activity as the document showed it (`nil`: it had none).
    func publishActivity(_ id: String, was published: Activity?, into patch: inout EncodedPatch) {
        let path = JSONPointer(tokens: [DocumentSection.activities.rawValue, id])
        let configuration = self.configuration
        let entries = EntryConfigurations(was: self.changes.publishedConfiguration ?? configuration, now: configuration)
        let present =
            self.activities.read(id) { now in
                guard let was = published else { return patch.append(.add(path, Self.activityJSON(now, configuration))) }
                Self.diff(was, now, entries, path, into: &patch)
                assert(
                    Self.diffMatchesEntries(was, now, entries, path),
                    "activity \(id)'s operations differ from those of its entries' diff")
            } != nil
        if !present, published != nil { patch.append(.remove(path)) }
    }

    /// The configurations an activity's published and current entries were built under.
    private struct EntryConfigurations {
        var was: SimulatorConfiguration
        var now: SimulatorConfiguration
    }

    /// The operations between two activities' entries, member by member (``activityJSON``'s
    /// members, in its order). Strings compare by code point, as JSON values do.
    private static func diff(
        _ was: Activity, _ now: Activity, _ entries: EntryConfigurations, _ path: JSONPointer,
        into patch: inout EncodedPatch
    ) {
        func replace(_ key: String, if changed: Bool, _ value: @autoclosure () -> JSONValue) {
            if changed { patch.append(.replace(path.appending(key), value())) }
        }
        func diffJSON(_ key: String, if changed: Bool, _ old: () -> JSONValue, _ new: () -> JSONValue) {
            if changed { JSONPatch.diff(old(), new(), path.appending(key), &patch) }
        }
        replace("activityState", if: was.phase != now.phase, .string(now.phase.rawValue))
        diffJSON("alert", if: was.alert != now.alert, { was.alert?.json ?? .null }, { now.alert?.json ?? .null })
        replace("app", if: differ(was.app, now.app), .string(now.app))
        diffJSON("attributes", if: was.attributes != now.attributes, { .object(was.attributes) }, { .object(now.attributes) })
        replace("attributesType", if: differ(was.attributesType, now.attributesType), .string(now.attributesType))
        let content = path.appending("content")
        if was.content.relevanceScore != now.content.relevanceScore {
            patch.append(.replace(content.appending("relevanceScore"), .number(now.content.relevanceScore)))
        }
        if was.content.staleDate != now.content.staleDate {
            patch.append(.replace(content.appending("staleDate"), date(now.content.staleDate)))
        }
        JSONPatch.diff(.object(was.content.state), .object(now.content.state), content.appending("state"), &patch)
        replace("device", if: differ(was.device, now.device), string(now.device))
        replace("dismissAt", if: was.dismissAt != now.dismissAt, date(now.dismissAt))
        replace("dismissedAt", if: was.dismissedAt != now.dismissedAt, date(now.dismissedAt))
        replace("endReason", if: differ(was.endReason, now.endReason), string(now.endReason))
        replace("endedAt", if: was.endedAt != now.endedAt, date(now.endedAt))
        replace("id", if: differ(was.id, now.id), .string(now.id))
        replace("lastTimestamp", if: was.lastTimestamp != now.lastTimestamp, date(now.lastTimestamp))
        replace("pushChannel", if: differ(was.channel, now.channel), string(now.channel))
        replace("pushToken", if: differ(was.pushToken, now.pushToken), string(now.pushToken))
        // The layouts follow the configuration; unchanged fragments share storage (O(1) to compare).
        let rendered =
            was.renderedFragments != now.renderedFragments
            || Self.layout(of: was, entries.was) != Self.layout(of: now, entries.now)
        diffJSON("render", if: rendered, { Self.renderJSON(was, entries.was) }, { Self.renderJSON(now, entries.now) })
        replace("requestedAt", if: was.requestedAt != now.requestedAt, .string(now.requestedAt.rfc3339))
        replace("scheduledStart", if: was.scheduledStart != now.scheduledStart, date(now.scheduledStart))
        replace("source", if: was.source != now.source, .string(now.source.rawValue))
        replace("startedAt", if: was.startedAt != now.startedAt, date(now.startedAt))
    }

    /// Whether ``diff(_:_:_:_:into:)`` writes what a diff of the two whole entries writes.
    private static func diffMatchesEntries(
        _ was: Activity, _ now: Activity, _ entries: EntryConfigurations, _ path: JSONPointer
    ) -> Bool {
        var members = EncodedPatch(reservingCapacity: 256)
        Self.diff(was, now, entries, path, into: &members)
        var whole = EncodedPatch(reservingCapacity: 256)
        JSONPatch.diff(Self.activityJSON(was, entries.was), Self.activityJSON(now, entries.now), path, &whole)
        return members.finish() == whole.finish()
    }
}

/// Whether two strings differ as JSON strings do: by code point (Swift's `==` would call a
/// precomposed and a decomposed accent equal).
private func differ(_ a: String?, _ b: String?) -> Bool {
    switch (a, b) {
    case (nil, nil): false
    case (let a?, let b?): !a.hasSameCodePoints(as: b)
    default: true
    }
}

/// A string member that may be `null`.
private func string(_ value: String?) -> JSONValue {
    value.map(JSONValue.string) ?? .null
}
