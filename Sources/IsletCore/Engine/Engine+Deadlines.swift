internal import HashTreeCollections

/// What each deadline does, and how a popped deadline is recognised as still wanted.
///
/// Tie order: deadlines due at the same instant fire in the order they were scheduled (their
/// sequence). Deadlines due at or before a command batch's instant fire before the batch.
extension Engine {
    /// Whether the entity still has this deadline armed (its stored sequence matches).
    func isLive(_ deadline: Deadline) -> Bool {
        let sequence = deadline.sequence
        switch deadline.kind {
        case .activityStart(let id): return self.activities[id]?.armed.start == sequence
        case .activityStale(let id): return self.activities[id]?.armed.stale == sequence
        case .activityLifetime(let id): return self.activities[id]?.armed.lifetime == sequence
        case .activityDismissal(let id): return self.activities[id]?.armed.dismissal == sequence
        case .activityRemoval(let id): return self.activities[id]?.armed.removal == sequence
        case .expansionEnd(let device): return self.devices[device]?.expansion?.deadline == sequence
        case .bannerEnd(let device): return self.devices[device]?.banner?.deadline == sequence
        case .budgetReset(let app, let kind): return self.apps[app]?.budget(kind).resetDeadline == sequence
        case .deferredDelivery(let app):
            return self.apps[app]?.deferred.contains { $0.deadline == sequence } ?? false
        case .widgetEntry(let slot): return self.widgets[slot: slot]?.entryDeadline == sequence
        case .widgetReload(let slot): return self.widgets[slot: slot]?.reload.scheduled?.deadline == sequence
        case .widgetChargeExpiry(let slot): return self.widgets[slot: slot]?.reload.chargeExpiryDeadline == sequence
        case .stackEvaluation(let slot): return self.stacks[slot: slot]?.evaluationDeadline == sequence
        }
    }

    /// Applies `deadline` if it is still wanted; returns whether it was. Entry transitions, by far
    /// the most frequent deadlines, check and apply in one lookup of their widget.
    mutating func fireIfLive(_ deadline: Deadline) -> Bool {
        switch deadline.kind {
        case .widgetEntry(let slot):
            return self.advanceWidget(slot, sequence: deadline.sequence, at: deadline.at)
        case .stackEvaluation(let slot):
            let sequence = deadline.sequence
            let newlyPending = self.stacks.modify(slot: slot) { stack -> Bool? in
                guard stack.evaluationDeadline == sequence else { return nil }
                stack.evaluationDeadline = nil
                stack.evaluationAt = nil
                guard !stack.evaluationPending else { return false }
                stack.evaluationPending = true
                return true
            }
            guard let newlyPending = newlyPending ?? nil else { return false }
            self.now = max(self.now, deadline.at)
            if newlyPending { self.changes.evaluations.append(slot) }
            return true
        default:
            break
        }
        guard self.isLive(deadline) else { return false }
        self.now = max(self.now, deadline.at)
        self.fire(deadline)
        return true
    }

    /// Applies a live deadline at `now` (already set to its instant).
    mutating func fire(_ deadline: Deadline) {
        switch deadline.kind {
        case .activityStart(let id):
            self.startActivity(id)
            if self.activities[id]?.alert != nil { self.presentAlert(of: id) }
        case .activityStale(let id):
            self.modifyActivity(id) { activity in
                activity.armed.stale = nil
                if activity.phase == .active { activity.phase = .stale }
            }
        case .activityLifetime(let id):
            self.endActivity(id, reason: "system", policy: .default)
        case .activityDismissal(let id):
            self.dismissActivity(id)
        case .activityRemoval(let id):
            self.removeActivity(id)
        case .expansionEnd(let device):
            self.endExpansion(device)
        case .bannerEnd(let device):
            self.endBanner(device)
        case .budgetReset(let app, let kind):
            self.resetBudget(app, kind)
        case .deferredDelivery(let app):
            self.deliverDeferred(app, sequence: deadline.sequence)
        case .widgetEntry(let slot):
            self.advanceWidget(slot, sequence: deadline.sequence, at: deadline.at)
        case .widgetReload(let slot):
            self.scheduledReloadFalls(due: slot)
        case .widgetChargeExpiry(let slot):
            self.expireCharges(of: slot)
        case .stackEvaluation(let slot):
            self.stacks.modify(slot: slot) { stack in
                stack.evaluationDeadline = nil
                stack.evaluationAt = nil
            }
            self.requestEvaluation(of: slot)
        }
    }
}
