#if canImport(Glibc)
import Glibc
#endif

/// Raises the open-file soft limit to the hard limit (connections, log files) and returns the
/// new soft limit: what `islet serve` and the benchmarks do at start.
public func raiseOpenFileLimit() -> Int {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    return Int(limit.rlim_cur)
}

/// Writes one line to standard error, unbuffered: the CLI's messages.
public func printError(_ text: String) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
