#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// `printf`-style text (`"%.2f"`) for the benchmark reports, as Foundation's `String(format:)`
    /// writes it: IsletServer does not import Foundation, and the reports must read as before.
    init(format: String, _ arguments: any CVarArg...) {
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        while true {
            length = Int(withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) })
            guard length >= buffer.count else { break }
            buffer = [CChar](repeating: 0, count: length + 1)
        }
        let bytes = buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
        self = String(decoding: bytes, as: UTF8.self)
    }
}
