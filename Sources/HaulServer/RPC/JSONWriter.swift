/// Writes a ``JSONValue`` as compact JSON text directly into a string: several times faster than `JSONEncoder` for
/// the large answers (`tellWaiting` of a thousand downloads) that aria2 clients ask for every second.
enum JSONWriter {
    static func text(_ value: JSONValue) -> String {
        var output = ""
        output.reserveCapacity(256)
        write(value, into: &output)
        return output
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
