/// A QR code (ISO/IEC 18004) of some bytes, for the console's TOTP enrollment: byte mode, error correction level M
/// (15 % of the code may be damaged), versions 1 to 15 (up to 412 bytes; an `otpauth://` URI is about 120), the mask
/// with the lowest penalty. Written here because no QR encoder is among the packages the project may use; the tests
/// prove it with an independent decoder (ZBar reads every generated code from a rendering of its SVG).
struct QRCode: Sendable, Equatable {
    /// The symbol's version (1-15): its size is 17 + 4 × version modules.
    let version: Int
    /// The mask pattern chosen (0-7).
    let mask: Int
    /// `size` × `size` modules, row by row; true is dark.
    private(set) var modules: [Bool]
    /// Modules per side.
    var size: Int { 17 + 4 * version }

    /// The code for `bytes`; nil when they do not fit in version 15.
    init?(bytes: [UInt8]) {
        guard let version = (1...15).first(where: { Self.dataCapacity(version: $0) >= Self.encodedLength(bytes.count, version: $0) }) else {
            return nil
        }
        let codewords = Self.codewords(bytes, version: version)
        var best: QRCode?
        var bestPenalty = Int.max
        for mask in 0..<8 {
            var symbol = QRCode(version: version, mask: mask, modules: [])
            symbol.draw(codewords)
            let penalty = symbol.penalty()
            if penalty < bestPenalty {
                bestPenalty = penalty
                best = symbol
            }
        }
        guard let best else { return nil }
        self = best
    }

    /// The code for `text`'s UTF-8 bytes.
    init?(text: String) { self.init(bytes: Array(text.utf8)) }

    private init(version: Int, mask: Int, modules: [Bool]) {
        self.version = version
        self.mask = mask
        self.modules = modules
    }

    /// Whether the module at column `x`, row `y` is dark.
    subscript(x: Int, y: Int) -> Bool { modules[y * size + x] }

