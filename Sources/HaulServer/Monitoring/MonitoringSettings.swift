extension HaulDaemon {
    /// Who may read `/metrics` (`/healthz` and `/readyz` need nobody's leave). See `docs/service.md`.
    public struct Monitoring: Sendable {
        /// A token that reads `/metrics` and nothing else (`--metrics-token`), sent as `Authorization: Bearer TOKEN`;
        /// the RPC secret is accepted too. Nil: only the RPC secret.
        public var metricsToken: String?

        public init(metricsToken: String? = nil) { self.metricsToken = metricsToken }
    }
}
