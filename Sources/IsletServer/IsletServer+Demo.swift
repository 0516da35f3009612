import IsletCore
import Logging

/// The built-in demo scenario: loaded at start when the configuration asks for it, then moved
/// along by `DemoDriver` from a repeating loop timer. Its commands go through the same pipeline
/// as any client's (committed, logged, published), so the demo is ordinary state.
extension IsletServer {
    /// How often `driveDemo()` should run.
    public static let demoInterval = Duration.milliseconds(Int64(DemoDriver.intervalSeconds * 1000))

    /// Applies the demo's setup batches if the configuration's `demo` policy asks for them.
    /// Must be called on the loop thread.
    public func loadDemoIfWanted() {
        switch self.configuration.demo {
        case .off: return
        case .ifEmpty where self.engine.rev != 0: return
        case .ifEmpty, .always: break
        }
        self.loadDemo(into: self.defaultSimulation)
    }

    /// Applies the demo's setup batches to `simulation` (`POST /v1/simulations` with `"demo": true`).
    func loadDemo(into simulation: Simulation) {
        let simulated = simulation.live.engine.simulatedInstant(atWall: self.now)
        self.submitDemo(DemoScenario.setupBatches(at: simulated), phase: "setup", to: simulation.live)
        self.logger.info(
            "demo scenario loaded", metadata: ["islet.sim": "\(simulation.id)", "islet.demo.at": "\(simulated.rfc3339)"])
    }

    /// Applies what the demo driver says is due now, in every simulation where the demo is
    /// loaded. Must be called on the loop thread.
    public func driveDemo() {
        guard !self.isShuttingDown else { return }
        for id in self.order {
            // In a cluster the node holding a world's clock drives its demo, once for all nodes.
            guard let live = self.simulations[id]?.live, live.sharedOrder?.holdsClock ?? true,
                DemoScenario.isLoaded(in: live.engine)
            else { continue }
            let simulated = live.engine.simulatedInstant(atWall: self.now)
            self.submitDemo(DemoDriver.batches(for: live.engine, at: simulated), phase: "driver", to: live)
        }
    }

    /// Submits each batch on its own: a refused one (an operator used up a limit) holds back
    /// nothing else, and the driver tries again at its next run.
    private func submitDemo(_ batches: [[JSONValue]], phase: String, to live: LiveSimulation) {
        let logger = self.logger
        for batch in batches {
            live.submit(batch) { result in
                guard case .failure(let error) = result else { return }
                logger.debug("demo batch refused", metadata: ["islet.demo.phase": "\(phase)", "error": "\(error)"])
            }
        }
    }
}
