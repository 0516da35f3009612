import IsletCore

/// The rules for a simulation's id (API.md "Simulations"): `[a-z0-9-]{1,64}`, so it is safe in a
/// URL path segment and as a file name.
enum SimulationName {
    /// The simulation that always exists: the unprefixed routes and the demo address it.
    static let `default` = "default"

    /// - Throws: `invalid_argument` at `field` when `name` breaks the rules.
    static func validate(_ name: String, field: JSONPointer) throws(APIError) {
        guard Self.isValid(name) else {
            throw APIError(
                .invalidArgument, "a simulation id is 1 to 64 of a-z, 0-9 and -, not \"\(name.prefix(80))\"",
                field: field)
        }
    }

    static func isValid(_ name: String) -> Bool {
        let bytes = name.utf8
        return (1...64).contains(bytes.count)
            && bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }
}
