import IsletCore
internal import Mustache

/// A Mustache template compiled for the subset Islet's templates use, rendered straight from
/// the JSON context: text, escaped variables (`{{a.b}}`, `{{.}}`), sections and inverted
/// sections, comments.
///
/// swift-mustache stays the parser and validator: the nodes here are read from the tokens it
/// parsed (standalone lines, whitespace and section bodies exactly as it decided them), through
/// reflection, once per template. Rendering then follows swift-mustache's rules on the values
/// ``mustacheContext(_:)`` would build, without building them: no `Any` boxes, no dynamic
/// casts, no name splitting per lookup. A template with anything else (transforms such as
/// `{{uppercased(x)}}`, or a token this reader does not know) has no compiled form, and
/// swift-mustache renders it, so output never depends on which path ran; a differential test
/// compares both over the built-in templates and random contexts.
struct CompiledMustache: Sendable {
    /// One compiled token.
    enum Node: Sendable {
        case text([UInt8])
        case variable(Path)
        case section(Path, [Node])
        case invertedSection(Path, [Node])
    }

    /// A variable name, split once.
    struct Path: Sendable {
        enum Scope: Sendable {
            /// The innermost context (`.`, or a name made only of dots).
            case current
            /// Resolved from the innermost context only (a name starting with `.`).
            case innermost
            /// The first key is looked up from the innermost context outwards.
            case stack
        }

        var scope: Scope
        var keys: [String]

        init(_ name: String) {
            // The same split as swift-mustache's `getChild`: empty pieces are dropped.
            self.keys = name.split(separator: ".").map(String.init)
            if name == "." || self.keys.isEmpty {
                self.scope = .current
            } else {
                self.scope = name.first == "." ? .innermost : .stack
            }
        }
    }

    let nodes: [Node]
    /// The bytes of the top-level text: what to reserve for the output.
    private let textBytes: Int
    /// What of a context rendering can show.
    let reads: ContextReads

    /// The compiled form of a parsed template, or `nil` when it uses anything outside the subset.
    init?(_ template: MustacheTemplate) {
        guard let nodes = Self.nodes(of: template) else { return nil }
        self.nodes = nodes
        self.textBytes = nodes.reduce(0) {
            if case .text(let bytes) = $1 { return $0 + bytes.count }
            return $0
        }
        var reads = ContextReads()
        Self.collectReads(nodes, into: &reads)
        self.reads = reads
    }

    /// A name's keys are looked up at any depth of the context (a section's object, or an
    /// outer one when the inner lacks the first key); a printed value is read whole, and so is
    /// `state` when `stateEntries` lists it. The current context (`{{.}}`) can be the root, so
    /// reading it reads everything.
    private static func collectReads(_ nodes: [Node], into reads: inout ContextReads) {
        func lookUp(_ path: Path, printed: Bool) {
            guard path.scope != .current else { return reads.readEverything() }
            for key in path.keys { reads.readMembers(of: key) }
            if printed, let last = path.keys.last { reads.readWhole(last) }
            if path.keys.contains("stateEntries") { reads.readWhole("state") }
        }
        for node in nodes {
            switch node {
            case .text: continue
            case .variable(let path): lookUp(path, printed: true)
            case .section(let path, let body), .invertedSection(let path, let body):
                lookUp(path, printed: false)
                self.collectReads(body, into: &reads)
            }
        }
    }

    /// Renders with `root` as the context (the value ``mustacheContext(_:)`` would convert).
    func render(_ root: JSONValue) -> String {
        // UTF-8 bytes, joined as swift-mustache joins its strings, made a string once.
        var output: [UInt8] = []
        output.reserveCapacity(self.textBytes + 64)
        var stack = [root]
        Self.render(self.nodes, &stack, into: &output)
        return String(decoding: output, as: UTF8.self)
    }
}

// MARK: - Reading swift-mustache's tokens

extension CompiledMustache {
    /// The tokens of a parsed template as nodes; `nil` for any token outside the subset.
    private static func nodes(of template: MustacheTemplate) -> [Node]? {
        guard let tokens = Mirror(reflecting: template).children.first(where: { $0.label == "tokens" })?.value,
            Mirror(reflecting: tokens).displayStyle == .collection
        else { return nil }
        var nodes: [Node] = []
        for token in Mirror(reflecting: tokens).children {
            guard let node = self.node(of: token.value) else { return nil }
            nodes.append(node)
        }
        return nodes
    }

    private static func node(of token: Any) -> Node? {
        let mirror = Mirror(reflecting: token)
        guard mirror.displayStyle == .enum, let payload = mirror.children.first, let kind = payload.label else {
            return nil
        }
        switch kind {
        case "text":
            return (payload.value as? String).map { Node.text(Array($0.utf8)) }
        case "variable":
            guard let (name, _) = self.nameAndTemplate(payload.value, withTemplate: false) else { return nil }
            return .variable(Path(name))
        case "section", "invertedSection":
            guard let (name, template) = self.nameAndTemplate(payload.value, withTemplate: true),
                let template, let body = self.nodes(of: template)
            else { return nil }
            return kind == "section" ? .section(Path(name), body) : .invertedSection(Path(name), body)
        default:
            // Unescaped variables, partials, blocks, content types: not in Islet's subset.
            return nil
        }
    }

