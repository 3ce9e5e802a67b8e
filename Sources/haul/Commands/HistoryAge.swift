import ArgumentParser
import Foundation

/// A duration given as a number and a unit (`90s`, `30m`, `12h`, `7d`, `2w`): how old a download's last change must
/// be for `haul remove --older-than` to prune it.
struct HistoryAge: ExpressibleByArgument, Equatable {
    var seconds: TimeInterval

    static let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        guard let unit = text.last, let scale = Self.units[unit], let value = Double(text.dropLast()), value >= 0,
            value.isFinite
        else { return nil }
        seconds = value * scale
    }

    static var defaultCompletionKind: CompletionKind { .default }
}
