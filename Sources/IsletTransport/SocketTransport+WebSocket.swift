extension SocketTransport {
    func upgradeRequested(_ connection: LWSConnection) -> LWSVerdict {
        guard self.isAccepting, connection.hasHTTPVersion, let (_, path) = connection.methodAndPath() else {
            return .close
        }
        let id = self.makeID(for: connection)
        let name = connection.protocolName
        let upgrade = WebSocketUpgrade(
            path: path, query: connection.query(),
            headers: connection.headers(extraNames: self.configuration.extraHeaderNames),
            subprotocol: self.configuration.subprotocols.contains(name ?? "") ? name : nil,
            connectionLimit: self.admits(id) ? nil : self.configuration.maxConnections)
        guard self.delegate?.transport(self, shouldAccept: upgrade) == true else { return .close }
        self.pendingUpgrades[id] = upgrade
        return .proceed
    }

    func webSocketOpened(_ connection: LWSConnection) -> LWSVerdict {
        guard let id = connection.id, let upgrade = self.pendingUpgrades.removeValue(forKey: id) else { return .close }
        if self.exchanges.removeValue(forKey: id) != nil { self.statistics.openHTTPConnections -= 1 }
        self.sockets.insert(
            WebSocketState(
                id: id, connection: connection, outboundCap: self.configuration.outboundCapBytes,
                messageLimit: self.configuration.maxMessageBytes, framesItself: !self.configuration.webSocketCompression))
        self.statistics.openWebSockets += 1
        self.delegate?.transport(self, didOpen: id, upgrade: upgrade)
        return .proceed
    }

    func webSocketReceived(_ connection: LWSConnection, _ bytes: UnsafeRawBufferPointer) -> LWSVerdict {
        guard let id = connection.id, let state = self.sockets[id] else { return .close }
        self.statistics.bytesReceived += UInt64(bytes.count)
        let heldBefore = state.reassemblyBytes
        let message = state.received(bytes)
        self.countReassembly(held: state.reassemblyBytes, before: heldBefore)
        guard let message else { return state.verdictWithoutMessage }
        self.isDeliveringMessage = true
        defer { self.isDeliveringMessage = false }
        self.delegate?.transport(self, didReceive: message, from: id)
        return .proceed
    }

    func webSocketWritable(_ connection: LWSConnection) -> LWSVerdict {
        guard let id = connection.id, let state = self.sockets[id] else { return .proceed }
        if state.takeDrainNotice() {
            self.delegate?.transport(self, didDrain: id)
            return .proceed
        }
        let (verdict, written) = state.writeNext(buffer: self.writeBuffer)
        self.count(written)
        return verdict
    }

    func webSocketPeerClosing(_ connection: LWSConnection, _ payload: UnsafeRawBufferPointer) -> LWSVerdict {
        guard let id = connection.id, let state = self.sockets[id] else { return .proceed }
        return state.peerClosing(payload)
    }

    func webSocketClosed(_ connection: LWSConnection) {
        guard let id = connection.id, let state = self.sockets.remove(id) else { return }
        self.statistics.openWebSockets -= 1
        self.countReassembly(held: 0, before: state.reassemblyBytes)
        self.delegate?.transport(self, didClose: id, code: state.closeCode)
        self.checkShutdown()
    }

    private func countReassembly(held: Int, before: Int) {
        self.statistics.reassemblyBytes += held - before
        self.statistics.largestReassemblyBytes = max(self.statistics.largestReassemblyBytes, held)
    }

    @discardableResult
    public func send(_ message: WebSocketMessage, to connection: ConnectionID) -> SendResult {
        guard let state = self.sockets[connection] else { return .notOpen }
        // permessage-deflate must run from the writable callback (`isletPMDeflateCallback`
        // deflates whole writes there), so with compression every message is queued; so is a
        // reply to a message being received (see `isDeliveringMessage`).
        if !self.configuration.webSocketCompression, !self.isDeliveringMessage,
            state.writeNow(message, buffer: self.writeBuffer)
        {
            self.count(WebSocketState.Written(writes: 1, messages: 1, bytes: message.bytes.count))
            return .queued
        }
        return state.enqueue(message)
    }

    @discardableResult
    public func broadcast(_ message: WebSocketMessage, to connections: Set<ConnectionID>) -> BroadcastResult {
        var result = BroadcastResult()
        func count(_ sent: SendResult, _ id: ConnectionID) {
            switch sent {
            case .queued: result.queued += 1
            case .overCap: result.overCap.append(id)
            case .notOpen: break
            }
        }
        if self.configuration.webSocketCompression || self.isDeliveringMessage {
            for id in connections { count(self.send(message, to: id), id) }
        } else if self.configuration.webSocketWriteDelay > .zero {
            var newlyHeld: [ConnectionID] = []
            self.sockets.forEachOpen(among: connections) { state in
                let (sent, held) = state.hold(message)
                if held { newlyHeld.append(state.id) }
                count(sent, state.id)
            }
            self.scheduleRelease(of: newlyHeld)
        } else {
            let framed = WebSocketFraming.framed(message)
            framed.withUnsafeBytes { framed in
                self.sockets.forEachOpen(among: connections) { state in
                    if state.writeNow(framed: framed) {
                        self.count(WebSocketState.Written(writes: 1, messages: 1, bytes: message.bytes.count))
                        result.queued += 1
                    } else {
                        count(state.enqueue(message), state.id)
                    }
                }
            }
        }
        return result
    }

    private func count(_ written: WebSocketState.Written) {
        self.statistics.bytesSent += UInt64(written.bytes)
        self.statistics.webSocketMessagesSent += UInt64(written.messages)
        self.statistics.webSocketWrites += UInt64(written.writes)
    }

    /// Releases the held messages of `ids` when the write delay has passed (one timer for all:
    /// the delay is the same for every connection, so releases fall due in order).
    private func scheduleRelease(of ids: [ConnectionID]) {
        guard !ids.isEmpty else { return }
        self.held.append((ContinuousClock.now + self.configuration.webSocketWriteDelay, ids))
        if self.held.count == 1 { self.armReleaseTimer(after: self.configuration.webSocketWriteDelay) }
    }

    private func armReleaseTimer(after delay: Duration) {
        self.loop.scheduleTimer(after: delay) { [weak self] in self?.releaseDue() }
    }

    private func releaseDue() {
        let now = ContinuousClock.now
        // libuv's timers count whole milliseconds from the turn's start: take what is due within one.
        while let first = self.held.first, first.due <= now + .milliseconds(1) {
            self.held.removeFirst()
            self.sockets.forEachOpen(among: first.ids) { state in
                self.count(state.release(buffer: self.writeBuffer))
            }
        }
        if let next = self.held.first { self.armReleaseTimer(after: next.due - now) }
    }

    public func close(_ connection: ConnectionID, code: WebSocketCloseCode, reason: String) {
        self.sockets[connection]?.close(code: code, reason: reason)
    }

    public func requestDrainNotice(for connection: ConnectionID) {
        self.sockets[connection]?.requestDrainNotice()
    }

    public func queuedBytes(of connection: ConnectionID) -> Int {
        self.sockets[connection]?.outbound.queuedBytes ?? self.secure?.connection(connection)?.queuedBytes ?? 0
    }

    @discardableResult
    public func discardQueued(of connection: ConnectionID, keeping keep: (WebSocketMessage) -> Bool) -> Int {
        self.sockets[connection]?.discardQueued(keeping: keep) ?? 0
    }
}
