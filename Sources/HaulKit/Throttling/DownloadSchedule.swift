import Foundation

/// A value that changes with the local time of the week: the global speed limit by the hour
/// (`--limit-rate-schedule "Mon-Fri 08:00-18:00=2M, *=0"`) or when downloads are held (`--pause-schedule`).
///
/// Rules are separated by commas; the first that matches the local time wins, and a time no rule matches takes the
/// fallback. A rule is `[DAYS] [HH:MM-HH:MM][=VALUE]`: DAYS is `Mon`, a range `Mon-Fri` (it may wrap: `Fri-Mon`)
/// or `*` for every day; a window whose end is not after its start runs past midnight (`22:00-06:00` on `Fri` holds
/// from Friday 22:00 to Saturday 06:00); `24:00` is the end of the day. Times are wall-clock times in the calendar's
/// time zone, so a rule keeps its hours across daylight-saving changes (a boundary in the skipped hour takes effect
/// when the clock reaches the next valid time). Pure: tested with fixed dates (`DownloadScheduleTests`).
public struct DownloadSchedule<Value: Sendable & Equatable>: Sendable {
    /// One rule: the days and the daily window it covers, and its value there.
    public struct Rule: Sendable, Equatable {
        /// Weekdays as `Calendar` numbers them: 1 is Sunday, 7 Saturday.
        public var days: Set<Int>
        /// Minutes after midnight: from `start` (inclusive) to `end` (exclusive); nil for the whole day.
        public var window: (start: Int, end: Int)?
        public var value: Value

        public init(days: Set<Int>, window: (start: Int, end: Int)?, value: Value) {
            self.days = days
            self.window = window
            self.value = value
        }

        public static func == (a: Rule, b: Rule) -> Bool {
            a.days == b.days && a.window?.start == b.window?.start && a.window?.end == b.window?.end
                && a.value == b.value
        }

        /// Whether it covers `minute` (after midnight) of weekday `day`.
        func covers(day: Int, minute: Int) -> Bool {
            guard let window else { return days.contains(day) }
            if window.start < window.end {
                return days.contains(day) && minute >= window.start && minute < window.end
            }
            // Past midnight: the evening of one of its days, or the morning after one.
            let previous = day == 1 ? 7 : day - 1
            return (days.contains(day) && minute >= window.start) || (days.contains(previous) && minute < window.end)
        }
    }

    public var rules: [Rule]
    /// The value when no rule matches.
    public var fallback: Value

    public init(rules: [Rule], fallback: Value) {
        self.rules = rules
        self.fallback = fallback
    }

    /// The value at `date`, in `calendar`'s time zone.
    public func value(at date: Date, in calendar: Calendar) -> Value {
        let parts = calendar.dateComponents([.weekday, .hour, .minute], from: date)
        let minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        let day = parts.weekday ?? 1
        return rules.first { $0.covers(day: day, minute: minute) }?.value ?? fallback
    }

    /// The first moment after `date` at which the value changes, looking up to eight days ahead; nil if it never
    /// does.
    public func nextChange(after date: Date, in calendar: Calendar) -> Date? {
        let minutes = Set(rules.flatMap { rule in rule.window.map { [$0.start, $0.end % (24 * 60)] } ?? [0] } + [0])
            .sorted()
        let today = calendar.startOfDay(for: date)
        for offset in 0...8 {
            guard let day = calendar.date(byAdding: .day, value: offset, to: today) else { continue }
            for minute in minutes {
                guard
                    let candidate = calendar.date(
                        bySettingHour: minute / 60, minute: minute % 60, second: 0, of: day,
                        matchingPolicy: .nextTime, repeatedTimePolicy: .first, direction: .forward),
                    candidate > date
                else { continue }
                if value(at: candidate, in: calendar) != value(at: candidate.addingTimeInterval(-1), in: calendar) {
                    return candidate
                }
            }
        }
        return nil
    }
}

