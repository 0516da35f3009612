import Foundation

/// Finds the project's shared test data by walking up from this source file until a
/// `shared/testdata/<name>` directory appears (the repository may be a worktree anywhere below
/// the directory that holds `shared`). A clone elsewhere uses the repository's own copy of the
/// JSON Patch vectors, `Tests/Browser/fixtures/<name>` (unchanged; see its ORIGIN.md).
enum TestData {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static func directory(_ name: String, from file: String = #filePath) throws -> String {
        if let shared = self.above(file, "shared/testdata/\(name)") { return shared }
        if let copy = self.above(file, "Tests/Browser/fixtures/\(name)") { return copy }
        throw Missing(
            description: "no shared/testdata/\(name) above \(file); the shared material must sit beside the repository")
    }

    /// The first `relative` directory found in the directories above `file`.
    private static func above(_ file: String, _ relative: String) -> String? {
        var url = URL(fileURLWithPath: file).deletingLastPathComponent()
        while url.path != "/" {
            let candidate = url.appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), isDirectory.boolValue
            {
                return candidate.path
            }
            url = url.deletingLastPathComponent()
        }
        return nil
    }

    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Missing(description: "cannot read \(path)")
        }
        return [UInt8](data)
    }
}
