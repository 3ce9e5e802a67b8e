/// How often one download's requests may go to a host, whatever other downloads send: at most
/// ``maxRequestsPerHost``, at least ``wait`` apart, the gap randomised with ``randomWait`` (wget's `--wait` and
/// `--random-wait`). The budget is the host's: every download of the host (with a shared queue, of every worker) takes
/// its requests from one schedule; a download's pacing only ever makes it stricter for its own requests.
public struct RequestPacing: Sendable, Hashable, Codable {
    /// At most this many requests to one host per period; nil: no fixed rate.
    public var maxRequestsPerHost: RequestRate?
    /// At least this long between two requests to one host; nil: none.
    public var wait: Duration?
    /// Whether each gap is multiplied by a random factor in 0.5…1.5 (wget's `--random-wait`).
    public var randomWait: Bool

    public init(maxRequestsPerHost: RequestRate? = nil, wait: Duration? = nil, randomWait: Bool = false) {
        self.maxRequestsPerHost = maxRequestsPerHost
        self.wait = wait
        self.randomWait = randomWait
    }

    /// Whether it limits nothing.
    public var isEmpty: Bool { maxRequestsPerHost == nil && (wait ?? .zero) <= .zero }

    /// The gap it asks for before the next request; `random` in 0…1 picks the random wait. Nil for none.
    func interval(random: Double) -> Duration? {
        let gaps = [maxRequestsPerHost?.interval, wait].compactMap { $0 }.filter { $0 > .zero }
        guard let gap = gaps.max() else { return nil }
        return randomWait ? .seconds(gap.inSeconds * (0.5 + min(1, max(0, random)))) : gap
    }

    /// The stricter of two pacings, field by field.
    func strictest(with other: RequestPacing?) -> RequestPacing {
        guard let other else { return self }
        var merged = self
        if let rate = other.maxRequestsPerHost, maxRequestsPerHost.map({ rate.interval > $0.interval }) ?? true {
            merged.maxRequestsPerHost = rate
        }
        if let wait = other.wait, wait > (self.wait ?? .zero) { merged.wait = wait }
        merged.randomWait = randomWait || other.randomWait
        return merged
    }

    private enum CodingKeys: String, CodingKey {
        case maxRequestsPerHost, waitMilliseconds, randomWait
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        maxRequestsPerHost = try container.decodeIfPresent(RequestRate.self, forKey: .maxRequestsPerHost)
        wait = try container.decodeIfPresent(Int64.self, forKey: .waitMilliseconds).map { .milliseconds($0) }
        randomWait = try container.decodeIfPresent(Bool.self, forKey: .randomWait) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(maxRequestsPerHost, forKey: .maxRequestsPerHost)
        try container.encodeIfPresent(wait.map { Int64(($0.inSeconds * 1000).rounded()) }, forKey: .waitMilliseconds)
        if randomWait { try container.encode(true, forKey: .randomWait) }
    }
}
