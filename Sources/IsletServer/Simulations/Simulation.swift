import IsletCore

/// One isolated world in the server: its engine and command pipeline, its side of the stream
/// (history, groups) and its log. Worlds share the loop, the transport and the wall clock, and
/// nothing else: a revision, a clock step or a token of one never reaches another. Loop-confined.
final class Simulation {
    let id: String
    let live: LiveSimulation
    let stream: SimulationStream
    /// The wall instant it was created (the `default` simulation: when this process started).
    let created: Instant
    /// Its own admin and viewer tokens, when it was created with `"tokens": true`.
    let tokens: SimulationTokens?
    /// Until a fork's genesis snapshot is written: the simulation its log refers to.
    var pendingGenesisSource: String?
    /// A fork's genesis whose write failed (disk full…), kept to try again before its source is
    /// deleted.
    var unwrittenGenesis: Engine?
    /// Its provider keys as OpenSSL read them, and the provider tokens in use (APNs auth).
    var providerKeyring = ProviderKeyring()

    init(id: String, live: LiveSimulation, stream: SimulationStream, created: Instant, tokens: SimulationTokens?) {
        self.id = id
        self.live = live
        self.stream = stream
        self.created = created
        self.tokens = tokens
    }

    /// The published position.
    var position: StreamPosition { StreamPosition(epoch: self.live.epoch, revision: self.live.publishedRev) }

    /// The engine and stream history at the published revision (call when the pipeline is idle).
    func publishedState(wall: Instant) -> PublishedState {
        PublishedState(engine: self.live.engine, wall: wall, history: self.stream.history)
    }

    /// `{"id","epoch","rev","clock","created","subscribers","size"?}` as `GET /v1/simulations` lists it.
    func summary(bytes: Int64?) -> JSONValue {
        var object: JSONObject = [
            "id": .string(self.id), "epoch": .string(self.live.epoch), "rev": .number(Double(self.live.publishedRev)),
            "clock": self.live.engine.value(at: "/clock") ?? .null, "created": .string(self.created.rfc3339),
            "subscribers": .number(Double(self.stream.subscribers)),
        ]
        if let bytes { object["size"] = .number(Double(bytes)) }
        return .object(object)
    }
}

/// A simulation's own tokens: they reach that simulation only (its routes, its streams and the
/// APNs ingress into it), and only when the server requires tokens at all.
package struct SimulationTokens: Equatable {
    var admin: String
    var viewer: String

    /// Two new random tokens (32 hexadecimal digits each).
    static func random() -> SimulationTokens {
        SimulationTokens(admin: randomEpoch(), viewer: randomEpoch())
    }

    /// `{"admin","viewer"}`.
    var json: JSONValue { ["admin": .string(self.admin), "viewer": .string(self.viewer)] }
}
