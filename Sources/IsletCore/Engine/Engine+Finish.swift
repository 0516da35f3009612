internal import HashTreeCollections

/// The end of a revision: render what changed, rebuild the touched entities' JSON, diff each
/// against the document, store it, and collect the operations.
extension Engine {
    mutating func finishRevision(results: [JSONValue]) -> Revision {
        self.rev += 1
        self.renderTouched()
        self.refreshSceneBase()
        self.touchDevicesShowingRendered()
        var operations: [PatchOperation] = []
        for id in self.changes.activities.sorted() {
            self.store(.activities, id, self.activities[id].map(self.activityJSON), into: &operations)
        }
        for id in self.changes.apps.sorted() {
            self.store(.apps, id, self.apps[id].map(self.appJSON), into: &operations)
        }
        self.storeClock(into: &operations)
        if self.changes.config {
            for (name, value) in self.configuration.entries { self.store(.config, name, value, into: &operations) }
        }
        var deviceIDs = self.changes.devices
        if self.changes.allDevices { deviceIDs.formUnion(self.devices.keys) }
        for id in deviceIDs.sorted() {
            self.store(.devices, id, self.devices[id].map(self.deviceJSON), into: &operations)
        }
        let revision = Revision(
            rev: self.rev, at: self.now, ops: operations, results: results,
            transitions: self.changes.transitions, encodedOps: operations.encoded)
        self.changes = ChangeSet()
        return revision
    }

    /// Replaces one entry of the document and appends the operations that describe the change.
    mutating func store(
        _ section: DocumentSection, _ key: String, _ new: JSONValue?, into operations: inout [PatchOperation]
    ) {
        let path = JSONPointer(tokens: [section.rawValue, key])
        switch (self.document[section, key], new) {
        case (nil, nil): return
        case (nil, let value?): operations.append(.add(path, value))
        case (_?, nil): operations.append(.remove(path))
        case (let old?, let value?): JSONPatch.diff(old, value, path, &operations)
        }
        self.document[section, key] = new
    }

    /// `/clock/now` is replaced in every revision, even when a paused clock leaves it equal, so
    /// every patch says at which simulated instant it happened.
    private mutating func storeClock(into operations: inout [PatchOperation]) {
        let now = JSONValue.string(self.now.rfc3339)
        operations.append(.replace("/clock/now", now))
        self.document[.clock, "now"] = now
        if self.changes.clockSettings {
            self.store(.clock, "mode", .string(self.clock.mode.rawValue), into: &operations)
            self.store(.clock, "rate", .number(self.clock.rate), into: &operations)
        }
    }

    /// Renders the fragments of every activity whose content or state changed.
    private mutating func renderTouched() {
        for id in self.changes.renders.sorted() {
            guard var activity = self.activities[id] else { continue }
            activity.render = self.render(activity)
            self.activities[id] = activity
        }
    }

    /// A device's scene shows the expanded height and the StandBy height of activities; when
    /// those re-render, the device's scene is rebuilt too.
    private mutating func touchDevicesShowingRendered() {
        guard !self.changes.renders.isEmpty, !self.changes.allDevices else { return }
        let top = self.sceneBase.island.primary?.id
        for (id, device) in self.devices {
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
        self.document[.relevance, "weights"] = [:]
        self.document[.relevance, "hysteresis"] = 0
        self.document[.relevance, "minDwellSeconds"] = 900
    }
}
