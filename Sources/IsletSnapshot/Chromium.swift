import Foundation

/// Headless Chromium (Debian's `chromium`) run as a command, the way TOOLING.md's recipe does:
/// one run prints the DOM once the page has settled, another writes a screenshot. No DevTools
/// connection and no driver: the server and this tool keep no browser library.
public struct Chromium: Sendable {
    public var executable: String
    /// Large enough for the dashboard to lay every view of a device out at 100 % side by side
    /// without scrolling, so the box the page measures is where the screenshot shows it.
    public var windowWidth = 3200
    public var windowHeight = 2000
    /// Virtual milliseconds the page may run before Chromium reads it (Chromium waits for the
    /// network meanwhile).
    public var budgetMilliseconds = 3000
    /// Real seconds a run may take before it is stopped.
    public var timeoutSeconds = 60

    /// `executable`, else `$ISLET_CHROMIUM`, else Debian's `/usr/bin/chromium`.
    public init(executable: String? = nil) {
        self.executable = executable ?? ProcessInfo.processInfo.environment["ISLET_CHROMIUM"] ?? "/usr/bin/chromium"
    }

    /// The DOM of `url` after the budget.
    public func dumpDOM(_ url: String) throws -> String {
        String(decoding: try self.run(url: url, .dom), as: UTF8.self)
    }

    /// A screenshot of `url` after the budget, window-sized.
    public func screenshot(_ url: String) throws -> PNGImage {
        try PNGImage(png: try self.run(url: url, .screenshot))
    }

    /// What a run of Chromium returns: the DOM it prints, or the screenshot it writes.
    private enum Output {
        case dom
        case screenshot
    }

    /// Runs Chromium on `url` and returns `output`.
    ///
    /// The address is not on the command line, which every user of the machine can read
    /// (`ps`), since it may carry a token: Chromium opens a page in a directory only this user
    /// can enter (`mkdtemp`), which sends it on to `url`. The directory, with the profile and
    /// what Chromium wrote, is removed before returning.
    private func run(url: String, _ output: Output) throws -> [UInt8] {
        let files = FileManager.default
        var template = Array((files.temporaryDirectory.path + "/islet-chromium-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else {
            throw SnapshotError("cannot create a directory in \(files.temporaryDirectory.path)")
        }
        let directory = URL(
            fileURLWithPath: String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self))
        let screenshot = directory.appendingPathComponent("screenshot.png")
        defer { try? files.removeItem(at: directory) }
        let launcher = directory.appendingPathComponent("open.html")
        let page = "<!doctype html><meta charset=\"utf-8\"><script>location.replace(\(Self.scriptString(url)))</script>"
        guard files.createFile(atPath: launcher.path, contents: Data(page.utf8), attributes: [.posixPermissions: 0o600])
        else { throw SnapshotError("cannot create \(launcher.path)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: self.executable)
        process.arguments = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
            "--disable-extensions", "--no-first-run", "--disable-background-networking", "--mute-audio",
            // No morphs, rolls or cross-fades: the picture is the settled state, the same every run.
            "--force-prefers-reduced-motion",
            "--user-data-dir=\(directory.appendingPathComponent("profile").path)",
            "--window-size=\(self.windowWidth),\(self.windowHeight)",
            "--virtual-time-budget=\(self.budgetMilliseconds)",
            output == .dom ? "--dump-dom" : "--screenshot=\(screenshot.path)", launcher.absoluteString,
        ]
        // Output to a file: the wait below is bounded, and no thread has to drain a pipe.
        let outputFile = directory.appendingPathComponent("out")
        guard files.createFile(atPath: outputFile.path, contents: nil),
            let printed = FileHandle(forWritingAtPath: outputFile.path)
        else { throw SnapshotError("cannot create \(outputFile.path)") }
        defer { try? printed.close() }
        process.standardOutput = printed
        process.standardError = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do { try process.run() } catch {
            throw SnapshotError("cannot run \(self.executable): \(error.localizedDescription) (ISLET_CHROMIUM names it)")
        }
        // A page that never settles (a template redirecting the page, say) must not hang the CLI.
        guard exited.wait(timeout: .now() + .seconds(self.timeoutSeconds)) == .success else {
            process.terminate()
            if exited.wait(timeout: .now() + .seconds(5)) == .timedOut { kill(process.processIdentifier, SIGKILL) }
            throw SnapshotError("\(self.executable) did not finish within \(self.timeoutSeconds) s")
        }
        guard process.terminationStatus == 0 else {
            throw SnapshotError("\(self.executable) exited with status \(process.terminationStatus)")
        }
        switch output {
        case .dom: return [UInt8](files.contents(atPath: outputFile.path) ?? Data())
        case .screenshot:
            guard let png = files.contents(atPath: screenshot.path) else { throw SnapshotError("chromium wrote no screenshot") }
            return [UInt8](png)
        }
    }

    /// `text` as a JavaScript string literal inside a `<script>` element: every `<` escaped,
    /// so that neither `</script>` nor `<!--` can end or change the element.
    private static func scriptString(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed])) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
    }
}

/// Why a snapshot could not be taken.
public struct SnapshotError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One view of one device, rendered by the real dashboard and cropped to it.
public enum DashboardSnapshot {
    /// The dashboard's name of each view (`[data-view]`), by the CLI's name.
    public static let views = ["island": "island", "lockScreen": "lock", "standby": "standby", "home": "home"]

    /// Renders `view` of `device` from the dashboard at `baseURL` showing `simulation`.
    public static func render(
        baseURL: String, simulation: String, device: String, view: String, token: String?, chromium: Chromium
    ) throws -> PNGImage {
        guard let dashboardView = Self.views[view] else { throw SnapshotError("unknown view \(view)") }
        let query = [("simulation", simulation), ("device", device), ("snapshot", dashboardView), ("zoom", "100")]
        var url = baseURL + "/?" + query.map { "\($0)=\(Self.escaped($1))" }.joined(separator: "&")
        // In the fragment, which the browser never sends to the server (nor into its access log).
        if let token { url += "#token=" + Self.escaped(token) }
        let dom = try chromium.dumpDOM(url)
        guard let rect = Self.rect(in: dom) else {
            throw SnapshotError(
                "the dashboard never drew the \(view) of \(device) (is the device in simulation \(simulation)?)")
        }
        // Compared by subtraction: the numbers come from the page.
        guard rect[0] >= 0, rect[1] >= 0, rect[2] <= chromium.windowWidth - rect[0],
            rect[3] <= chromium.windowHeight - rect[1]
        else {
            let window = "\(chromium.windowWidth)×\(chromium.windowHeight)"
            throw SnapshotError("the \(view) lies outside Chromium's \(window) window")
        }
        return try chromium.screenshot(url).cropped(x: rect[0], y: rect[1], width: rect[2], height: rect[3])
    }

    /// `data-snapshot-rect="x y w h"` on the `<html>` element, written by
    /// Public/js/snapshot-mode.js (never one elsewhere in the page).
    static func rect(in dom: String) -> [Int]? {
        guard let html = dom.range(of: "<html") else { return nil }
        let tag = dom[html.upperBound...].prefix { $0 != ">" }
        guard let start = tag.range(of: "data-snapshot-rect=\"") else { return nil }
        let numbers = tag[start.upperBound...].prefix { $0 != "\"" }.split(separator: " ").compactMap { Int($0) }
        return numbers.count == 4 && numbers[2] > 0 && numbers[3] > 0 ? numbers : nil
    }

    private static func escaped(_ text: String) -> String {
        let unreserved = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~:"))
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}