extension DownloadSchedule {
    /// Parses `text` (see the type's description); `option` names the option in errors, `parse` reads a value, and a
    /// rule without `=VALUE` takes `bare` (nil: a value is required).
    public init(
        parsing text: String, option: String, fallback: Value, bare: Value? = nil, value parse: (String) -> Value?
    ) throws(DownloadError) {
        var rules: [Rule] = []
        var fallback = fallback
        let pieces = text.split(whereSeparator: { $0 == "," || $0 == ";" })
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard pieces.contains(where: { !$0.isEmpty }) else {
            throw .invalidRequest("\(option) is empty: give rules such as 'Mon-Fri 08:00-18:00=2M, *=0'")
        }
        for piece in pieces where !piece.isEmpty {
            func bad(_ why: String) -> DownloadError {
                .invalidRequest(
                    "\(option): '\(piece)' \(why); a rule is [DAYS] [HH:MM-HH:MM][=VALUE], e.g. "
                        + "'Mon-Fri 08:00-18:00=2M, *=0'")
            }
            var when = Substring(piece)
            let value: Value
            if let equals = piece.firstIndex(of: "=") {
                let text = piece[piece.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                guard let parsed = parse(text) else { throw bad("has a value that cannot be read: '\(text)'") }
                value = parsed
                when = piece[..<equals]
            } else if let bare {
                value = bare
            } else {
                throw bad("has no =VALUE")
            }
            var days: Set<Int>?
            var window: (start: Int, end: Int)?
            for word in when.split(separator: " ", omittingEmptySubsequences: true) {
                if word.contains(":") {
                    guard window == nil else { throw bad("has two time windows") }
                    guard let parsed = Self.window(word) else {
                        throw bad("has a time window '\(word)' that is not HH:MM-HH:MM (00:00 to 24:00)")
                    }
                    window = parsed
                } else {
                    guard days == nil else { throw bad("has two sets of days") }
                    guard let parsed = Self.days(word) else {
                        throw bad("names days '\(word)' that are not a day (Mon … Sun), a range (Mon-Fri) or *")
                    }
                    days = parsed
                }
            }
            guard days != nil || window != nil else { throw bad("names no days and no time") }
            if days?.count == 7, window == nil, piece.trimmingCharacters(in: .whitespaces).hasPrefix("*") {
                // `*=VALUE`: the fallback, wherever it is written.
                fallback = value
                continue
            }
            rules.append(Rule(days: days ?? Set(1...7), window: window, value: value))
        }
        self.init(rules: rules, fallback: fallback)
    }

    /// `Mon`, `Mon-Fri`, `Fri-Mon` or `*` as weekday numbers (1 is Sunday).
    static func days(_ word: Substring) -> Set<Int>? {
        if word == "*" { return Set(1...7) }
        func day(_ name: Substring) -> Int? {
            let lower = name.lowercased()
            guard lower.count >= 3 else { return nil }
            return ["sun", "mon", "tue", "wed", "thu", "fri", "sat"].firstIndex {
                lower.hasPrefix($0) && $0.hasPrefix(String(lower.prefix(3)))
            }.map { $0 + 1 }
        }
        let ends = word.split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count <= 2, let first = day(ends[0]) else { return nil }
        guard ends.count == 2 else { return [first] }
        guard let last = day(ends[1]) else { return nil }
        var result: Set<Int> = [first]
        var current = first
        while current != last {
            current = current == 7 ? 1 : current + 1
            result.insert(current)
        }
        return result
    }

    /// `HH:MM-HH:MM` as minutes after midnight; the end may be 24:00; start and end differ.
    static func window(_ word: Substring) -> (start: Int, end: Int)? {
        let ends = word.split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 2, let start = minute(ends[0]), let end = minute(ends[1]), start < 24 * 60, start != end
        else { return nil }
        return (start, end)
    }

    static func minute(_ text: Substring) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count <= 2, parts[1].count == 2, let hour = Int(parts[0]),
            let minute = Int(parts[1]), (0...24).contains(hour), (0...59).contains(minute),
            hour < 24 || minute == 0
        else { return nil }
        return hour * 60 + minute
    }
}
