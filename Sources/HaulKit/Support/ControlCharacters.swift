/// Removes what a terminal would interpret from text that came from a server (reason phrases, header values).
public enum ControlCharacters {
    /// `text` without C0 and C1 control characters (ESC, CSI, BEL, CR, …) and DEL, so that it can neither move
    /// the cursor, recolour, retitle nor overwrite a terminal; tabs become spaces.
    public static func removed(from text: some StringProtocol) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09: result.append(" ")
            case 0x00..<0x20, 0x7F, 0x80...0x9F: continue
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    /// Whether `text` holds anything ``removed(from:)`` would remove.
    public static func occur(in text: some StringProtocol) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) }
    }
}
