internal import HashTreeCollections

/// `stack.upsert` and `stack.delete` (SS-1), and keeping each stack's member rows in step with
/// its widgets.
extension Engine {
    mutating func upsertStack(_ upsert: StackUpsert) throws(APIError) -> JSONValue {
        let existing = self.stacks[upsert.id]
        guard let device = upsert.device ?? existing?.device else {
            throw APIError(.invalidArgument, "\"device\" is required to create a stack", field: "/device")
        }
        guard let family = upsert.family ?? existing?.family else {
            throw APIError(.invalidArgument, "\"family\" is required to create a stack", field: "/family")
        }
        guard let ids = upsert.widgets ?? existing?.widgetIDs else {
            throw APIError(.invalidArgument, "\"widgets\" is required to create a stack", field: "/widgets")
        }
        guard self.devices[device] != nil else {
            throw APIError(.notFound, "no device \"\(device)\"", field: "/device")
        }
        if let existing, existing.device != device {
            throw APIError(.conflict, "a stack stays on its device; delete it and create another", field: "/device")
        }
        for (index, id) in ids.enumerated() {
            try self.checkStackable(
                id, stack: upsert.id, device: device, family: family,
                field: JSONPointer(tokens: ["widgets", String(index)]))
        }
        var stack = existing ?? Stack(id: upsert.id, device: device, family: family)
        stack.family = family
        if let smartRotate = upsert.smartRotate { stack.smartRotate = smartRotate }
        if let suggestions = upsert.suggestions { stack.suggestions = suggestions }
        let old = stack.widgetIDs
        let members = ids.map { id in
            stack.members.first { $0.widget == id } ?? StackMember(widget: id, slot: self.widgets.slot(of: id)!)
        }
        stack.members = members
        self.stacks[stack.id] = stack
        let stackSlot = self.stacks.slot(of: stack.id)!
        if existing == nil { self.devices[device]?.homeStacks.append(stack.id) }
        for id in old where !ids.contains(id) { self.leaveStack(id, device: device) }
        for id in ids where !old.contains(id) {
            let stackID = stack.id
            self.widgets.modifyExisting(id) { widget in
                widget.stack = stackID
                widget.stackSlot = stackSlot
            }
            self.devices[device]?.homeWidgets.removeAll { $0 == id }
            self.touchWidget(id, .stack, render: false)
        }
        for id in ids { self.refreshMember(id) }
        self.changes.devices.insert(device)
        self.touchStack(stack.id)
        self.requestEvaluation(of: stackSlot)
        return [:]
    }

    /// SS-1: a stack's widgets exist, share its family and device, and belong to no other stack.
    private func checkStackable(
        _ id: String, stack: String, device: String, family: WidgetFamily, field: JSONPointer
    ) throws(APIError) {
        guard let widget = self.widgets[id] else { throw APIError(.notFound, "no widget \"\(id)\"", field: field) }
        guard widget.family == family else {
            throw APIError(
                .invalidArgument,
                "SS-1: a stack's widgets are all \(family.rawValue); \"\(id)\" is \(widget.family.rawValue)",
                field: field)
        }
        guard widget.device == device else {
            let place = widget.device.map { "on device \"\($0)\"" } ?? "not placed on a device"
            throw APIError(.invalidArgument, "\"\(id)\" is \(place), not on \"\(device)\"", field: field)
        }
        if let other = widget.stack, other != stack {
            throw APIError(.conflict, "\"\(id)\" is already in stack \"\(other)\"", field: field)
        }
    }

    mutating func deleteStack(_ id: String) throws(APIError) -> JSONValue {
        guard self.stacks[id] != nil else { throw APIError(.notFound, "no stack \"\(id)\"", field: "/id") }
        self.removeStack(id)
        return [:]
    }

