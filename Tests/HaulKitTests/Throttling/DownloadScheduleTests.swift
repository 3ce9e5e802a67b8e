import Foundation
import Testing

@testable import HaulKit

/// Schedules as values: parsed from text, read at fixed local times, their next change found across midnight and
/// daylight-saving changes.
@Suite("Download schedules")
struct DownloadScheduleTests {
    /// Berlin: summer time starts 2026-03-29 at 02:00 (clocks jump to 03:00) and ends 2026-10-25 at 03:00 (back to
    /// 02:00).
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
        return calendar
    }()

    static func date(_ text: String) -> Date {
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = calendar.timeZone
        format.dateFormat = "yyyy-MM-dd HH:mm"
        return format.date(from: text)!
    }

    static func rates(_ text: String) throws -> DownloadSchedule<Int64?> {
        try DownloadSchedule<Int64?>(parsing: text, option: "--limit-rate-schedule", fallback: nil) {
            value -> Int64?? in
            if value == "0" { return .some(nil) }
            guard value.hasSuffix("M"), let megabytes = Int64(value.dropLast()) else { return nil }
            return .some(megabytes * 1024 * 1024)
        }
    }

    @Test("the first matching rule wins; * is the fallback; 0 is no limit")
    func values() throws {
        let schedule = try Self.rates("Mon-Fri 08:00-18:00=2M, Sat=1M, *=0")
        // 2026-11-27 is a Friday.
        #expect(schedule.value(at: Self.date("2026-11-27 07:59"), in: Self.calendar) == nil)
        #expect(schedule.value(at: Self.date("2026-11-27 08:00"), in: Self.calendar) == 2 << 20)
        #expect(schedule.value(at: Self.date("2026-11-27 17:59"), in: Self.calendar) == 2 << 20)
        #expect(schedule.value(at: Self.date("2026-11-27 18:00"), in: Self.calendar) == nil)
        #expect(schedule.value(at: Self.date("2026-11-28 12:00"), in: Self.calendar) == 1 << 20)
        #expect(schedule.value(at: Self.date("2026-11-29 12:00"), in: Self.calendar) == nil)
    }

    @Test("a window past midnight belongs to the day it starts; day ranges wrap")
    func pastMidnight() throws {
        let schedule = try Self.rates("Fri-Sun 22:00-06:00=5M")
        #expect(schedule.value(at: Self.date("2026-11-27 23:00"), in: Self.calendar) == 5 << 20)
        #expect(schedule.value(at: Self.date("2026-11-28 05:59"), in: Self.calendar) == 5 << 20)
        // Monday morning: Sunday's window runs on; Thursday night: not a day of the rule.
        #expect(schedule.value(at: Self.date("2026-11-30 05:00"), in: Self.calendar) == 5 << 20)
        #expect(schedule.value(at: Self.date("2026-11-26 23:00"), in: Self.calendar) == nil)
        #expect(schedule.value(at: Self.date("2026-11-27 06:00"), in: Self.calendar) == nil)
    }

    @Test("the next change is the next boundary where the value differs, across days")
    func nextChange() throws {
        let schedule = try Self.rates("Mon-Fri 08:00-18:00=2M, *=0")
        let calendar = Self.calendar
        #expect(
            schedule.nextChange(after: Self.date("2026-11-27 07:00"), in: calendar) == Self.date("2026-11-27 08:00"))
        #expect(
            schedule.nextChange(after: Self.date("2026-11-27 08:00"), in: calendar) == Self.date("2026-11-27 18:00"))
        // Friday evening: the weekend has no change, Monday 08:00 is next.
        #expect(
            schedule.nextChange(after: Self.date("2026-11-27 18:00"), in: calendar) == Self.date("2026-11-30 08:00"))
        #expect(try Self.rates("*=2M").nextChange(after: Self.date("2026-11-27 07:00"), in: calendar) == nil)
    }

    @Test("daylight saving: wall-clock hours hold; a boundary in the skipped hour takes effect at 03:00")
    func daylightSaving() throws {
        let calendar = Self.calendar
        let night = try Self.rates("* 01:00-02:30=1M, *=0")
        // 2026-03-29: 02:00 does not exist; the window ends when the clock reads 03:00 (01:00 UTC).
        let end = try #require(night.nextChange(after: Self.date("2026-03-29 01:30"), in: calendar))
        #expect(end == Self.date("2026-03-29 03:00"))
        #expect(end.timeIntervalSince(Self.date("2026-03-29 01:30")) == 30 * 60)
        // A day of 23 hours: 08:00 to 18:00 is still ten hours of wall clock, and the next day's 08:00 comes 23
        // hours after the day's.
        let day = try Self.rates("* 08:00-18:00=2M, *=0")
        let morning = try #require(day.nextChange(after: Self.date("2026-03-28 12:00"), in: calendar))
        #expect(morning == Self.date("2026-03-28 18:00"))
        let next = try #require(day.nextChange(after: morning, in: calendar))
        #expect(next.timeIntervalSince(morning) == 13 * 3600, "18:00 to 08:00 across the skipped hour")
        // Autumn: 02:00-03:00 happens twice; the value follows the wall clock both times.
        let autumn = try Self.rates("* 02:00-03:00=1M, *=0")
        let first = try #require(autumn.nextChange(after: Self.date("2026-10-25 01:00"), in: calendar))
        #expect(autumn.value(at: first, in: calendar) == 1 << 20)
        #expect(autumn.value(at: first.addingTimeInterval(90 * 60), in: calendar) == 1 << 20, "the repeated hour")
    }

    @Test(
        "bad rules are refused with the reason",
        arguments: [
            ("Mon-Fry 08:00-18:00=2M", "'Mon-Fry'"), ("Mon 08:00-18:00", "no =VALUE"),
            ("Mon 25:00-26:00=1M", "HH:MM-HH:MM"), ("Mon 08:00-08:00=1M", "HH:MM-HH:MM"),
            ("Mon 08:00-18:00=fast", "'fast'"), ("", "is empty"), ("Mon Tue=1M", "two sets of days"),
            ("08:00-09:00 10:00-11:00=1M", "two time windows"), ("Mon 8:0-9:00=1M", "HH:MM-HH:MM"),
        ])
    func badRules(_ text: String, _ reason: String) {
        #expect {
            try Self.rates(text)
        } throws: { error in
            (error as? DownloadError)?.summary.contains(reason) == true
                && (error as? DownloadError)?.code == .invalidRequest
        }
    }

    @Test("a pause schedule: a bare window means paused, =run carves an exception")
    func pauses() throws {
        let schedule = try DownloadSchedule<Bool>(
            parsing: "Mon-Fri 12:00-13:00=run, Mon-Fri 09:00-17:00", option: "--pause-schedule", fallback: false,
            bare: true
        ) { $0 == "run" ? false : $0 == "pause" ? true : nil }
        #expect(schedule.value(at: Self.date("2026-11-27 10:00"), in: Self.calendar) == true)
        #expect(schedule.value(at: Self.date("2026-11-27 12:30"), in: Self.calendar) == false)
        #expect(schedule.value(at: Self.date("2026-11-27 17:00"), in: Self.calendar) == false)
    }
}
