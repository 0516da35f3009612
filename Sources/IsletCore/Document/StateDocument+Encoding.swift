/// Canonical bytes of the whole document, all at once or in chunks.
extension StateDocument {
    /// Writes the canonical encoding, handing bytes to `sink` whenever at least `chunkSize`
    /// bytes are ready (and once more at the end), so a large document never sits in memory twice.
    /// - Complexity: O(size of the document + k log k per section to sort keys).
    func write(
        chunkSize: Int, virtual: [VirtualSection], members: [VirtualMember] = [], to sink: ([UInt8]) throws -> Void
    ) rethrows {
        var writer = JSONWriter(reservingCapacity: chunkSize + 4096)
        writer.writeRaw("{")
        for (sectionIndex, section) in DocumentSection.allCases.enumerated() {
            if sectionIndex > 0 { writer.writeRaw(",") }
            writer.write(string: section.rawValue)
            writer.writeRaw(":{")
            let built = virtual.first { $0.section == section }
            let spliced = members.filter { $0.section == section }
            for (index, key) in (built?.keys() ?? self.sortedKeys(of: section)).enumerated() {
                if index > 0 { writer.writeRaw(",") }
                writer.write(string: key)
                writer.writeRaw(":")
                if let built {
                    writer.write(built.entry(key)!)
                } else if !spliced.isEmpty {
                    writer.write(spliced.reduce(self[section, key]!) { $1.splice($1.value(key), into: $0) })
                } else {
                    writer.write(self[section, key]!)
                }
                if writer.bytes.count >= chunkSize {
                    try sink(writer.bytes)
                    writer = JSONWriter(reservingCapacity: chunkSize + 4096)
                }
            }
            writer.writeRaw("}")
        }
        writer.writeRaw("}")
        try sink(writer.bytes)
    }

    /// The canonical encoding in one buffer.
    func encoded(virtual: [VirtualSection], members: [VirtualMember] = []) -> [UInt8] {
        var bytes: [UInt8] = []
        self.write(chunkSize: 1 << 20, virtual: virtual, members: members) { bytes.append(contentsOf: $0) }
        return bytes
    }
}
