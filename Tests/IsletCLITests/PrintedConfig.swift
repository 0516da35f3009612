import IsletTestSupport
import Testing

/// The lines `islet serve --print-config` prints with these arguments and environment (it
/// must exit 0).
func printedServeConfig(_ arguments: [String], environment: [String: String] = [:]) throws -> [String] {
    let process = try IsletProcess(arguments: ["serve", "--print-config"] + arguments, environment: environment)
    var lines: [String] = []
    while let line = try process.readLine() { lines.append(line) }
    #expect(try process.waitForExit() == 0)
    return lines
}
