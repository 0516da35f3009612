internal import HashTreeCollections

/// `widget.upsert` and `widget.delete`: what a widget is and where it is placed (WK-1).
extension Engine {
    /// The number the revision in progress stamps on what it touches; no earlier revision of
    /// this world, or of the world it was forked from, used it.
    var revisionMark: UInt64 { self.markBase &+ self.rev &+ 1 }

    mutating func upsertWidget(_ upsert: WidgetUpsert) throws(APIError) -> JSONValue {
        let existing = self.widgets[upsert.id]
        var widget: Widget
        if let existing { widget = existing } else { widget = try self.newWidget(upsert) }
        if let existing {
            if let app = upsert.app, app != existing.app {
                throw APIError(
                    .conflict, "a widget's app is fixed; delete \"\(upsert.id)\" and create another", field: "/app")
            }
            if let kind = upsert.kind, kind != existing.kind {
                throw APIError(
                    .conflict, "a widget's kind is fixed; delete \"\(upsert.id)\" and create another", field: "/kind")
            }
        }
        if let device = upsert.device, !device.isEmpty, self.devices[device] == nil {
            throw APIError(.notFound, "no device \"\(device)\"", field: "/device")
        }
        let before = (device: existing?.device, family: existing?.family)
        if let family = upsert.family, family != widget.family, let stack = widget.stack {
            throw APIError(
                .conflict,
                "SS-1: \"\(widget.id)\" is in stack \"\(stack)\", whose widgets are all \(widget.family.rawValue)",
                field: "/family")
        }
        if let device = upsert.device, (device.isEmpty ? nil : device) != widget.device, let stack = widget.stack {
            throw APIError(
                .conflict, "\"\(widget.id)\" is in stack \"\(stack)\"; take it out of the stack first", field: "/device"
            )
        }
        if let family = upsert.family, family != widget.family {
            widget.family = family
            widget.dirty.formUnion([.family, .presentation, .size, .tap])
        }
        if let device = upsert.device, (device.isEmpty ? nil : device) != widget.device {
            widget.device = device.isEmpty ? nil : device
            widget.dirty.formUnion([.device, .presentation, .size])
        }
        let contents = [upsert.configuration, upsert.placeholder].compactMap { $0 }
        if !contents.isEmpty {
            try self.templates.checkWidgetBudget(app: widget.app, kind: widget.kind, contents: contents, field: "/configuration")
        }
        let reconfigured = existing != nil && upsert.configuration.map { $0 != widget.configuration } == true
        if let configuration = upsert.configuration {
            widget.configuration = configuration
            widget.dirty.insert(.configuration)
        }
        if reconfigured {
            // WK-10: the old timeline was for the old configuration; the placeholder shows
            // until the provider answers for the new one.
            widget.timeline = Timeline()
            widget.current = nil
            widget.held = nil
            widget.entryDeadline = nil
            widget.dirty.formUnion([.timeline, .current, .tap])
        }
        if let placeholder = upsert.placeholder {
            widget.placeholder = placeholder
            widget.dirty.insert(.placeholder)
        }
        if let url = upsert.url {
            widget.url = url.isEmpty ? nil : url
            widget.dirty.formUnion([.url, .tap])
        }
        widget.needsRender = true
        self.commit(widget)
        if existing == nil {
            self.apps[widget.app]?.widgets.insert(widget.id)
            self.kindWidgets[widget.kindKey, default: []].insert(widget.id)
        }
        if before.device != widget.device || before.family != widget.family {
            self.unplace(widget.id, from: before.device)
            self.place(widget.id, family: widget.family, on: widget.device)
        }
        // WK-10: a new or reconfigured widget asks its provider for a timeline at once (free).
        if existing == nil || reconfigured {
            _ = self.requestReload(widget.id, reason: existing == nil ? "created" : "configured", notBefore: self.now)
            if reconfigured { self.refreshMember(widget.id) }
        }
        return [:]
    }

    private func newWidget(_ upsert: WidgetUpsert) throws(APIError) -> Widget {
        guard let app = upsert.app else {
            throw APIError(.invalidArgument, "\"app\" is required to create a widget", field: "/app")
        }
        guard let kind = upsert.kind else {
            throw APIError(.invalidArgument, "\"kind\" is required to create a widget", field: "/kind")
        }
        guard let family = upsert.family else {
            throw APIError(.invalidArgument, "\"family\" is required to create a widget", field: "/family")
        }
        guard self.apps.contains(app) else {
            throw APIError(.notFound, "no app \"\(app)\"; create it with app.upsert", field: "/app")
        }
        guard self.widgets.count < EngineLimits.widgets else {
            throw EngineLimits.refuse("widgets", EngineLimits.widgets, name: "widgets", field: "/id")
        }
        return Widget(id: upsert.id, app: app, kind: kind, family: family)
    }