    /// The code as an SVG image: one path of dark modules on white with the 4-module quiet zone the standard asks for,
    /// `pixelsPerModule` screen pixels per module. No script, no style: only presentation attributes, so a strict
    /// Content-Security-Policy allows it inline.
    func svg(pixelsPerModule: Int = 4, label: String) -> String {
        let quiet = 4
        let side = size + 2 * quiet
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard self[x, y] else {
                    x += 1
                    continue
                }
                var run = 1
                while x + run < size, self[x + run, y] { run += 1 }
                path += "M\(x + quiet) \(y + quiet)h\(run)v1h-\(run)z"
                x += run
            }
        }
        let pixels = side * pixelsPerModule
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(pixels)" height="\(pixels)" \
            shape-rendering="crispEdges" role="img" aria-label="\(Self.attribute(label))">\
            <rect width="\(side)" height="\(side)" fill="#fff"/><path d="\(path)" fill="#000"/></svg>
            """
    }

    // MARK: Capacity and codewords

    /// Error correction codewords per block and the blocks' data codewords (level M), by version.
    private static let blocks: [(ecPerBlock: Int, dataPerBlock: [Int])] = [
        (10, [16]),
        (16, [28]),
        (26, [44]),
        (18, [32, 32]),
        (24, [43, 43]),
        (16, [27, 27, 27, 27]),
        (18, [31, 31, 31, 31]),
        (22, [38, 38, 39, 39]),
        (22, [36, 36, 36, 37, 37]),
        (26, [43, 43, 43, 43, 44]),
        (30, [50, 51, 51, 51, 51]),
        (22, [36, 36, 36, 36, 36, 36, 37, 37]),
        (22, [37, 37, 37, 37, 37, 37, 37, 37, 38]),
        (24, [40, 40, 40, 40, 41, 41, 41, 41, 41]),
        (24, [41, 41, 41, 41, 41, 42, 42, 42, 42, 42]),
    ]

    /// Data codewords at level M.
    static func dataCapacity(version: Int) -> Int { blocks[version - 1].dataPerBlock.reduce(0, +) }

    /// Codewords the symbol holds in all (data and error correction), from its geometry.
    static func totalCodewords(version: Int) -> Int {
        var modules = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            modules -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { modules -= 36 }
        }
        return modules / 8
    }

    /// Error correction codewords at level M.
    static func errorCorrectionCodewords(version: Int) -> Int { blocks[version - 1].ecPerBlock * blocks[version - 1].dataPerBlock.count }

    /// Codewords that `count` bytes take in byte mode: the mode, the count (8 bits before version 10, 16 from it), the
    /// bytes.
    private static func encodedLength(_ count: Int, version: Int) -> Int {
        let countBits = version < 10 ? 8 : 16
        guard count < 1 << countBits else { return Int.max }
        return (4 + countBits + 8 * count + 7) / 8
    }

    /// The data with padding, split in blocks, each followed by its Reed-Solomon codewords, interleaved.
    private static func codewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        var bits = BitWriter()
        bits.append(0b0100, count: 4)
        bits.append(bytes.count, count: version < 10 ? 8 : 16)
        for byte in bytes { bits.append(Int(byte), count: 8) }
        let capacity = dataCapacity(version: version)
        bits.append(0, count: min(4, capacity * 8 - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var data = bits.bytes
        var pad: UInt8 = 0xEC
        while data.count < capacity {
            data.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        let layout = blocks[version - 1]
        let generator = ReedSolomon.generator(degree: layout.ecPerBlock)
        var dataBlocks: [[UInt8]] = []
        var start = 0
        for length in layout.dataPerBlock {
            dataBlocks.append(Array(data[start..<start + length]))
            start += length
        }
        let ecBlocks = dataBlocks.map { ReedSolomon.remainder($0, generator: generator) }
        var result: [UInt8] = []
        for index in 0..<(layout.dataPerBlock.max() ?? 0) {
            for block in dataBlocks where index < block.count { result.append(block[index]) }
        }
        for index in 0..<layout.ecPerBlock {
            for block in ecBlocks { result.append(block[index]) }
        }
        return result
    }

    // MARK: Drawing

    /// Draws the function patterns, the codewords and the format and version information with `mask`.
    private mutating func draw(_ codewords: [UInt8]) {
        modules = Array(repeating: false, count: size * size)
        var reserved = Array(repeating: false, count: size * size)
        func set(_ x: Int, _ y: Int, _ dark: Bool) {
            modules[y * size + x] = dark
            reserved[y * size + x] = true
        }
        // Timing patterns, then the finders with their separators over them.
        for i in 0..<size {
            set(6, i, i % 2 == 0)
            set(i, 6, i % 2 == 0)
        }
        for (cx, cy) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 {
                    let x = cx + dx
                    let y = cy + dy
                    guard (0..<size).contains(x), (0..<size).contains(y) else { continue }
                    let distance = max(abs(dx), abs(dy))
                    set(x, y, distance != 2 && distance != 4)
                }
            }
        }
        // Alignment patterns, except where they would overlap a finder.
        let centres = Self.alignmentCentres(version: version)
        for (i, cy) in centres.enumerated() {
            for (j, cx) in centres.enumerated() {
                let last = centres.count - 1
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dy in -2...2 {
                    for dx in -2...2 { set(cx + dx, cy + dy, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        // Format information (reserved now, written after masking), the dark module and the version information.
        drawFormat(set)
        if version >= 7 {
            let bits = Self.versionBits(version)
            for i in 0..<18 {
                let dark = (bits >> i) & 1 == 1
                let a = size - 11 + i % 3
                let b = i / 3
                set(a, b, dark)
                set(b, a, dark)
            }
        }
        // The codewords, two columns at a time from the bottom right, upwards then downwards, skipping the timing column.
        var bitIndex = 0
        let totalBits = codewords.count * 8
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for column in 0..<2 {
                    let x = right - column
                    let upward = ((right + 1) & 2) == 0
                    let y = upward ? size - 1 - vertical : vertical
                    guard !reserved[y * size + x] else { continue }
                    var dark = false
                    if bitIndex < totalBits {
                        dark = (codewords[bitIndex >> 3] >> (7 - (bitIndex & 7))) & 1 == 1
                        bitIndex += 1
                    }
                    if Self.masked(mask, x: x, y: y) { dark.toggle() }
                    modules[y * size + x] = dark
                }
            }
            right -= 2
        }
        drawFormat { x, y, dark in modules[y * size + x] = dark }
    }

    /// The 15 format bits (level M, `mask`) in both their places, and the dark module.
    private func drawFormat(_ set: (Int, Int, Bool) -> Void) {
        let data = mask  // Level M is 00.
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = ((data << 10) | remainder) ^ 0x5412
        func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
        for i in 0..<6 { set(8, i, bit(i)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for i in 9..<15 { set(14 - i, 8, bit(i)) }
        for i in 0..<8 { set(size - 1 - i, 8, bit(i)) }
        for i in 8..<15 { set(8, size - 15 + i, bit(i)) }
        set(8, size - 8, true)
    }

    /// The 18 version bits: the version and its BCH (18, 6) code.
    private static func versionBits(_ version: Int) -> Int {
        var remainder = version
        for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
        return version << 12 | remainder
    }

    /// The rows (and columns) of alignment pattern centres.
    static func alignmentCentres(version: Int) -> [Int] {
        guard version >= 2 else { return [] }
        let count = version / 7 + 2
        let size = 17 + 4 * version
        let step = (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
        var centres = [6]
        for i in (0..<count - 1).reversed() { centres.append(size - 7 - i * step) }
        return centres
    }

    /// Whether mask pattern `mask` inverts the module at column `x`, row `y`.
    private static func masked(_ mask: Int, x: Int, y: Int) -> Bool {
        switch mask {
        case 0: (x + y) % 2 == 0
        case 1: y % 2 == 0
        case 2: x % 3 == 0
        case 3: (x + y) % 3 == 0
        case 4: (x / 3 + y / 2) % 2 == 0
        case 5: x * y % 2 + x * y % 3 == 0
        case 6: (x * y % 2 + x * y % 3) % 2 == 0
        default: ((x + y) % 2 + x * y % 3) % 2 == 0
        }
    }

    // MARK: Penalty

    /// The standard's penalty score of the symbol (lower reads more easily): long runs, 2 × 2 blocks, finder look-alikes
    /// and an unbalanced share of dark modules.
    private func penalty() -> Int {
        var score = 0
        let lines: [[Bool]] =
            (0..<size).map { y in (0..<size).map { x in self[x, y] } } + (0..<size).map { x in (0..<size).map { y in self[x, y] } }
        let finderLike: [Bool] = [true, false, true, true, true, false, true]
        for line in lines {
            var run = 1
            for i in 1...line.count {
                if i < line.count, line[i] == line[i - 1] {
                    run += 1
                    continue
                }
                if run >= 5 { score += run - 2 }
                run = 1
            }
            // 1:1:3:1:1 with four light modules on one side (the quiet zone counts as light).
            let padded = Array(repeating: false, count: 4) + line + Array(repeating: false, count: 4)
            for start in 0...(padded.count - 7) where Array(padded[start..<start + 7]) == finderLike {
                let before = start >= 4 && padded[(start - 4)..<start].allSatisfy { !$0 }
                let after = start + 11 <= padded.count && padded[(start + 7)..<(start + 11)].allSatisfy { !$0 }
                if before { score += 40 }
                if after { score += 40 }
            }
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let colour = self[x, y]
                if self[x + 1, y] == colour, self[x, y + 1] == colour, self[x + 1, y + 1] == colour { score += 3 }
            }
        }
        let dark = modules.filter { $0 }.count
        let total = size * size
        let k = (abs(dark * 20 - total * 10) + total - 1) / total - 1
        score += max(0, k) * 10
        return score
    }

    private static func attribute(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// Bits appended most significant first, read back as bytes.
private struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    mutating func append(_ value: Int, count bits: Int) {
        for i in stride(from: bits - 1, through: 0, by: -1) {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> i) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(count % 8) }
            count += 1
        }
    }
}

/// Reed-Solomon error correction over GF(256) with the QR code's polynomial (x⁸ + x⁴ + x³ + x² + 1).
enum ReedSolomon {
    /// `a` × `b` in the field.
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var result: UInt16 = 0
        var a = UInt16(a)
        var b = b
        while b != 0 {
            if b & 1 == 1 { result ^= a }
            a <<= 1
            if a & 0x100 != 0 { a ^= 0x11D }
            b >>= 1
        }
        return UInt8(result)
    }

    /// The coefficients (highest first, the leading 1 left out) of (x − α⁰)(x − α¹)…(x − α^(degree−1)).
    static func generator(degree: Int) -> [UInt8] {
        var coefficients = Array(repeating: UInt8(0), count: degree)
        coefficients[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for j in 0..<degree {
                coefficients[j] = multiply(coefficients[j], root)
                if j + 1 < degree { coefficients[j] ^= coefficients[j + 1] }
            }
            root = multiply(root, 0x02)
        }
        return coefficients
    }

    /// The remainder of `data` × x^degree divided by the generator: the error correction codewords.
    static func remainder(_ data: [UInt8], generator: [UInt8]) -> [UInt8] {
        var result = Array(repeating: UInt8(0), count: generator.count)
        for byte in data {
            let factor = byte ^ result[0]
            result.removeFirst()
            result.append(0)
            for i in 0..<generator.count { result[i] ^= multiply(generator[i], factor) }
        }
        return result
    }
}
