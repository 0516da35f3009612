internal import HashTreeCollections

/// The end of a revision: render what changed, then write the operations of each touched
/// entity: activities and widgets compared with what the document showed of them (it stores
/// neither), the others rebuilt as JSON, diffed against the document and stored.
extension Engine {
    mutating func finishRevision(results: [JSONValue]) -> Revision {
        self.rev += 1
        self.renderTouched()
        self.refreshSceneBase()
        self.touchDevicesShowingRendered()
        var patch = EncodedPatch(reservingCapacity: self.changes.encodedSizeGuess)
        for id in self.changes.activities.keys.sorted() {
            self.publishActivity(id, was: self.changes.activities[id]!, into: &patch)
        }
        for id in self.changes.apps.union(self.changes.deliveryLogs.keys).sorted() {
            self.storeApp(id, into: &patch)
        }
        self.storeClock(into: &patch)
        if self.changes.config {
            for (name, value) in self.configuration.entries { self.store(.config, name, value, into: &patch) }
        }
        var rebuilt = self.changes.devices
        if self.changes.allDevices { rebuilt.formUnion(self.devices.keys) }
        var deviceIDs = rebuilt
        for (id, change) in self.changes.scenes where change.lockScreen { deviceIDs.insert(id) }
        for id in deviceIDs.sorted() {
            self.storeDevice(id, rebuild: rebuilt.contains(id), into: &patch)
        }
        if self.changes.relevance {
            for (name, value) in self.relevance.entries { self.store(.relevance, name, value, into: &patch) }
        }
        self.publishWidgetsAndStacks(into: &patch)
        let count = patch.count
        let revision = Revision(
            rev: self.rev, at: self.now, encodedOps: patch.finish(), operationCount: count,
            results: results, transitions: self.changes.transitions, discards: self.changes.discards)
        self.changes = ChangeSet()
        return revision
    }

    /// Replaces one entry of the document and appends the operations that describe the change.
    mutating func store(
        _ section: DocumentSection, _ key: String, _ new: JSONValue?, into patch: inout EncodedPatch
    ) {
        let path = JSONPointer(tokens: [section.rawValue, key])
        switch (self.document[section, key], new) {
        case (nil, nil): return
        case (nil, let value?): patch.append(.add(path, value))
        case (_?, nil): patch.append(.remove(path))
        case (let old?, let value?): JSONPatch.diff(old, value, path, &patch)
        }
        self.document[section, key] = new
    }

    /// Publishes the touched widgets, then the touched stacks. When both are many (a long clock
    /// step), a second thread publishes the stacks into its own buffer and then helps with the
    /// last widgets, from the back, while this thread publishes the widgets from the front: the
    /// bytes are the same either way. Until they are moved back, the widgets the second thread
    /// may reach leave their slots empty: nothing else reads the widget table meanwhile.
    private mutating func publishWidgetsAndStacks(into patch: inout EncodedPatch) {
        guard !self.changes.widgets.isEmpty || !self.changes.stacks.isEmpty else { return }
        let widgets = uniqueSorted(self.changes.widgets, by: \.id)
        var publication = WidgetPublication(self)
        guard !self.changes.stacks.isEmpty else { return self.publishWidgets(widgets[...], &publication, into: &patch) }
        var writeBack = StackPublication.WriteBack()
        do {
            let stacks = StackPublication(
                stacks: self.stacks, document: self.document, relevance: self.relevance,
                ids: uniqueSorted(self.changes.stacks))
            if stacks.ids.count >= self.sideBySideMinimum, widgets.count >= self.sideBySideMinimum {
                let split = widgets.count - WidgetPublication.secondThreadReach(widgets: widgets.count, stacks: stacks.ids.count)
                var moved = self.moveOut(widgets[split...])
                var second: SharedWidgetPublication.SecondPart
                (second, writeBack) = moved.withUnsafeMutableBufferPointer { moved in
                    let shared = SharedWidgetPublication(widgets: moved, publication, stacks)
                    let helper = ConcurrentWork { shared.runSecond() }
                    self.publishWidgets(widgets[..<split], &publication, into: &patch)
                    shared.runFirst(&publication, into: &patch)
                    let done = helper.wait()
                    for index in moved.indices {
                        if let slot = moved[index].slot { self.widgets.exchange(slot: slot, with: &moved[index].widget) }
                    }
                    return done
                }
                for index in second.widgets.indices.reversed() { patch.append(contentsOf: &second.widgets[index]) }
                patch.append(contentsOf: &second.stacks)
            } else {
                self.publishWidgets(widgets[...], &publication, into: &patch)
                writeBack = stacks.run(into: &patch)
            }
        }
        // The publication's copies are gone: the table and the document change in place.
        for (id, entry) in writeBack.entries { self.document[.stacks, id] = entry }
        for (slot, published) in writeBack.published { self.stacks.modify(slot: slot) { $0.published = published } }
    }

