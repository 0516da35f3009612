import Foundation

/// Finds the project's shared test data by walking up from this source file until a
/// `shared/testdata/<name>` directory appears (the repository may be a worktree anywhere below
/// the directory that holds `shared`).
enum TestData {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static func directory(_ name: String, from file: String = #filePath) throws -> String {
        var url = URL(fileURLWithPath: file).deletingLastPathComponent()
        while url.path != "/" {
            let candidate = url.appendingPathComponent("shared/testdata/\(name)")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), isDirectory.boolValue
            {
                return candidate.path
            }
            url = url.deletingLastPathComponent()
        }
        throw Missing(
            description: "no shared/testdata/\(name) above \(file); the shared material must sit beside the repository")
    }

    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Missing(description: "cannot read \(path)")
        }
        return [UInt8](data)
    }
}
