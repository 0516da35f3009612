import CoreMetrics
import IsletCore
import IsletTransport
import Prometheus

/// The server's metrics, on a Prometheus registry given to it (never the global
/// `MetricsSystem`, which can be bootstrapped only once per process).
///
/// Transport byte counts are copied from `TransportStatistics` when `/metrics` is rendered,
/// so nothing is counted per message on the hot path.
final class ServerMetrics {
    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private var requestCounters: [String: CoreMetrics.Counter] = [:]
    private let bytesReceived: CoreMetrics.Counter
    private let bytesSent: CoreMetrics.Counter
    private let connectionsAccepted: CoreMetrics.Counter
    private let webSocketMessagesSent: CoreMetrics.Counter
    private let webSocketWrites: CoreMetrics.Counter
    private let openWebSockets: CoreMetrics.Gauge
    private let openHTTPConnections: CoreMetrics.Gauge
    private let simulations: CoreMetrics.Gauge
    private var copied = TransportStatistics()
    private let patchFrames: CoreMetrics.Counter
    private let snapshots: CoreMetrics.Counter
    private let resyncs: CoreMetrics.Counter
    private let slowCloses: CoreMetrics.Counter
    private var copiedStream = StreamHub.Counters()
    private let commits: CoreMetrics.Counter
    private let committedRecords: CoreMetrics.Counter
    private let commitTime: CoreMetrics.Timer
    private let commandRevisions: CoreMetrics.Counter
    private let clockRevisions: CoreMetrics.Counter
    /// Refusals by the cap that made them (`APIError.limit`, and `connections`).
    private var limitRefusals: [String: CoreMetrics.Counter] = [:]
    private let retiredTokensEvicted: CoreMetrics.Counter
    private let pushesCoalesced: CoreMetrics.Counter
    private let throttledDropped: CoreMetrics.Counter
    private let deferredDropped: CoreMetrics.Counter

