import IsletCore

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
        var dictionary: [String: Any] = [:]
        for member in object.members where member.value != .null {
            dictionary[member.key] = mustacheContext(member.value)
        }
        if case .object(let state)? = object["state"] {
            dictionary["stateEntries"] = state.members.map { member -> [String: Any] in
                ["key": member.key, "value": displayText(member.value)]
            }
        }
        return dictionary
    }
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
