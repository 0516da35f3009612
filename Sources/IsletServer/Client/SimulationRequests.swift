public import IsletCore

/// What `islet sim` sends and prints: the bodies of `POST /v1/simulations` and a table of
/// `GET /v1/simulations`, built with Islet's own JSON so the CLI writes what the API documents.
public enum SimulationRequests {
    /// Whether `id` is a simulation id (`[a-z0-9-]{1,64}`), so it may go into a URL path.
    public static func isValidID(_ id: String) -> Bool { SimulationName.isValid(id) }

    /// The body of `POST /v1/simulations`; `from` forks that simulation (at `rev`, or its latest).
    public static func createBody(
        id: String?, virtualClock: String?, rate: Double?, wallClock: Bool, demo: Bool, from: String?, rev: UInt64?
    ) -> [UInt8] {
        var body = JSONObject()
        if let id { body["id"] = .string(id) }
        if wallClock {
            body["clock"] = ["mode": "wall"]
        } else if virtualClock != nil || rate != nil {
            var clock: JSONObject = ["mode": "virtual"]
            if let virtualClock { clock["now"] = .string(virtualClock) }
            if let rate { clock["rate"] = .number(rate) }
            body["clock"] = .object(clock)
        }
        if demo { body["demo"] = true }
        if let from {
            var source: JSONObject = ["simulation": .string(from)]
            if let rev { source["rev"] = .number(Double(rev)) }
            body["from"] = .object(source)
        }
        return JSONValue.object(body).encoded
    }

    /// `GET /v1/simulations` as an aligned table: id, rev, clock, subscribers, created.
    /// - Throws: `APIError` when the reply is not the documented list.
    public static func table(_ reply: [UInt8]) throws(APIError) -> String {
        guard let list = try JSONParser.stored.parse(reply)["simulations"]?.arrayValue else {
            throw APIError(.invalidJSON, "the reply has no \"simulations\" list")
        }
        var rows = [["ID", "REV", "CLOCK", "NOW", "SUBSCRIBERS", "CREATED"]]
        for simulation in list {
            let clock = simulation["clock"]
            let rate = clock?["rate"]?.numberValue.map { $0 == 1 ? "" : " ×\(formatted($0))" } ?? ""
            rows.append([
                simulation["id"]?.stringValue ?? "?", simulation["rev"]?.numberValue.map { formatted($0) } ?? "?",
                (clock?["mode"]?.stringValue ?? "?") + rate, clock?["now"]?.stringValue ?? "?",
                simulation["subscribers"]?.numberValue.map { formatted($0) } ?? "0",
                simulation["created"]?.stringValue ?? "?",
            ])
        }
        return aligned(rows)
    }

    /// Rows as a table: columns padded to their widest cell, two spaces apart.
    static func aligned(_ rows: [[String]]) -> String {
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { cell, width in cell + String(repeating: " ", count: width - cell.count) }
                .joined(separator: "  ").trimmingTrailingSpaces
        }.joined(separator: "\n")
    }

    /// The `id` of a `POST /v1/simulations` reply.
    public static func id(_ reply: [UInt8]) -> String? {
        (try? JSONParser.stored.parse(reply))?["id"]?.stringValue
    }

    /// The `epoch` of a `GET /v1/simulations/{id}` reply.
    public static func epoch(_ reply: [UInt8]) -> String? {
        (try? JSONParser.stored.parse(reply))?["epoch"]?.stringValue
    }

    /// The `error.message` of an API error reply, or the reply's text.
    public static func errorMessage(_ reply: [UInt8]) -> String {
        if let error = (try? JSONParser.stored.parse(reply))?["error"],
            let message = error["message"]?.stringValue
        {
            // `invalid_argument at /clock/rate: …`: the field names the option the body came from.
            let field = error["field"]?.stringValue.map { " at \($0)" } ?? ""
            return (error["code"]?.stringValue).map { "\($0)\(field): \(message)" } ?? message
        }
        return String(decoding: reply, as: UTF8.self)
    }

    private static func formatted(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