    /// The caps whose refusals are counted, shown from the start (at 0).
    static let limits = [
        "apps", "channels", "connections", "devices", "provider_keys", "simulations", "subscriptions", "templates",
        "widgets",
    ]

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        self.factory = PrometheusMetricsFactory(registry: registry)
        self.bytesReceived = CoreMetrics.Counter(label: "islet_bytes_received_total", factory: self.factory)
        self.bytesSent = CoreMetrics.Counter(label: "islet_bytes_sent_total", factory: self.factory)
        self.connectionsAccepted = CoreMetrics.Counter(label: "islet_connections_accepted_total", factory: self.factory)
        self.webSocketMessagesSent = CoreMetrics.Counter(
            label: "islet_websocket_messages_sent_total", factory: self.factory)
        self.webSocketWrites = CoreMetrics.Counter(label: "islet_websocket_writes_total", factory: self.factory)
        self.openWebSockets = CoreMetrics.Gauge(label: "islet_websocket_connections", factory: self.factory)
        self.openHTTPConnections = CoreMetrics.Gauge(label: "islet_http_connections", factory: self.factory)
        self.simulations = CoreMetrics.Gauge(label: "islet_simulations", factory: self.factory)
        self.patchFrames = CoreMetrics.Counter(label: "islet_stream_patch_frames_total", factory: self.factory)
        self.snapshots = CoreMetrics.Counter(label: "islet_stream_snapshots_total", factory: self.factory)
        self.resyncs = CoreMetrics.Counter(label: "islet_stream_resyncs_total", factory: self.factory)
        self.slowCloses = CoreMetrics.Counter(label: "islet_stream_slow_consumer_closes_total", factory: self.factory)
        self.commits = CoreMetrics.Counter(label: "islet_store_commits_total", factory: self.factory)
        self.committedRecords = CoreMetrics.Counter(label: "islet_store_records_total", factory: self.factory)
        self.commitTime = CoreMetrics.Timer(label: "islet_store_commit_seconds", factory: self.factory)
        self.commandRevisions = CoreMetrics.Counter(
            label: "islet_revisions_total", dimensions: [("cause", "commands")], factory: self.factory)
        self.clockRevisions = CoreMetrics.Counter(
            label: "islet_revisions_total", dimensions: [("cause", "clock")], factory: self.factory)
        self.retiredTokensEvicted = CoreMetrics.Counter(
            label: "islet_retired_tokens_evicted_total", factory: self.factory)
        self.pushesCoalesced = CoreMetrics.Counter(label: "islet_pushes_coalesced_total", factory: self.factory)
        self.throttledDropped = CoreMetrics.Counter(
            label: "islet_held_pushes_dropped_total", dimensions: [("queue", "throttled")], factory: self.factory)
        self.deferredDropped = CoreMetrics.Counter(
            label: "islet_held_pushes_dropped_total", dimensions: [("queue", "deferred")], factory: self.factory)
        for limit in Self.limits { _ = self.limitCounter(limit) }
    }

    /// Revisions published, by what made them: accepted commands, or the clock reaching
    /// scheduled transitions.
    func published(_ records: [RevisionRecord]) {
        for record in records {
            if case .tick = record.cause { self.clockRevisions.increment() } else { self.commandRevisions.increment() }
        }
    }

    /// Counts a refusal by one of Islet's caps (an error without `limit` is not one).
    func refused(_ error: APIError) {
        guard let limit = error.limit else { return }
        self.limitCounter(limit).increment()
    }

    /// Counts what committed revisions let go of to stay within the engine's bounds.
    func discarded(_ records: [RevisionRecord]) {
        for record in records where !record.revision.discards.isEmpty {
            let discards = record.revision.discards
            self.retiredTokensEvicted.increment(by: Int64(discards.retiredTokens))
            self.pushesCoalesced.increment(by: Int64(discards.coalescedPushes))
            self.throttledDropped.increment(by: Int64(discards.droppedThrottled))
            self.deferredDropped.increment(by: Int64(discards.droppedDeferred))
        }
    }

    private func limitCounter(_ limit: String) -> CoreMetrics.Counter {
        if let counter = self.limitRefusals[limit] { return counter }
        let counter = CoreMetrics.Counter(
            label: "islet_limit_refusals_total", dimensions: [("limit", limit)], factory: self.factory)
        self.limitRefusals[limit] = counter
        return counter
    }

    /// One group commit (a loop turn's revisions) completed.
    func committed(_ records: Int, in duration: Duration) {
        self.commits.increment()
        self.committedRecords.increment(by: Int64(records))
        let (seconds, attoseconds) = duration.components
        self.commitTime.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Counts one answered request by route pattern and status.
    func requestAnswered(route: String, status: Int) {
        let key = "\(route) \(status)"
        if let counter = self.requestCounters[key] { return counter.increment() }
        let counter = CoreMetrics.Counter(
            label: "islet_http_requests_total", dimensions: [("route", route), ("status", "\(status)")],
            factory: self.factory)
        self.requestCounters[key] = counter
        counter.increment()
    }

    /// The Prometheus text exposition, after copying the transport's counters.
    func render(transport statistics: TransportStatistics, stream: StreamHub.Counters, simulations: Int) -> [UInt8] {
        self.simulations.record(simulations)
        self.patchFrames.increment(by: Int64(stream.patchFrames - self.copiedStream.patchFrames))
        self.snapshots.increment(by: Int64(stream.snapshots - self.copiedStream.snapshots))
        self.resyncs.increment(by: Int64(stream.resyncs - self.copiedStream.resyncs))
        self.slowCloses.increment(by: Int64(stream.slowConsumerCloses - self.copiedStream.slowConsumerCloses))
        self.copiedStream = stream
        self.bytesReceived.increment(by: Int64(statistics.bytesReceived - self.copied.bytesReceived))
        self.bytesSent.increment(by: Int64(statistics.bytesSent - self.copied.bytesSent))
        self.connectionsAccepted.increment(by: Int64(statistics.connectionsAccepted - self.copied.connectionsAccepted))
        self.webSocketMessagesSent.increment(
            by: Int64(statistics.webSocketMessagesSent - self.copied.webSocketMessagesSent))
        self.webSocketWrites.increment(by: Int64(statistics.webSocketWrites - self.copied.webSocketWrites))
        self.limitCounter("connections").increment(
            by: Int64(statistics.connectionRefusals - self.copied.connectionRefusals))
        self.openWebSockets.record(statistics.openWebSockets)
        self.openHTTPConnections.record(statistics.openHTTPConnections)
        self.copied = statistics
        return self.registry.emitToBuffer()
    }
}
