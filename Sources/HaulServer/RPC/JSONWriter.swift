/// Writes a ``JSONValue`` as compact JSON text directly into a string: several times faster than `JSONEncoder` for
/// the large answers (`tellWaiting` of a thousand downloads) that aria2 clients ask for every second.
enum JSONWriter {
    static func text(_ value: JSONValue) -> String {
        var output = ""
        output.reserveCapacity(256)
        write(value, into: &output)
        return output
    }

    /// The length in UTF-8 bytes of `value`'s text, counted without writing it; nil as soon as it exceeds `limit`
    /// (so an answer too large to send is found without building it).
    static func byteCount(_ value: JSONValue, upTo limit: Int) -> Int? {
        var count = 0
        return add(value, to: &count, limit: limit) ? count : nil
    }

    /// Adds the length of `value`'s text to `count`; false once it exceeds `limit`.
    private static func add(_ value: JSONValue, to count: inout Int, limit: Int) -> Bool {
        switch value {
        case .null: count += 4
        case .bool(let flag): count += flag ? 4 : 5
        case .integer(let number): count += String(number).utf8.count
        case .double(let number): count += number.isFinite ? "\(number)".utf8.count : 4
        case .string(let text): count += quotedLength(text)
        case .array(let items):
            count += 2 + max(0, items.count - 1)
            for item in items where count <= limit {
                guard add(item, to: &count, limit: limit) else { return false }
            }
        case .object(let fields):
            count += 2 + max(0, fields.count - 1)
            for (key, item) in fields where count <= limit {
                count += quotedLength(key) + 1
                guard add(item, to: &count, limit: limit) else { return false }
            }
        }
        return count <= limit
    }

    /// The length of `text` written as a JSON string, quotes included (as ``writeString(_:into:)`` escapes it).
    private static func quotedLength(_ text: String) -> Int {
        var length = 2
        for byte in text.utf8 {
            switch byte {
            case 0x22, 0x5C, 0x0A, 0x0D, 0x09: length += 2
            case ..<0x20: length += 6
            default: length += 1
            }
        }
        return length
    }

    private static func write(_ value: JSONValue, into output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .integer(let number): output += String(number)
        case .double(let number): output += number.isFinite ? "\(number)" : "null"
        case .string(let text): writeString(text, into: &output)
        case .array(let items):
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += "," }
                write(item, into: &output)
            }
            output += "]"
        case .object(let fields):
            output += "{"
            var first = true
            for (key, item) in fields {
                if !first { output += "," }
                first = false
                writeString(key, into: &output)
                output += ":"
                write(item, into: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ text: String, into output: inout String) {
        output += "\""
        // Most strings (GIDs, numbers as text, paths) need no escaping: append them whole.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            output += text
        } else {
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": output += "\\\""
                case "\\": output += "\\\\"
                case "\n": output += "\\n"
                case "\r": output += "\\r"
                case "\t": output += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
