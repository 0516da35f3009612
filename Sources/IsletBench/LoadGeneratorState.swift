import IsletServer
import IsletTransport
import Logging

/// The loop-confined state of a load generator: the delegate of the one client pool that runs
/// on the generator's own event loop. Starting and stopping that loop is the same for every
/// generator, so it lives here.
protocol LoadGeneratorState: WebSocketClientDelegate, Sendable {
    var pool: WebSocketClientPool? { get set }
}

extension LoadGeneratorState {
    /// Starts a loop named `name` and, on it, the client pool this state is the delegate of.
    func startLoop(name: String, compression: Bool = false, logger: Logger) async throws -> EventLoop {
        let loop = try EventLoop(name: name, logger: logger)
        try loop.start()
        do {
            try await loop.submit {
                self.pool = try WebSocketClientPool(loop: loop, logger: logger, compression: compression)
                self.pool?.delegate = self
            }
        } catch {
            loop.execute { loop.stop() }
            _ = await loop.terminated()
            throw error
        }
        return loop
    }

    /// Closes every connection, destroys the client context and stops `loop`. Returns whether
    /// the loop closed cleanly.
    func stop(_ loop: EventLoop) async -> Bool {
        loop.execute {
            guard let pool = self.pool else { return loop.stop() }
            pool.shutdown(gracePeriod: .seconds(5)) { loop.stop() }
        }
        return await loop.terminated().isClean
    }
}
