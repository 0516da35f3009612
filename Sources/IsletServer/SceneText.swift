import IsletCore

/// `GET /v1/devices/{id}/scene?resolve=text`: the scene with each referenced presentation
/// inlined as plain text, for assertions.
///
/// Objects that name an `activity` gain `text` (the slots that presentation shows: compact
/// `{leading, trailing}`, minimal a string, expanded `{leading, trailing, center, bottom}`,
/// banner, Lock Screen and StandBy the Lock Screen slot). Lists of ids (`lockScreen.activities`,
/// `lockScreen.widgets`, `home.widgets`) become lists of `{"activity"|"widget": id, "text"}`;
/// `home.stacks` entries gain the top widget's `text`.
struct SceneText {
    let engine: Engine

    func resolve(_ scene: JSONValue) -> JSONValue {
        guard case .object(var object) = scene else { return scene }
        if case .object(var island)? = object["island"] {
            island["compact"] = self.inline(
                island["compact"], ["leading": "compactLeading", "trailing": "compactTrailing"])
            if case .array(let minimal)? = island["minimal"] {
                island["minimal"] = .array(minimal.map { self.inline($0, slot: "minimal") })
            }
            island["expanded"] = self.inline(
                island["expanded"],
                [
                    "leading": "expanded/leading", "trailing": "expanded/trailing", "center": "expanded/center",
                    "bottom": "expanded/bottom",
                ])
            object["island"] = .object(island)
        }
        object["banner"] = object["banner"].map { self.inline($0, slot: "lockScreen") }
        // PR-11: StandBy shows the Lock Screen presentation full screen, or the minimal one.
        object["standby"] = object["standby"].map {
            self.inline($0, slot: $0["view"] == "minimal" ? "minimal" : "lockScreen")
        }
        if case .object(var lock)? = object["lockScreen"] {
            lock["activities"] = self.expand(lock["activities"], kind: "activity")
            lock["widgets"] = self.expand(lock["widgets"], kind: "widget")
            object["lockScreen"] = .object(lock)
        }
        if case .object(var home)? = object["home"] {
            home["widgets"] = self.expand(home["widgets"], kind: "widget")
            if case .array(let stacks)? = home["stacks"] {
                home["stacks"] = .array(
                    stacks.map { entry in
                        guard case .object(var stack) = entry, let top = stack["top"]?.stringValue else { return entry }
                        stack["text"] = .string(self.widgetText(top))
                        return .object(stack)
                    })
            }
            object["home"] = .object(home)
        }
        return .object(object)
    }

    private func inline(_ value: JSONValue?, _ slots: [String: String]) -> JSONValue? {
        guard case .object(var object)? = value, let id = object["activity"]?.stringValue else { return value }
        object["text"] = .object(JSONObject(slots.map { ($0.key, .string(self.activityText(id, $0.value))) }))
        return .object(object)
    }

    private func inline(_ value: JSONValue, slot: String) -> JSONValue {
        guard case .object(var object) = value, let id = object["activity"]?.stringValue else { return value }
        object["text"] = .string(self.activityText(id, slot))
        return .object(object)
    }

    private func expand(_ value: JSONValue?, kind: String) -> JSONValue? {
        guard case .array(let ids)? = value else { return value }
        return .array(
            ids.map { element in
                guard let id = element.stringValue else { return element }
                let text = kind == "activity" ? self.activityText(id, "lockScreen") : self.widgetText(id)
                return [kind: .string(id), "text": .string(text)]
            })
    }

    private func activityText(_ id: String, _ slot: String) -> String {
        let pointer = JSONPointer(tokens: ["activities", id, "render"] + slot.split(separator: "/").map(String.init))
        return plainText(self.engine.value(at: pointer)?.stringValue ?? "")
    }

    private func widgetText(_ id: String) -> String {
        plainText(self.engine.value(at: JSONPointer(tokens: ["widgets", id, "render", "html"]))?.stringValue ?? "")
    }
}

/// HTML as plain text: tags removed (a tag boundary counts as a space), the common entities
/// decoded, runs of white space collapsed to one space, trimmed.
func plainText(_ html: String) -> String {
    var text = ""
    var inTag = false
    for character in html {
        if inTag {
            if character == ">" { inTag = false; text.append(" ") }
        } else if character == "<" {
            inTag = true
        } else {
            text.append(character)
        }
    }
    let entities = [
        ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&#x27;", "'"), ("&#x2F;", "/"),
        ("&#x3D;", "="), ("&#x60;", "`"), ("&nbsp;", " "), ("&amp;", "&"),
    ]
    for (entity, replacement) in entities { text = text.replacing(entity, with: replacement) }
    return text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
}
