import IsletCore
import Testing

@testable import IsletServer

@Suite("Filtering and narrowing a revision's operations")
struct PatchFilterTests {
    static let entity: JSONValue = [
        "id": "a1", "render": ["minimal": "<b>1</b>", "lockScreen": "x"], "content": ["state": [:]],
    ]

    @Test("operations at or under a path are kept; a revision kept whole reuses its encoding")
    func kept() {
        let ops: [PatchOperation] = [.replace("/activities/a1/render/minimal", "m"), .replace("/clock/now", "t")]
        #expect(PatchFilter.filter(ops, paths: ["/activities", "/clock"], existed: { _ in true }) == .all)
        #expect(PatchFilter.filter(ops, paths: ["/activities/a1"], existed: { _ in true }) == .some([ops[0]]))
        #expect(PatchFilter.filter(ops, paths: ["/devices"], existed: { _ in true }) == .none)
    }

    @Test("an added entity reaches a deeper subscription as add of the sub-value")
    func narrowedAdd() {
        let ops: [PatchOperation] = [.add("/activities/a1", Self.entity)]
        #expect(
            PatchFilter.filter(ops, paths: ["/activities/a1/render"], existed: { _ in false })
                == .some([.add("/activities/a1/render", ["minimal": "<b>1</b>", "lockScreen": "x"])]))
        #expect(PatchFilter.filter(ops, paths: ["/activities/a1/alert"], existed: { _ in false }) == .none)
    }

    @Test("a replaced entity: replace when the sub-value existed, remove when it no longer does")
    func narrowedReplace() {
        let ops: [PatchOperation] = [.replace("/activities/a1", Self.entity)]
        #expect(
            PatchFilter.filter(ops, paths: ["/activities/a1/render/minimal"], existed: { _ in true })
                == .some([.replace("/activities/a1/render/minimal", "<b>1</b>")]))
        #expect(
            PatchFilter.filter(ops, paths: ["/activities/a1/alert"], existed: { _ in true })
                == .some([.remove("/activities/a1/alert")]))
    }

    @Test("nested subscriptions on one connection: removes before the operation, deepest first; adds after")
    func ordering() {
        let ops: [PatchOperation] = [.remove("/activities/a1")]
        #expect(
            PatchFilter.filter(
                ops, paths: ["/activities", "/activities/a1/render", "/activities/a1/render/minimal"],
                existed: { _ in true })
                == .some([
                    .remove("/activities/a1/render/minimal"), .remove("/activities/a1/render"),
                    .remove("/activities/a1"),
                ]))
        let add: [PatchOperation] = [.add("/activities/a1", Self.entity)]
        #expect(
            PatchFilter.filter(add, paths: ["/activities", "/activities/a1/render"], existed: { _ in false })
                == .some([add[0], .add("/activities/a1/render", ["minimal": "<b>1</b>", "lockScreen": "x"])]))
    }

    @Test("existence follows the operations within a revision")
    func existence() {
        let ops: [PatchOperation] = [.remove("/activities/a1"), .add("/activities/a1", Self.entity)]
        #expect(
            PatchFilter.filter(ops, paths: ["/activities/a1/render"], existed: { _ in true })
                == .some([
                    .remove("/activities/a1/render"),
                    .add("/activities/a1/render", ["minimal": "<b>1</b>", "lockScreen": "x"]),
                ]))
        #expect(PatchFilter.exists("/activities/a1/alert", after: ops, existedBefore: true) == false)
        #expect(PatchFilter.exists("/activities/a1/render", after: ops, existedBefore: nil) == true)
    }
}
