public import IsletCore

/// One line of a scenario file (JSON Lines, `islet store export` / `import`, `serve --replay`):
/// `{"at": "<RFC 3339>", "commands": [ … ]}`.
///
/// - `at` is the **simulated** instant at which the line takes effect: the `/clock/now` the
///   batch's commands see. Simulated instants do not depend on when a harness ran, so a scenario
///   recorded on a paused virtual clock exports the same file every time.
/// - `commands` is the batch, exactly as the server applied it. An empty array is a clock step:
///   the clock ran to `at` and scheduled transitions fired (a `tick` revision).
public struct ScenarioLine: Sendable, Equatable {
    public var at: Instant
    public var commands: [JSONValue]

    public init(at: Instant, commands: [JSONValue]) {
        self.at = at
        self.commands = commands
    }

    /// True for a clock step (`"commands": []`).
    public var isClockStep: Bool { self.commands.isEmpty }

    /// The line's canonical bytes, without the newline.
    public var encoded: [UInt8] {
        JSONValue.object(["at": .string(self.at.rfc3339), "commands": .array(self.commands)]).encoded
    }

    /// Parses one line.
    /// - Throws: `APIError` (`invalid_json` or `invalid_argument` naming the member).
    public init(parsing bytes: some Collection<UInt8>) throws(APIError) {
        guard case .object(let object) = try JSONParser.stored.parse(bytes) else {
            throw APIError(.invalidArgument, "a scenario line is a JSON object {\"at\", \"commands\"}")
        }
        for key in object.keys where key != "at" && key != "commands" {
            throw APIError(.invalidArgument, "unknown member \"\(key)\"", field: JSONPointer(tokens: [key]))
        }
        guard let text = object["at"]?.stringValue else {
            throw APIError(.invalidArgument, "\"at\" must be an RFC 3339 date", field: "/at")
        }
        guard let commands = object["commands"]?.arrayValue else {
            throw APIError(.invalidArgument, "\"commands\" must be an array", field: "/commands")
        }
        do {
            self.at = try Instant(rfc3339: text)
        } catch {
            throw APIError(.invalidArgument, "\"at\" must be an RFC 3339 date: \(error.message)", field: "/at")
        }
        self.commands = commands
    }
}

/// A scenario file that cannot be exported or imported, with the line (1-based) at fault when
/// there is one.
public struct ScenarioError: Error, Sendable, CustomStringConvertible {
    public let line: Int?
    public let message: String

    public init(line: Int? = nil, _ message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { self.line.map { "line \($0): \(self.message)" } ?? self.message }
}
