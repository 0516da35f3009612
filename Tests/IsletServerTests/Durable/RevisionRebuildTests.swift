import Dispatch
import IsletCore
import IsletStore
import IsletTestSupport
import IsletTransport
import Testing

@testable import IsletServer

@Suite("Rebuilding a past revision for a fork")
struct RevisionRebuildTests {
    /// What the loop saw, written and read on the loop thread only.
    final class LoopRecord: @unchecked Sendable {
        var answered = false
        var ranMeanwhile = false
    }

    @Test(
        "a past revision is replayed off the loop: the loop runs other jobs while the replay waits, and the engine, the source's at that revision, comes back on the loop"
    )
    func offTheLoop() async throws {
        try await withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            var configuration = IsletConfiguration.testing(virtualClockStart: nil)
            configuration.store.path = path
            let atOne: [UInt8]
            let last: UInt64
            do {
                let node = try DurableServer(path: path, configuration: configuration)
                _ = try node.commit([Fixture.device, Fixture.app, Fixture.request("a1")])
                atOne = node.image.document
                _ = try node.commit([Fixture.update("a1", status: "brewing")])
                last = try node.commit([Fixture.update("a1", status: "onItsWay")])
                node.shutdown()
            }

            let loop = try EventLoop(name: "rebuild-test", logger: makeTestLogger())
            try loop.start()
            let replays = DispatchQueue(label: "islet.test.replays")
            replays.suspend()
            let stage = Unchecked(
                StoreCommitStage(
                    log: try CommandLog(path: path, logger: makeTestLogger()), settings: configuration.store,
                    threads: .writer(loop), lastSnapshot: (last, TestServer.start), logger: makeTestLogger(),
                    replays: replays))
            let record = LoopRecord()
            let (result, onLoop, loopRanMeanwhile) = await withCheckedContinuation {
                (continuation: CheckedContinuation<(Result<Engine, RevisionUnavailable>, Bool, Bool), Never>) in
                loop.execute {
                    stage.value.rebuild(at: 1) { result in
                        record.answered = true
                        continuation.resume(returning: (result, loop.inEventLoop, record.ranMeanwhile))
                    }
                    // A later job runs although the replay cannot (its queue is suspended).
                    loop.execute {
                        record.ranMeanwhile = !record.answered
                        replays.resume()
                    }
                }
            }
            #expect(loopRanMeanwhile, "the loop ran a job while the revision was being rebuilt")
            #expect(onLoop, "the engine comes back on the loop")
            let engine = try result.get()
            #expect(engine.rev == 1)
            #expect(engine.documentBytes == atOne, "the state of revision 1, byte for byte")

            let later = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                loop.execute {
                    stage.value.rebuild(at: last + 1) { result in
                        continuation.resume(returning: (try? result.get()) == nil)
                    }
                }
            }
            #expect(later, "a revision the log does not hold yet is unavailable")
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                loop.execute { stage.value.close(nil) { continuation.resume() } }
            }
            loop.execute { loop.stop() }
            #expect(await loop.terminated().isClean)
        }
    }
}
