import IsletCore
internal import Mustache

/// Converts a JSON context into the values swift-mustache walks: objects become
/// `[String: Any]` (null members dropped), arrays `[Any]`, numbers their canonical JSON text
/// (so 3 renders "3", not "3.0"), strings and booleans themselves.
///
/// Two helper members are added to every object that has a `state` member: `stateEntries`
/// (the state's members sorted by key as `{"key", "value"}`, values as text) for templates that
/// list the state, as the default one does.
func mustacheContext(_ value: JSONValue) -> Any {
    switch value {
    case .null: return ""
    case .bool(let flag): return flag
    case .number: return value.encodedString
    case .string(let text): return text
    case .array(let elements): return elements.map(mustacheContext)
    case .object(let object):
        var members: [String: Any] = [:]
        for member in object.members where member.value != .null {
            members[member.key] = mustacheContext(member.value)
        }
        if case .object(let state)? = object["state"] {
            members["stateEntries"] = state.members.map { member -> Any in
                MustacheObject(["key": member.key, "value": displayText(member.value)])
            }
        }
        return MustacheObject(members)
    }
}

/// An object of the context. A final class that conforms to `MustacheParent` directly, rather
/// than `[String: Any]` (whose conformance is conditional): swift-mustache casts every value it
/// looks up, and casts to a conditional conformance cost several times more.
final class MustacheObject: MustacheParent, @unchecked Sendable {
    private let members: [String: Any]

    init(_ members: [String: Any]) {
        self.members = members
    }

    func child(named name: String) -> Any? { self.members[name] }
}

/// How a JSON value reads in a fragment: strings as they are, anything else as JSON text.
func displayText(_ value: JSONValue) -> String {
    value.stringValue ?? value.encodedString
}

extension JSONValue {
    /// This object with `key` set to `value`; other values are returned unchanged.
    func setting(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var object) = self else { return self }
        object[key] = value
        return .object(object)
    }
}