    /// Publishes touched widgets in place, in order.
    private mutating func publishWidgets(
        _ widgets: ArraySlice<TouchedWidget>, _ publication: inout WidgetPublication, into patch: inout EncodedPatch
    ) {
        for touched in widgets {
            guard let slot = self.currentSlot(of: touched) else {
                publication.unpublish(touched.id, into: &patch)
                continue
            }
            let found: Void? = self.widgets.modify(slot: slot) { publication.publish(&$0, into: &patch) }
            assert(found != nil, "a widget to publish was moved out of its slot")
        }
    }

    /// Moves touched widgets out of the table (uncopied), for the second thread to publish.
    private mutating func moveOut(_ widgets: ArraySlice<TouchedWidget>) -> [WidgetToPublish] {
        var moved: [WidgetToPublish] = []
        moved.reserveCapacity(widgets.count)
        for touched in widgets {
            var item = WidgetToPublish(id: touched.id, slot: self.currentSlot(of: touched))
            if let slot = item.slot { self.widgets.exchange(slot: slot, with: &item.widget) }
            moved.append(item)
        }
        return moved
    }

    /// The slot a touched widget is in now: the one it was touched in, unless it left it
    /// (deleted, perhaps created again elsewhere; 100,000 lookups of ids in the table's tree
    /// saved on a 24 h jump); `nil` when it is gone.
    private mutating func currentSlot(of touched: TouchedWidget) -> Int32? {
        let stillThere = touched.slot >= 0 && self.widgets.modify(slot: touched.slot, { $0.id == touched.id }) == true
        return stillThere ? touched.slot : self.widgets.slot(of: touched.id)
    }

    /// Stores an app. Its stored entry holds no delivery log (``VirtualMember``): the log only
    /// ever gains records at the end and loses the oldest, so its operations follow from counts,
    /// and an app shown before whose log alone changed (the push path's common case:
    /// `recordDelivery` does not mark the app changed) is neither read, rebuilt nor stored. Its
    /// channels are rebuilt and compared only where they changed.
    private mutating func storeApp(_ id: String, into patch: inout EncodedPatch) {
        let path = JSONPointer(tokens: [DocumentSection.apps.rawValue, id])
        let log = self.deliveryLogs[id] ?? []
        let logOnly = !self.changes.apps.contains(id) && self.apps.contains(id) && self.document[.apps, id] != nil
        guard logOnly || self.storeAppEntry(id, path, log: log, into: &patch) else { return }
        guard let change = self.changes.deliveryLogs[id] else { return }
        let logPath = path.appending(Self.deliveriesPointer)
        let kept = min(change.appended, log.count)
        for _ in 0..<(change.published + kept - log.count) { patch.append(.remove(logPath.appending(0))) }
        for index in (log.count - kept)..<log.count { patch.append(.add(logPath.appending(index), log[index])) }
    }

    /// Stores an app's entry (without its log: ``storeApp``); returns whether the log's
    /// operations follow (not for an app added with its log in it, nor for one removed).
    private mutating func storeAppEntry(
        _ id: String, _ path: JSONPointer, log: [JSONValue], into patch: inout EncodedPatch
    ) -> Bool {
        switch (self.document[.apps, id], self.apps[id]) {
        case (nil, nil):
            return false
        case (nil, let app?):
            let stored = self.appJSON(app)
            var added = stored
            try? added.set(.array(log), at: Self.deliveriesPointer)
            patch.append(.add(path, added))
            self.document[.apps, id] = stored
            return false
        case (_?, nil):
            patch.append(.remove(path))
            self.document[.apps, id] = nil
            return false
        case (.object(let old)?, let app?):
            if self.changes.apps.contains(id) {
                guard case .object(var channels)? = old["channels"] else {
                    preconditionFailure("app \(id)'s stored entry has no channels object")
                }
                let channelPath = path.appending("channels")
                for channelID in (self.changes.channels[id] ?? []).sorted() {
                    let before = channels[channelID]
                    let after = app.channels[channelID].map(self.channelJSON)
                    switch (before, after) {
                    case (nil, nil): continue
                    case (nil, let value?): patch.append(.add(channelPath.appending(channelID), value))
                    case (_?, nil): patch.append(.remove(channelPath.appending(channelID)))
                    case (let was?, let value?):
                        JSONPatch.diff(was, value, channelPath.appending(channelID), &patch)
                    }
                    channels[channelID] = after
                }
                let rebuilt = self.appJSON(app, channels: .object(channels))
                if case .object(let new) = rebuilt {
                    JSONPatch.diff(old, new, skipping: ["channels"], path, &patch)
                }
                self.document[.apps, id] = rebuilt
            }
            return true
        case (_?, _?):
            preconditionFailure("app \(id)'s stored entry is not an object")
        }
    }

