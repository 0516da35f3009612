import CoreMetrics
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
    private let openWebSockets: CoreMetrics.Gauge
    private let openHTTPConnections: CoreMetrics.Gauge
    private var copied = TransportStatistics()

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        self.factory = PrometheusMetricsFactory(registry: registry)
        self.bytesReceived = CoreMetrics.Counter(label: "islet_bytes_received_total", factory: self.factory)
        self.bytesSent = CoreMetrics.Counter(label: "islet_bytes_sent_total", factory: self.factory)
        self.connectionsAccepted = CoreMetrics.Counter(label: "islet_connections_accepted_total", factory: self.factory)
        self.openWebSockets = CoreMetrics.Gauge(label: "islet_websocket_connections", factory: self.factory)
        self.openHTTPConnections = CoreMetrics.Gauge(label: "islet_http_connections", factory: self.factory)
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
    func render(transport statistics: TransportStatistics) -> [UInt8] {
        self.bytesReceived.increment(by: Int64(statistics.bytesReceived - self.copied.bytesReceived))
        self.bytesSent.increment(by: Int64(statistics.bytesSent - self.copied.bytesSent))
        self.connectionsAccepted.increment(by: Int64(statistics.connectionsAccepted - self.copied.connectionsAccepted))
        self.openWebSockets.record(statistics.openWebSockets)
        self.openHTTPConnections.record(statistics.openHTTPConnections)
        self.copied = statistics
        return self.registry.emitToBuffer()
    }
}
