import IsletCore

/// Encodes the server's stream messages, canonically (members sorted by key) and with every
/// revision number written exactly as an unsigned 64-bit integer.
enum StreamMessages {
    /// `{"ops":…,"rev":n,"type":"patch"}`, with `"simulation"` outside the `default` simulation,
    /// and with `"sub"` for a resumed subscription's missed patches. `encodedOps` is a JSON array.
    static func patch(rev: UInt64, encodedOps: [UInt8], simulation: String, sub: String? = nil) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: encodedOps.count + 48)
        writer.writeRaw("{\"ops\":")
        writer.writeEncoded(encodedOps)
        writer.writeRaw(",\"rev\":")
        writer.write(integer: rev)
        Self.writeSimulation(simulation, into: &writer)
        if let sub {
            writer.writeRaw(",\"sub\":")
            writer.write(string: sub)
        }
        writer.writeRaw(",\"type\":\"patch\"}")
        return writer.bytes
    }

    /// The JSON array of `ops`.
    static func encode(_ ops: [PatchOperation]) -> [UInt8] { ops.encoded }

    /// `{"epoch","path","reason"?,"rev","simulation"?,"sub","type":"snapshot","value"}`; `value`
    /// is written by `writeValue` (null when the path does not exist).
    static func snapshot(
        epoch: String, path: JSONPointer, reason: String?, rev: UInt64, simulation: String, sub: String,
        writeValue: (inout JSONWriter) -> Void
    ) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 1024)
        writer.writeRaw("{\"epoch\":")
        writer.write(string: epoch)
        writer.writeRaw(",\"path\":")
        writer.write(string: path.description)
        if let reason {
            writer.writeRaw(",\"reason\":")
            writer.write(string: reason)
        }
        writer.writeRaw(",\"rev\":")
        writer.write(integer: rev)
        Self.writeSimulation(simulation, into: &writer)
        writer.writeRaw(",\"sub\":")
        writer.write(string: sub)
        writer.writeRaw(",\"type\":\"snapshot\",\"value\":")
        writeValue(&writer)
        writer.writeRaw("}")
        return writer.bytes
    }

    /// `,"simulation":id`, except for the `default` simulation, whose messages stay as they
    /// were before there were several.
    private static func writeSimulation(_ simulation: String, into writer: inout JSONWriter) {
        guard simulation != SimulationName.default else { return }
        writer.writeRaw(",\"simulation\":")
        writer.write(string: simulation)
    }

    /// The first bytes of every snapshot message (slow-consumer discards use it).
    static let snapshotPrefix: [UInt8] = Array("{\"epoch\":".utf8)

    /// The first bytes of every patch message.
    static let patchPrefix: [UInt8] = Array("{\"ops\":".utf8)

    /// `{"id":…,"rev":n,"results":[…],"type":"ack"}`.
    static func ack(id: JSONValue, revision: Revision) -> [UInt8] {
        var writer = JSONWriter()
        writer.writeRaw("{\"id\":")
        writer.write(id)
        writer.writeRaw(",\"rev\":")
        writer.write(integer: revision.rev)
        writer.writeRaw(",\"results\":")
        writer.write(array: revision.results)
        writer.writeRaw(",\"type\":\"ack\"}")
        return writer.bytes
    }

    /// `{"resumed":true,"rev":n,"simulation"?,"sub":sid,"type":"subscribed"}`.
    static func subscribed(sub: String, since: UInt64, simulation: String) -> [UInt8] {
        var writer = JSONWriter()
        writer.writeRaw("{\"resumed\":true,\"rev\":")
        writer.write(integer: since)
        Self.writeSimulation(simulation, into: &writer)
        writer.writeRaw(",\"sub\":")
        writer.write(string: sub)
        writer.writeRaw(",\"type\":\"subscribed\"}")
        return writer.bytes
    }

    /// `{"sub":sid,"type":"unsubscribed"}`.
    static func unsubscribed(sub: String) -> [UInt8] {
        var writer = JSONWriter()
        writer.writeRaw("{\"sub\":")
        writer.write(string: sub)
        writer.writeRaw(",\"type\":\"unsubscribed\"}")
        return writer.bytes
    }

    /// `{"reason":r,"type":"resync"}`: every subscription of the connection gets a snapshot
    /// again; with `"simulation"`, only those in that simulation are concerned.
    static func resync(reason: String, simulation: String? = nil) -> [UInt8] {
        var writer = JSONWriter()
        writer.writeRaw("{\"reason\":")
        writer.write(string: reason)
        if let simulation {
            writer.writeRaw(",\"simulation\":")
            writer.write(string: simulation)
        }
        writer.writeRaw(",\"type\":\"resync\"}")
        return writer.bytes
    }

    /// `{"id":…,"type":"pong"}`.
    static func pong(id: JSONValue) -> [UInt8] {
        JSONValue.object(["type": "pong", "id": id]).encoded
    }
}

/// `{"epoch","path","rev","value"}` for `GET /v1/state`, with the exact revision.
func stateBody(epoch: String, path: JSONPointer, rev: UInt64, writeValue: (inout JSONWriter) -> Void) -> [UInt8] {
    var writer = JSONWriter(reservingCapacity: 1024)
    writer.writeRaw("{\"epoch\":")
    writer.write(string: epoch)
    writer.writeRaw(",\"path\":")
    writer.write(string: path.description)
    writer.writeRaw(",\"rev\":")
    writer.write(integer: rev)
    writer.writeRaw(",\"value\":")
    writeValue(&writer)
    writer.writeRaw("}")
    return writer.bytes
}

/// `{"result":…,"rev":n}` for resource routes.
func resultBody(rev: UInt64, result: JSONValue) -> [UInt8] {
    var writer = JSONWriter()
    writer.writeRaw("{\"result\":")
    writer.write(result)
    writer.writeRaw(",\"rev\":")
    writer.write(integer: rev)
    writer.writeRaw("}")
    return writer.bytes
}

/// `{"results":[…],"rev":n}` for `POST /v1/commands`.
func resultsBody(rev: UInt64, results: [JSONValue]) -> [UInt8] {
    var writer = JSONWriter()
    writer.writeRaw("{\"results\":")
    writer.write(array: results)
    writer.writeRaw(",\"rev\":")
    writer.write(integer: rev)
    writer.writeRaw("}")
    return writer.bytes
}
