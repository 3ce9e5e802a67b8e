import RawStructuredFieldValues

/// What a response says about the host's request budget: `RateLimit-Policy` and `RateLimit`
/// (draft-ietf-httpapi-ratelimit-headers, both the structured-field forms of draft 08 and later and the dictionary
/// of earlier drafts), and the common `X-RateLimit-Limit`/`-Remaining`/`-Reset`.
struct RateLimitHeaders: Sendable, Equatable {
    /// The quota per second the policy announces (the smallest when several are), if any.
    var policyRate: Double?
    /// Requests left in the current window, if said.
    var remaining: Int?
    /// Time until the window resets, if said.
    var reset: Duration?

    /// Whether nothing was found.
    var isEmpty: Bool { policyRate == nil && remaining == nil && reset == nil }

    /// Whether the budget is spent: nothing remains, and the window resets after `reset`.
    var exhausted: Bool { remaining == 0 && (reset ?? .zero) > .zero }

    /// Reads the fields of a response; `value(name)` returns a field's combined value (lowercased name) or nil.
    /// `nowSeconds`: the current Unix time, for an `X-RateLimit-Reset` given as a timestamp.
    init(_ value: (String) -> String?, nowSeconds: Double) {
        if let field = value("ratelimit-policy") { policyRate = Self.policyRate(field) }
        if let field = value("ratelimit") { (remaining, reset) = Self.budget(field) }
        if remaining == nil, let field = value("x-ratelimit-remaining") {
            remaining = Int(field.trimmingWhitespace())
        }
        if reset == nil, let field = value("x-ratelimit-reset"), let number = Double(field.trimmingWhitespace()) {
            // Seconds to wait, or (GitHub, Twitter) the Unix time the window resets at.
            let seconds = number > 1_000_000_000 ? number - nowSeconds : number
            if seconds >= 0 { reset = .milliseconds(Int64((seconds * 1000).rounded(.up))) }
        }
    }

    init(policyRate: Double? = nil, remaining: Int? = nil, reset: Duration? = nil) {
        self.policyRate = policyRate
        self.remaining = remaining
        self.reset = reset
    }

    /// `RateLimit-Policy`: a list of policies, `"name";q=100;w=60` (draft 08+) or `100;w=60` (earlier).
    static func policyRate(_ field: String) -> Double? {
        var parser = StructuredFieldValueParser(Array(field.utf8))
        guard let list = try? parser.parseListFieldValue() else { return nil }
        var rates: [Double] = []
        for member in list {
            guard case .item(let item) = member else { continue }
            let quota: Int64?
            if case .integer(let count) = item.rfc9651BareItem {
                quota = count
            } else {
                quota = integer(item.rfc9651Parameters, "q")
            }
            let window = integer(item.rfc9651Parameters, "w") ?? 1
            if let quota, quota > 0, window > 0 { rates.append(Double(quota) / Double(window)) }
        }
        return rates.min()
    }

    /// `RateLimit`: `"name";r=50;t=30` (draft 08+) or `limit=100, remaining=50, reset=30` (earlier).
    static func budget(_ field: String) -> (remaining: Int?, reset: Duration?) {
        var dictionaryParser = StructuredFieldValueParser(Array(field.utf8))
        if let dictionary = try? dictionaryParser.parseDictionaryFieldValue(),
            dictionary.contains(where: { $0.0 == "remaining" || $0.0 == "reset" })
        {
            func member(_ key: String) -> Int64? {
                guard let found = dictionary.first(where: { $0.0 == key }), case .item(let item) = found.1,
                    case .integer(let value) = item.rfc9651BareItem
                else { return nil }
                return value
            }
            return (member("remaining").map(Int.init), member("reset").map { .seconds($0) })
        }
        var listParser = StructuredFieldValueParser(Array(field.utf8))
        guard let list = try? listParser.parseListFieldValue() else { return (nil, nil) }
        var remaining: Int?
        var reset: Duration?
        for member in list {
            guard case .item(let item) = member else { continue }
            // The strictest policy wins: the least remaining, and its reset.
            if let left = integer(item.rfc9651Parameters, "r"), remaining.map({ left < $0 }) ?? true {
                remaining = Int(left)
                reset = integer(item.rfc9651Parameters, "t").map { .seconds($0) }
            }
        }
        return (remaining, reset)
    }

    private static func integer(_ parameters: OrderedMap<String, RFC9651BareItem>, _ key: String) -> Int64? {
        guard let value = parameters[key], case .integer(let number) = value else { return nil }
        return number
    }
}
