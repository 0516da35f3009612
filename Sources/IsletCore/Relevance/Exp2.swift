/// 2^x, computed with integer-exponent scaling and a Taylor series, so that the engine needs no
/// C math library and gives the same bits on every platform (relevance decays use it).
/// - Complexity: O(1): 18 multiply-adds.
func exp2(_ x: Double) -> Double {
    if x.isNaN { return x }
    if x >= 1024 { return .infinity }
    if x < -1075 { return 0 }
    let whole = x.rounded()
    // e^(f ln 2) with |f| ≤ 0.5, so |y| ≤ 0.35 and 18 terms are exact to the last bit.
    let y = (x - whole) * 0.693_147_180_559_945_3
    var term = 1.0
    var sum = 1.0
    for k in 1...18 {
        term *= y / Double(k)
        sum += term
    }
    let exponent = Int(whole)
    if exponent < -1000 {
        // Two steps keep intermediate values normal.
        return sum * Double(sign: .plus, exponent: -1000, significand: 1)
            * Double(sign: .plus, exponent: exponent + 1000, significand: 1)
    }
    return sum * Double(sign: .plus, exponent: exponent, significand: 1)
}
