extension Duration {
    /// Whole seconds, rounded down (for messages).
    var wholeSeconds: Int64 { components.seconds }

    /// Seconds as a floating-point number.
    package var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
