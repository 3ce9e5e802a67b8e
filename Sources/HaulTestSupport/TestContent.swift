import Synchronization

/// The bytes every test resource serves: byte `i` of version `v` is a pure function of (i, v), so any download or
/// range is checked without fixtures, and two versions differ almost everywhere (a splice is always caught).
public enum TestContent {
    @inline(__always)
    static func word(_ index: UInt64, version: UInt64) -> UInt64 {
        var z = index &* 0x9E37_79B9_7F4A_7C15 &+ (version &+ 1) &* 0xD1B5_4A32_D192_ED03
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The byte at `offset` of `version`.
    public static func byte(at offset: Int, version: Int = 0) -> UInt8 {
        UInt8(truncatingIfNeeded: word(UInt64(offset >> 3), version: UInt64(version)) >> (UInt64(offset & 7) * 8))
    }

    /// The first bytes of each version, computed once: serving and checking then only copy memory, which keeps a
    /// debug-built origin from starving the code under test of CPU.
    static let cachedLength = 32 << 20
    private static let cache = Mutex<[Int: [UInt8]]>([:])

    private static func cached(_ version: Int) -> [UInt8] {
        if let bytes = cache.withLock({ $0[version] }) { return bytes }
        var bytes = [UInt8](repeating: 0, count: cachedLength)
        bytes.withUnsafeMutableBytes { compute($0, offset: 0, version: version) }
        return cache.withLock { cache in
            if let existing = cache[version] { return existing }
            cache[version] = bytes
            return bytes
        }
    }

    /// Writes bytes `offset..<offset+buffer.count` of `version` into `buffer`.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer, offset: Int, version: Int = 0) {
        if offset + buffer.count <= cachedLength {
            cached(version).withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<offset + buffer.count]))
            }
            return
        }
        compute(buffer, offset: offset, version: version)
    }

    private static func compute(_ buffer: UnsafeMutableRawBufferPointer, offset: Int, version: Int) {
        var index = 0
        while index < buffer.count {
            let position = offset + index
            if position & 7 == 0, index + 8 <= buffer.count {
                buffer.storeBytes(
                    of: word(UInt64(position >> 3), version: UInt64(version)).littleEndian, toByteOffset: index,
                    as: UInt64.self)
                index += 8
            } else {
                buffer[index] = byte(at: position, version: version)
                index += 1
            }
        }
    }

    /// Bytes `range` of `version`.
    public static func bytes(_ range: Range<Int>, version: Int = 0) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: range.count)
        result.withUnsafeMutableBytes { fill($0, offset: range.lowerBound, version: version) }
        return result
    }

    /// The index of the first byte of `data` that differs from `version` (nil when all match and lengths agree).
    public static func firstMismatch(_ data: [UInt8], size: Int, version: Int = 0) -> Int? {
        let expected = bytes(0..<size, version: version)
        if let index = zip(data, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            return index
        }
        return data.count == size ? nil : min(data.count, size)
    }

    private static let gzipCache = Mutex<[String: [UInt8]]>([:])

    /// The first `size` bytes of `version` as a gzip stream (RFC 1952) of stored deflate blocks: valid for any
    /// decoder, computed without a compression library, cached.
    public static func gzip(size: Int, version: Int = 0) -> [UInt8] {
        let key = "\(size)/\(version)"
        if let known = gzipCache.withLock({ $0[key] }) { return known }
        let data = bytes(0..<size, version: version)
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let last: UInt8 = offset + count == data.count ? 1 : 0
            out.append(last)  // BFINAL, BTYPE 00 (stored)
            out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<offset + count]
            offset += count
        } while offset < data.count
        for value in [crc32(data), UInt32(truncatingIfNeeded: data.count)] {
            out += [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
        }
        gzipCache.withLock { $0[key] = out }
        return out
    }

    /// CRC-32 (IEEE 802.3), as gzip needs.
    static func crc32(_ data: [UInt8]) -> UInt32 {
        var table = [UInt32](repeating: 0, count: 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            table[index] = value
        }
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
