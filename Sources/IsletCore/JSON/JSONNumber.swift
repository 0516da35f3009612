/// A JSON number: a `Double` when a Double carries the value, else the exact decimal.
///
/// Apps put identifiers and counters in content states as Swift `Int64` or `UInt64`, beyond the
/// 2^53 where a Double stops holding every integer; AP-8 wants them back exactly, in the
/// document, patches, the log and pushes. Numbers are therefore exact decimal values:
/// - A Double stands for its exact value when it is an integer, and for its shortest round-trip
///   decimal otherwise (`0.1`), which is what the writer prints.
/// - A number that no Double stands for (`1795560793900123456`, more significant digits than a
///   Double keeps, a magnitude below its smallest) keeps its canonical decimal text instead.
///
/// Every value has exactly one representation, so equality and hashing are by value (`1`,
/// `1.0`, `1e0` and `-0` as `0` are equal, as RFC 6902's `test` wants) and every value has one
/// encoding. Integers are never written with an exponent. The engine computes with ``double``
/// (the nearest Double), so numbers it interprets (dates, scores, seconds) are read as before.
public struct JSONNumber: Sendable, Hashable {
    private enum Storage: Sendable, Hashable {
        case double(Double)
        /// The canonical text (see ``DecimalParts/canonicalText``) of a value no Double stands for.
        case exact(String)
    }

    private let storage: Storage

    /// The number a Double stands for.
    /// - Precondition: `value` is finite (JSON has no infinities or NaN).
    public init(_ value: Double) {
        precondition(value.isFinite, "JSON has no representation for \(value)")
        self.storage = .double(value)
    }

    /// The number a JSON number literal denotes, or `nil` when its magnitude is beyond a
    /// Double's (no type a device decodes content into holds it, and an integer of that size
    /// would be written as hundreds of digits).
    /// - Parameter literal: the bytes of a literal that is valid by RFC 8259's grammar.
    init?(literal: UnsafeBufferPointer<UInt8>) {
        guard let double = Double(String(decoding: literal, as: UTF8.self)), double.isFinite else { return nil }
        // Up to 15 significant digits (DBL_DIG) in the normal range round-trip through the
        // nearest Double, which below 2^53 prints them back: the common case, checked without
        // taking the literal apart.
        if isShortDecimal(literal) {
            self.storage = .double(double)
            return
        }
        guard let decimal = DecimalParts(literal: literal) else {
            // An exponent of more than 17 digits below zero: only the Double (0) is kept, as
            // earlier versions read it, so their logs replay.
            self.storage = .double(double)
            return
        }
        if DecimalParts(double) == decimal {
            self.storage = .double(double)
        } else {
            self.storage = .exact(decimal.canonicalText)
        }
    }

    /// The nearest Double: what the engine computes and validates with.
    public var double: Double {
        switch self.storage {
        case .double(let value): value
        // The text is canonical JSON that parsed to a finite Double.
        case .exact(let text): Double(text)!
        }
    }

    /// The value as an unsigned 64-bit integer, when it is exactly one (a revision number, of the
    /// whole range, not only the integers a Double holds); nil for a fraction, a negative or a
    /// larger value.
    public var uint64Value: UInt64? {
        switch self.storage {
        case .double(let value):
            return value >= 0 && value < 0x1p64 && value == value.rounded(.towardZero) ? UInt64(value) : nil
        case .exact(let text):
            return UInt64(text)  // an integer's canonical text is its plain digits
        }
    }

    /// Whether a Double holds the value exactly as the number denotes it.
    public var isDouble: Bool {
        if case .double = self.storage { return true }
        return false
    }

    /// Appends the canonical encoding: integers in plain digits, other Doubles in Swift's
    /// shortest round-trip form, exact values in their canonical text.
    func write(to bytes: inout [UInt8]) {
        switch self.storage {
        case .double(let value):
            if value == value.rounded(.towardZero) {
                writeInteger(value, to: &bytes)
            } else {
                bytes.append(contentsOf: value.description.utf8)
            }
        case .exact(let text):
            bytes.append(contentsOf: text.utf8)
        }
    }

