/// CRC-32C (Castagnoli), as Google Cloud Storage (`x-goog-hash: crc32c=…`) and S3 (`x-amz-checksum-crc32c`) report
/// it: slicing by 8, a table lookup per byte, about 1 GB/s without the CPU's instruction.
struct CRC32C: Sendable {
    private var crc: UInt32 = 0xFFFF_FFFF

    /// Eight tables of 256 entries for the reflected polynomial 0x82F63B78.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var crc = UInt32(index)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[index] = crc
        }
        for index in 0..<256 {
            var crc = tables[index]
            for slice in 1..<8 {
                crc = tables[Int(crc & 0xFF)] ^ (crc >> 8)
                tables[slice * 256 + index] = crc
            }
        }
        return tables
    }()

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        var crc = crc
        Self.tables.withUnsafeBufferPointer { table in
            var index = 0
            let count = bytes.count
            while count - index >= 8 {
                let low =
                    crc
                    ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16
                        | UInt32(bytes[index + 3]) << 24)
                let t7 = table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                let t5 = table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                let t3 = table[3 * 256 + Int(bytes[index + 4])] ^ table[2 * 256 + Int(bytes[index + 5])]
                let t1 = table[256 + Int(bytes[index + 6])] ^ table[Int(bytes[index + 7])]
                crc = t7 ^ t5 ^ t3 ^ t1
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        self.crc = crc
    }

    var value: UInt32 { crc ^ 0xFFFF_FFFF }

    var bigEndianBytes: [UInt8] {
        let value = value
        return [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