    /// Deletes a stack; its widgets return to the Home Screen on their own.
    mutating func removeStack(_ id: String) {
        guard let stack = self.stacks[id] else { return }
        for member in stack.members { self.leaveStack(member.widget, device: stack.device) }
        self.devices[stack.device]?.homeStacks.removeAll { $0 == id }
        self.stacks[id] = nil
        self.changes.devices.insert(stack.device)
        self.changes.stacks.append(id)
    }

    /// Takes a widget out of its stack (it is being deleted).
    mutating func removeMember(_ widget: String, from stack: String) {
        guard let stackSlot = self.stacks.slot(of: stack) else { return }
        let device = self.stacks.modify(slot: stackSlot) { stack in
            stack.members.removeAll { $0.widget == widget }
            return stack.device
        }
        self.widgets.modifyExisting(widget) { widget in
            widget.stack = nil
            widget.stackSlot = -1
        }
        if let device { self.changes.devices.insert(device) }
        self.touchStack(stack)
        self.requestEvaluation(of: stackSlot)
    }

    /// A widget taken out of a stack goes back to the Home Screen of its device.
    private mutating func leaveStack(_ id: String, device: String) {
        guard
            let placedOn = self.widgets.modifyExisting(
                id,
                { widget -> String? in
                    widget.stack = nil
                    widget.stackSlot = -1
                    return widget.device
                })
        else { return }
        if self.devices[device] != nil, placedOn == device { self.devices[device]?.homeWidgets.append(id) }
        self.touchWidget(id, .stack, render: false)
    }

    /// Copies everything ranking needs from a widget into its stack's member row.
    mutating func refreshMember(_ id: String) {
        guard let slot = self.widgets.slot(of: id), let widget = self.widgets[slot: slot], widget.stackSlot >= 0 else {
            return
        }
        let relevance = widget.relevance(untilNextEntry: self.configuration.relevanceZeroDuration == "untilNextEntry")
        let kindMax = self.kindMaxScores[widget.kindKey] ?? 0
        let habit = widget.habit
        self.updateMember(slot, of: widget.stackSlot) { member in
            member.apply(relevance)
            member.kindMax = kindMax
            member.habit = habit
        }
    }

    /// Changes one member row in place and asks for the stack to be re-ranked at `now`.
    /// - Complexity: O(1) for the stack (by slot), plus its ≤ 10 members.
    mutating func updateMember(_ widget: Int32, of stack: Int32, _ change: (inout StackMember) -> Void) {
        let newlyPending = self.stacks.modify(slot: stack) { slot -> Bool in
            guard let index = slot.members.firstIndex(where: { $0.widgetSlot == widget }) else { return false }
            change(&slot.members[index])
            guard !slot.evaluationPending else { return false }
            slot.evaluationPending = true
            return true
        }
        if newlyPending == true { self.changes.evaluations.append(stack) }
    }

    /// Asks for a stack to be re-ranked at `now` (once, however often it is asked).
    mutating func requestEvaluation(of stack: Int32) {
        let newlyPending = self.stacks.modify(slot: stack) { slot -> Bool in
            guard !slot.evaluationPending else { return false }
            slot.evaluationPending = true
            return true
        }
        if newlyPending == true { self.changes.evaluations.append(stack) }
    }

    /// Asks for the stack `id` to be re-ranked at `now`.
    mutating func requestEvaluation(of id: String) {
        if let slot = self.stacks.slot(of: id) { self.requestEvaluation(of: slot) }
    }

    /// Lists a stack in the change set (once).
    mutating func touchStack(_ id: String) {
        let mark = self.revisionMark
        let newlyTouched = self.stacks.modifyExisting(id) { slot -> Bool in
            guard slot.touchMark != mark else { return false }
            slot.touchMark = mark
            return true
        }
        if newlyTouched == true { self.changes.stacks.append(id) }
    }
}

extension StackMember {
    mutating func apply(_ relevance: MemberRelevance) {
        self.score = relevance.score
        self.eligibleFrom = relevance.eligibleFrom
        self.eligibleUntil = relevance.eligibleUntil
        self.changedAt = relevance.changedAt
    }
}