    /// The length of ``write(to:)``'s output, counted without writing it when cheap.
    var encodedCount: Int {
        switch self.storage {
        case .double(let value) where value == value.rounded(.towardZero) && value.magnitude < 0x1p64:
            var magnitude = UInt64(value.magnitude)
            var count = value < 0 ? 2 : 1
            while magnitude >= 10 {
                magnitude /= 10
                count += 1
            }
            return count
        case .double(let value) where value != value.rounded(.towardZero):
            return value.description.utf8.count
        default:
            var bytes: [UInt8] = []
            self.write(to: &bytes)
            return bytes.count
        }
    }
}

extension JSONNumber: CustomStringConvertible {
    /// The canonical encoding, as the writer and Mustache print it.
    public var description: String {
        var bytes: [UInt8] = []
        self.write(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Whether a literal is zero, or has at most 15 significant digits with its first digit's
/// exponent in -307...14 (below 2^53), scanning it without allocating.
private func isShortDecimal(_ literal: UnsafeBufferPointer<UInt8>) -> Bool {
    var index = literal.first == UInt8(ascii: "-") ? 1 : 0
    var digits = 0
    var integerDigits: Int?
    var first = -1
    var last = -1
    while index < literal.count {
        let byte = literal[index]
        if byte == UInt8(ascii: ".") {
            integerDigits = digits
        } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            break
        } else {
            if byte != UInt8(ascii: "0") {
                if first < 0 { first = digits }
                last = digits
            }
            digits += 1
        }
        index += 1
    }
    guard first >= 0 else { return true }
    guard last - first < 15 else { return false }
    var exponent = 0
    if index < literal.count {
        index += 1
        let negative = literal[index] == UInt8(ascii: "-")
        if negative || literal[index] == UInt8(ascii: "+") { index += 1 }
        while index < literal.count {
            exponent = exponent * 10 + Int(literal[index] - UInt8(ascii: "0"))
            if exponent > 1000 { return false }
            index += 1
        }
        if negative { exponent = -exponent }
    }
    let scientific = (integerDigits ?? digits) - 1 - first + exponent
    return (-307...14).contains(scientific)
}

/// Writes an integral Double in plain decimal digits, however large (-0 as `0`).
private func writeInteger(_ value: Double, to bytes: inout [UInt8]) {
    if value < 0 { bytes.append(UInt8(ascii: "-")) }
    if value.magnitude < 0x1p64 {
        writeDigits(UInt64(value.magnitude), to: &bytes)
    } else {
        bytes.append(contentsOf: largeIntegerDigits(value.magnitude).utf8)
    }
}

/// Decimal digits of an integer, without building a string (the writer's hot path).
func writeDigits(_ value: UInt64, to bytes: inout [UInt8]) {
    var magnitude = value
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // up to 24 digits, written backwards
    var count = 0
    withUnsafeMutableBytes(of: &digits) { buffer in
        repeat {
            buffer[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            count += 1
        } while magnitude > 0
        bytes.append(contentsOf: buffer[(24 - count)...])
    }
}

/// The decimal digits of an integral Double of at least 2^64: its 53-bit significand shifted
/// left by its exponent, computed in base-10^9 limbs (at most 35 of them, below 2^1024).
private func largeIntegerDigits(_ magnitude: Double) -> String {
    let base: UInt64 = 1_000_000_000
    var significand = (1 << 52) | magnitude.significandBitPattern
    var limbs: [UInt64] = []  // least significant first, each below `base`
    while significand > 0 {
        limbs.append(significand % base)
        significand /= base
    }
    var shift = Int(magnitude.exponent) - 52
    while shift > 0 {
        let step = min(shift, 32)
        var carry: UInt64 = 0
        for index in limbs.indices {
            let value = limbs[index] << step + carry  // below 2^30 · 2^32 + 2^33
            limbs[index] = value % base
            carry = value / base
        }
        while carry > 0 {
            limbs.append(carry % base)
            carry /= base
        }
        shift -= step
    }
    var text = String(limbs[limbs.count - 1])
    for limb in limbs.dropLast().reversed() {
        let digits = String(limb)
        text += String(repeating: "0", count: 9 - digits.count) + digits
    }
    return text
}

/// A decimal value taken apart: ± `digits` × 10^`exponent`, the digits without leading or
/// trailing zeros (none for zero, which has no sign).
private struct DecimalParts: Equatable {
    var negative: Bool
    /// ASCII digits.
    var digits: [UInt8]
    var exponent: Int

    /// The exponent of the first digit: `d.ddd × 10^scientificExponent`.
    var scientificExponent: Int { self.exponent + self.digits.count - 1 }

    /// Takes apart a literal of RFC 8259's grammar; `nil` when its exponent has more than 17
    /// digits and the value is not zero.
    init?(literal: UnsafeBufferPointer<UInt8>) {
        var index = 0
        self.negative = literal.first == UInt8(ascii: "-")
        if self.negative { index += 1 }
        var digits: [UInt8] = []
        var fractionDigits = 0
        var inFraction = false
        while index < literal.count {
            let byte = literal[index]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                break
            } else {
                digits.append(byte)
                if inFraction { fractionDigits += 1 }
            }
            index += 1
        }
        var exponent = 0
        if index < literal.count {
            index += 1
            let exponentNegative = literal[index] == UInt8(ascii: "-")
            if literal[index] == UInt8(ascii: "-") || literal[index] == UInt8(ascii: "+") { index += 1 }
            while index < literal.count {
                exponent = exponent * 10 + Int(literal[index] - UInt8(ascii: "0"))
                if exponent > 99_999_999_999_999_999 { break }
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        self.digits = digits
        self.exponent = exponent - fractionDigits
        self.normalize()
        if exponent.magnitude > 99_999_999_999_999_999, !self.digits.isEmpty { return nil }
    }

    /// The value a finite Double stands for: its exact integer, or its shortest round-trip form.
    init(_ double: Double) {
        var bytes: [UInt8] = []
        if double == double.rounded(.towardZero) {
            writeInteger(double, to: &bytes)
        } else {
            bytes.append(contentsOf: double.description.utf8)
        }
        // Both forms are valid literals with short exponents.
        self = bytes.withUnsafeBufferPointer { DecimalParts(literal: $0)! }
    }

    private mutating func normalize() {
        let leading = self.digits.prefix { $0 == UInt8(ascii: "0") }.count
        self.digits.removeFirst(leading)
        let trailing = self.digits.reversed().prefix { $0 == UInt8(ascii: "0") }.count
        self.digits.removeLast(trailing)
        self.exponent += trailing
        if self.digits.isEmpty {
            self.negative = false
            self.exponent = 0
        }
    }

    /// One text per value: an integer in plain digits; other values in plain decimal from
    /// 0.0001 up, below that as `d.ddde-NN` (the forms Swift prints Doubles in).
    var canonicalText: String {
        let digits = String(decoding: self.digits, as: UTF8.self)
        let sign = self.negative ? "-" : ""
        let scientific = self.scientificExponent
        if self.exponent >= 0 {
            return sign + digits + String(repeating: "0", count: self.exponent)
        }
        if scientific >= 0 {
            let point = digits.index(digits.startIndex, offsetBy: scientific + 1)
            return sign + digits[..<point] + "." + digits[point...]
        }
        if scientific >= -4 {
            return sign + "0." + String(repeating: "0", count: -scientific - 1) + digits
        }
        let fraction = digits.count > 1 ? "." + digits.dropFirst() : ""
        let magnitude = String(-scientific)
        let exponent = magnitude.count < 2 ? "0" + magnitude : magnitude
        return sign + digits.prefix(1) + fraction + "e-" + exponent
    }
}