    mutating func deleteWidget(_ id: String) throws(APIError) -> JSONValue {
        guard self.widgets[id] != nil else { throw APIError(.notFound, "no widget \"\(id)\"", field: "/id") }
        self.removeWidget(id)
        return [:]
    }

    /// Forgets a widget: out of its stack, off its device, out of the indexes and the document.
    mutating func removeWidget(_ id: String) {
        guard let widget = self.widgets[id] else { return }
        if let stack = widget.stack { self.removeMember(id, from: stack) }
        self.unplace(id, from: widget.device)
        self.widgets[id] = nil
        self.apps[widget.app]?.widgets.remove(id)
        self.kindWidgets[widget.kindKey]?.remove(id)
        if self.kindWidgets[widget.kindKey]?.isEmpty == true { self.kindWidgets[widget.kindKey] = nil }
        self.changes.widgets.append(TouchedWidget(id: id, slot: -1))
        if widget.published { self.changes.unpublishedWidgets.insert(id) }
    }

    /// Stores a widget changed by a command and lists it in the revision's change set.
    mutating func commit(_ widget: Widget) {
        var widget = widget
        if widget.touchMark != self.revisionMark {
            widget.touchMark = self.revisionMark
            // A command's widget may be new: its slot is looked up when it is published.
            self.changes.widgets.append(TouchedWidget(id: widget.id, slot: -1))
        }
        self.widgets[widget.id] = widget
    }

    /// ``commit(_:)`` for a widget whose slot the caller holds (no lookup of its id).
    mutating func commit(_ widget: Widget, slot: Int32) {
        var widget = widget
        if widget.touchMark != self.revisionMark {
            widget.touchMark = self.revisionMark
            self.changes.widgets.append(TouchedWidget(id: widget.id, slot: slot))
        }
        self.widgets.modify(slot: slot) { $0 = widget }
    }

    /// Lists a widget in the change set (once) with the document members that changed,
    /// optionally asking for a new rendering.
    mutating func touchWidget(_ id: String, _ members: WidgetMembers, render: Bool) {
        if let slot = self.widgets.slot(of: id) { self.touchWidget(slot: slot, members, render: render) }
    }

    /// ``touchWidget(_:_:render:)`` for a widget whose slot the caller holds.
    mutating func touchWidget(slot: Int32, _ members: WidgetMembers, render: Bool) {
        let mark = self.revisionMark
        let newlyTouched = self.widgets.modify(slot: slot) { widget -> String? in
            if render { widget.needsRender = true }
            widget.dirty.formUnion(members)
            guard widget.touchMark != mark else { return nil }
            widget.touchMark = mark
            return widget.id
        }
        if let id = newlyTouched ?? nil { self.changes.widgets.append(TouchedWidget(id: id, slot: slot)) }
    }

    // MARK: Placement (WK-1)

    /// Puts a widget on its device: accessory families on the Lock Screen, system families on
    /// the Home Screen (outside any stack until `stack.upsert` takes it).
    mutating func place(_ id: String, family: WidgetFamily, on device: String?) {
        guard let device, self.devices[device] != nil else { return }
        if family.isAccessory {
            self.devices[device]?.lockWidgets.append(id)
        } else {
            self.devices[device]?.homeWidgets.append(id)
        }
        self.changes.devices.insert(device)
    }

    /// Takes a widget off a device's Lock Screen or Home Screen list.
    mutating func unplace(_ id: String, from device: String?) {
        guard let device, self.devices[device] != nil else { return }
        self.devices[device]?.lockWidgets.removeAll { $0 == id }
        self.devices[device]?.homeWidgets.removeAll { $0 == id }
        self.changes.devices.insert(device)
    }

    /// Widgets and stacks placed on a device that is deleted stay, unplaced: stacks are
    /// deleted, widgets keep their timelines and lose their device.
    mutating func unplaceAll(from device: String) {
        for stack in self.devices[device]?.homeStacks ?? [] { self.removeStack(stack) }
        guard let placed = self.devices[device] else { return }
        for id in placed.homeWidgets + placed.lockWidgets {
            self.widgets.modifyExisting(id) { $0.device = nil }
            self.touchWidget(id, [.device, .presentation, .size], render: true)
        }
    }

    /// Every widget shown on a device (Home Screen, stacks, Lock Screen): their document entry
    /// depends on the device's switches (WK-8).
    func widgetsShown(on device: Device) -> [String] {
        device.homeWidgets + device.lockWidgets + device.homeStacks.flatMap { self.stacks[$0]?.widgetIDs ?? [] }
    }
}