    /// Stores a device. Its stored form holds no Lock Screen list (``VirtualMember``): a new
    /// device is added with the list in it; otherwise the list's operations are the revision's
    /// replayed moves on that device, or (after too many moves to replay) one `replace` of the list.
    /// - Parameter rebuild: whether the device's entry may have changed; without it only the
    ///   Lock Screen list did, and the entry is neither rebuilt nor compared.
    private mutating func storeDevice(_ id: String, rebuild: Bool, into patch: inout EncodedPatch) {
        let path = JSONPointer(tokens: [DocumentSection.devices.rawValue, id])
        let old = self.document[.devices, id]
        if !rebuild, old != nil {
            assert(old == self.devices[id].map(self.deviceJSON), "device \(id) changed without being touched")
            self.appendLockScreenOperations(id, path, into: &patch)
            return
        }
        let new = self.devices[id].map(self.deviceJSON)
        switch (old, new) {
        case (nil, nil):
            return
        case (nil, var added?):
            try? added.set(self.lockScreenList(of: id), at: Self.lockScreenListPointer)
            patch.append(.add(path, added))
        case (_?, nil):
            patch.append(.remove(path))
        case (let old?, let new?):
            JSONPatch.diff(old, new, path, &patch)
            self.appendLockScreenOperations(id, path, into: &patch)
        }
        self.document[.devices, id] = new
    }

    /// The Lock Screen list's operations of this revision under one device's path, if it changed.
    private func appendLockScreenOperations(_ id: String, _ path: JSONPointer, into patch: inout EncodedPatch) {
        guard let change = self.changes.scenes[id], change.lockScreen else { return }
        let listPath = path.appending(Self.lockScreenListPointer)
        if let ops = change.lockScreenOps {
            for op in ops {
                patch.append(PatchOperation(kind: op.kind, path: listPath.appending(op.path), value: op.value))
            }
        } else {
            patch.append(.replace(listPath, self.lockScreenList(of: id)))
        }
    }

    static let lockScreenListPointer: JSONPointer = "/scene/lockScreen/activities"
    private static let clockNowPointer: JSONPointer = "/clock/now"

    /// `/clock/now` is replaced in every revision, even when a paused clock leaves it equal, so
    /// every patch says at which simulated instant it happened.
    private mutating func storeClock(into patch: inout EncodedPatch) {
        let now = JSONValue.string(self.now.rfc3339)
        patch.append(.replace(Self.clockNowPointer, now))
        self.document[.clock, "now"] = now
        if self.changes.clockSettings {
            self.store(.clock, "mode", .string(self.clock.mode.rawValue), into: &patch)
            self.store(.clock, "rate", .number(self.clock.rate), into: &patch)
        }
    }

    /// Renders the fragments of every activity whose content or state changed; one whose
    /// templates read none of the change keeps its fragments and leaves `renders`.
    private mutating func renderTouched() {
        for id in self.changes.renders.sorted() {
            if !self.rerender(id) { self.changes.renders.remove(id) }
        }
    }

    /// A device's scene shows the expanded height and the StandBy height of activities; when
    /// those re-render, the device's scene is rebuilt too.
    private mutating func touchDevicesShowingRendered() {
        guard !self.changes.renders.isEmpty, !self.changes.allDevices else { return }
        for (id, device) in self.devices {
            let top = self.sceneBase[id].primary?.id
            let expanded = device.expansion.map { self.changes.renders.contains($0.activity) } ?? false
            let standby = device.standby && top.map { self.changes.renders.contains($0) } == true
            if expanded || standby { self.changes.devices.insert(id) }
        }
    }

    /// The document at revision 0: every section present, singletons filled in.
    mutating func writeInitialDocument() {
        self.document[.clock, "now"] = .string(self.now.rfc3339)
        self.document[.clock, "mode"] = .string(self.clock.mode.rawValue)
        self.document[.clock, "rate"] = .number(self.clock.rate)
        for (name, value) in self.configuration.entries { self.document[.config, name] = value }
        for (name, value) in self.relevance.entries { self.document[.relevance, name] = value }
    }
}

/// A widget in a revision's change list: its id, and the slot it had then (-1: removed).
struct TouchedWidget: Sendable {
    var id: String
    var slot: Int32
}

/// The ids of a change list, each once, in canonical order.
func uniqueSorted(_ ids: [String]) -> [String] {
    uniqueSorted(ids, by: { $0 })
}

/// The elements of a change list, one per id, in the canonical order of their ids.
func uniqueSorted<Element>(_ list: [Element], by id: (Element) -> String) -> [Element] {
    var sorted = list.sorted { id($0) < id($1) }
    var kept = 0
    for index in sorted.indices where index == 0 || id(sorted[index]) != id(sorted[index - 1]) {
        sorted[kept] = sorted[index]
        kept += 1
    }
    sorted.removeLast(sorted.count - kept)
    return sorted
}