    /// `(name:, transforms:, template:?)` with no transforms; `nil` otherwise.
    private static func nameAndTemplate(_ payload: Any, withTemplate: Bool) -> (String, MustacheTemplate?)? {
        var name: String?
        var transforms: [String]?
        var template: MustacheTemplate?
        for member in Mirror(reflecting: payload).children {
            switch member.label {
            case "name": name = member.value as? String
            case "transforms": transforms = member.value as? [String]
            case "template": template = member.value as? MustacheTemplate
            default: return nil
            }
        }
        guard let name, transforms?.isEmpty == true, withTemplate == (template != nil) else { return nil }
        return (name, template)
    }
}

// MARK: - Rendering

extension CompiledMustache {
    private static func render(_ nodes: [Node], _ stack: inout [JSONValue], into output: inout [UInt8]) {
        for node in nodes {
            switch node {
            case .text(let bytes):
                output += bytes
            case .variable(let path):
                if let value = self.resolve(path, in: stack) { self.append(value, to: &output) }
            case .section(let path, let body):
                guard let value = self.resolve(path, in: stack) else { continue }
                switch value {
                case .array(let elements):
                    for element in elements {
                        stack.append(element)
                        self.render(body, &stack, into: &output)
                        stack.removeLast()
                    }
                case .bool(let flag):
                    if flag { self.render(body, &stack, into: &output) }
                default:
                    stack.append(value)
                    self.render(body, &stack, into: &output)
                    stack.removeLast()
                }
            case .invertedSection(let path, let body):
                switch self.resolve(path, in: stack) {
                case nil, .bool(false)?:
                    self.render(body, &stack, into: &output)
                case .array(let elements)? where elements.isEmpty:
                    stack.append(.array(elements))
                    self.render(body, &stack, into: &output)
                    stack.removeLast()
                default:
                    break
                }
            }
        }
    }

    /// swift-mustache's lookup: the first key from the innermost context that has it outwards
    /// (or from the innermost only), the rest inside what it found; `nil` when absent.
    private static func resolve(_ path: Path, in stack: [JSONValue]) -> JSONValue? {
        var found: JSONValue
        switch path.scope {
        case .current:
            return stack[stack.count - 1]
        case .innermost:
            guard let child = self.child(path.keys[0], of: stack[stack.count - 1]) else { return nil }
            found = child
        case .stack:
            var frame = stack.count - 1
            while true {
                if let child = self.child(path.keys[0], of: stack[frame]) {
                    found = child
                    break
                }
                guard frame > 0 else { return nil }
                frame -= 1
            }
        }
        var index = 1
        while index < path.keys.count {
            guard let child = self.child(path.keys[index], of: found) else { return nil }
            found = child
            index += 1
        }
        return found
    }

    /// A member as ``mustacheContext(_:)`` exposes it: objects drop null members and gain
    /// `stateEntries` when they have an object `state`; nothing else has members.
    private static func child(_ key: String, of value: JSONValue) -> JSONValue? {
        guard case .object(let object) = value else { return nil }
        if key == "stateEntries", case .object(let state)? = object["state"] {
            return .array(
                state.members.map { .object(["key": .string($0.key), "value": .string(displayText($0.value))]) })
        }
        guard let member = object[key] else { return nil }
        if case .null = member { return nil }
        return member
    }

    /// `{{value}}`: the text swift-mustache writes for the converted value, HTML-escaped.
    private static func append(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .null: break
        case .bool(let flag): output += flag ? Self.trueBytes : Self.falseBytes
        case .string(let text): appendEscaped(text, to: &output)
        case .number: appendEscaped(value.encodedString, to: &output)
        case .array, .object: appendEscaped(String(describing: mustacheContext(value)), to: &output)
        }
    }
}

extension CompiledMustache {
    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
}

/// HTML-escapes `text` onto `output`: every `<`, `>`, `&`, `"` and `'` byte is replaced.
///
/// Byte by byte on purpose, not per character (grapheme cluster) as swift-mustache does: a
/// browser tokenizes code points, so a `"` that a combining mark joins into one character still
/// ends an attribute value. The five are ASCII and never occur inside a multi-byte sequence.
func appendEscaped(_ text: String, to output: inout [UInt8]) {
    var text = text
    text.withUTF8 { buffer in
        var start = 0
        for index in 0..<buffer.count {
            guard let replacement = asciiEscape(buffer[index]) else { continue }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<index]))
            output += replacement
            start = index + 1
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
    }
}

private func asciiEscape(_ byte: UInt8) -> [UInt8]? {
    switch byte {
    case 0x26: escapes.amp
    case 0x3C: escapes.lt
    case 0x3E: escapes.gt
    case 0x22: escapes.quot
    case 0x27: escapes.apos
    default: nil
    }
}

private let escapes = (
    amp: Array("&amp;".utf8), lt: Array("&lt;".utf8), gt: Array("&gt;".utf8), quot: Array("&quot;".utf8),
    apos: Array("&#39;".utf8)
)
