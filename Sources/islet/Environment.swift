import ArgumentParser
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The process environment, read once.
struct Environment {
    let values: [String: String]

    static var current: Environment {
        var values: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                values[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return Environment(values: values)
    }

    subscript(name: String) -> String? {
        guard let value = self.values[name], !value.isEmpty else { return nil }
        return value
    }

    /// A numeric variable, or nil when unset.
    /// - Throws: `ValidationError` when it is set but not a number.
    func number<T: LosslessStringConvertible>(_ name: String) throws -> T? {
        guard let text = self[name] else { return nil }
        guard let value = T(text) else { throw ValidationError("\(name) must be a number, not \(text)") }
        return value
    }

    /// A switch: `1` or `true` on, `0`, `false` or empty off, unset nil.
    /// - Throws: `ValidationError` for any other value (a `yes` must not quietly mean off).
    func flag(_ name: String) throws -> Bool? {
        guard let text = self[name] else { return nil }
        switch text.lowercased() {
        case "1", "true": return true
        case "0", "false", "": return false
        default: throw ValidationError("\(name) must be 1 or true (on), 0 or false (off), not \(text)")
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces.
    var trimmed: String { String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
}

/// A logger writing to standard error at `level`. Only the executable bootstraps logging.
func makeLogger(level: Logger.Level) -> Logger {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
    var logger = Logger(label: "islet")
    logger.logLevel = level
    return logger
}
