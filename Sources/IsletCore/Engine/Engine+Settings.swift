internal import HashTreeCollections

/// `clock.set`, `clock.advance`, `config.set` and `template.put`.
extension Engine {
    /// `clock.set`: switch modes, set a virtual clock's instant or rate. Simulated time never
    /// goes backwards (deadlines that fired cannot un-fire), so an earlier `now` is refused.
    mutating func setClock(_ set: ClockSet, wall: Instant) throws(APIError) -> JSONValue {
        let target: Instant
        let clock: SimulationClock
        switch set.mode ?? self.clock.mode {
        case .wall:
            if set.now != nil {
                throw APIError(.invalidArgument, "\"now\" applies to a virtual clock only", field: "/now")
            }
            if let rate = set.rate, rate != 1 {
                throw APIError(.invalidArgument, "a wall clock runs at rate 1", field: "/rate")
            }
            guard wall >= self.now else {
                let message =
                    "the simulated clock is at \(self.now), ahead of the wall clock (\(wall)); it never goes backwards"
                throw APIError(.conflict, message, field: "/mode")
            }
            target = wall
            clock = .wall(at: wall)
        case .virtual:
            target = set.now ?? self.now
            guard target >= self.now else {
                throw APIError(
                    .conflict, "the simulated clock is at \(self.now); it never goes backwards", field: "/now")
            }
            let rate = set.rate ?? (self.clock.mode == .virtual ? self.clock.rate : 0)
            clock = .virtual(now: target, rate: rate, atWall: wall)
        }
        self.runDeadlines(upTo: target)
        self.now = target
        self.clock = clock
        self.changes.clockSettings = true
        return ["now": .string(self.now.rfc3339)]
    }

    /// Whether `clock.advance` will succeed: a virtual clock and a target not before `now`.
    func canAdvanceClock(_ advance: ClockAdvance) -> Bool {
        guard self.clock.mode == .virtual else { return false }
        if let to = advance.to { return to >= self.now }
        return true
    }

    /// `clock.advance`: moves a virtual clock forward, applying every deadline on the way at
    /// its own instant. Refused in wall mode.
    mutating func advanceClock(_ advance: ClockAdvance, wall: Instant) throws(APIError) -> JSONValue {
        guard self.clock.mode == .virtual else {
            throw APIError(
                .conflict, "clock.advance needs a virtual clock; send clock.set with mode \"virtual\" first",
                field: "/type")
        }
        let target: Instant
        if let seconds = advance.seconds {
            // The clock stops at the last writable instant, as a wall-driven clock does.
            target = min(self.now.adding(seconds: seconds), .latestWritable)
        } else {
            target = advance.to!
            guard target >= self.now else {
                throw APIError(
                    .conflict, "the simulated clock is at \(self.now); it never goes backwards", field: "/to")
            }
        }
        let transitions = self.runDeadlines(upTo: target)
        self.now = target
        self.clock = self.clock.reanchored(wall: wall, simulated: target)
        return ["now": .string(target.rfc3339), "transitions": .number(Double(transitions))]
    }

    /// `config.set`: values were validated when decoded. Apps (budget limits), activities'
    /// layouts and every scene may depend on configuration, so all are rebuilt.
    /// - Complexity: O(n) in entities; configuration changes are rare operator actions.
    mutating func setConfiguration(_ set: ConfigSet) -> JSONValue {
        let before = self.configuration
        for member in set.values.members {
            _ = SimulatorConfiguration.field(named: member.key)?.write(&self.configuration, member.value)
        }
        guard before != self.configuration else { return [:] }
        if self.changes.publishedConfiguration == nil { self.changes.publishedConfiguration = before }
        self.changes.config = true
        self.changes.allDevices = true
        for id in self.devices.keys { self.changes.scenes[id, default: SceneChange()].island = true }
        for id in self.apps.keys { self.changes.apps.insert(id) }
        for (id, activity) in self.activities { self.changes.touchActivity(id, published: activity, render: false) }
        self.releaseThrottledPushes()
        // Every widget shows its reload budget's limit.
        if before.widgetReloadsPerDay != self.configuration.widgetReloadsPerDay {
            for id in self.widgets.keys.sorted() { self.touchWidget(id, [.reload], render: false) }
        }
        // SS-2: whether an entry of duration 0 is a candidate is read again for the entries shown
        // now, not only for those that become current later.
        if before.relevanceZeroDuration != self.configuration.relevanceZeroDuration {
            for id in self.widgets.keys.sorted() { self.refreshMember(id) }
        }
        return [:]
    }

    /// `template.put`: validates (PR-8: no controls in compact or minimal slots) and compiles
    /// the template, then re-renders the app's activities of that type.
    mutating func putTemplate(_ put: TemplatePut) throws(APIError) -> JSONValue {
        guard self.apps.contains(put.app) else {
            throw APIError(.notFound, "no app \"\(put.app)\"", field: "/app")
        }
        let slot = PresentationSlot(rawValue: put.slot)?.slot ?? TemplateSlot(name: put.slot, allowsControls: true)
        if !slot.allowsControls, containsControlMarkup(put.html) {
            let message =
                "PR-8: interactive controls are allowed only in expanded and lockScreen slots, not \(put.slot)"
            throw APIError(.invalidArgument, message, field: "/html")
        }
        let compiled: any CompiledTemplate
        do {
            compiled = try self.renderer.compile(put.html, slot: slot)
        } catch {
            throw APIError(error.code == .limitExceeded ? .limitExceeded : .invalidArgument, error.message, field: "/html")
        }
        try self.checkRenderBudget(compiled, app: put.app, target: put.target)
        let key = TemplateKey(app: put.app, target: put.target, slot: put.slot)
        if self.templates[key] == nil, self.templates.count(app: put.app) >= EngineLimits.templatesPerApp {
            throw EngineLimits.refuse(
                "templates per app", EngineLimits.templatesPerApp, name: "templates", field: "/target")
        }
        self.templates[TemplateKey(app: put.app, target: put.target, slot: put.slot)] = StoredTemplate(
            source: put.html, compiled: compiled)
        let type = put.target.hasPrefix("activity:") ? String(put.target.dropFirst("activity:".count)) : nil
        for id in self.apps[put.app]?.activities ?? [] where self.activities[id]?.attributesType == type {
            // Forgetting the context the fragments came from changes nothing the document shows.
            self.modifyActivity(id) { $0.renderedContext = nil }
        }
        if put.target.hasPrefix("widget:") {
            let kind = String(put.target.dropFirst("widget:".count))
            for id in (self.kindWidgets[put.app + "/" + kind] ?? []).sorted() { self.touchWidget(id, [], render: true) }
        }
        return [:]
    }
}
