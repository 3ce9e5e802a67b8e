import Foundation
import HaulKit
import NIOPosix
import PostgresNIO

/// The fleet's hosts: one row per host in `haul_host` (migration v8) with its request schedule (a GCRA: the time the
/// next request may go), its hold (`Retry-After`), the policy it announced and its backoff, worked out in the
/// database under the row's lock, so every worker takes its requests from one schedule and backs off together. One
/// round trip per request to a host something limits (`haul_host_reserve`), else one now and then; see
/// `docs/politeness.md` for what it costs.
extension PostgresDownloadStore: SharedHostBudget {
    var sharedHostBudget: (any SharedHostBudget)? { self }

    nonisolated(nonsending) func reserveRequest(
        host: String, gap: Duration?, maxConnections: Int
    ) async -> (
        wait: Duration, connectionCap: Int?, limited: Bool
    )? {
        let micros = gap.map { Int64($0.inSeconds * 1_000_000) } ?? 0
        guard
            let row = try? await run(
                "SELECT wait_us, cap, limited FROM haul_host_reserve($1, $2, $3)",
                [.text(host), .integer(micros), .integer(Int64(maxConnections))], inOrder: false
            ).rows.first,
            let wait = try? row.makeRandomAccess()[0].decode(Int64.self)
        else { return nil }
        let cells = row.makeRandomAccess()
        let cap = (try? cells[1].decode(Int32?.self)) ?? nil
        return (.microseconds(max(0, wait)), cap.map(Int.init), (try? cells[2].decode(Bool.self)) ?? true)
    }

    nonisolated(nonsending) func countRequests(host: String, count: Int) async {
        _ = try? await run(
            """
            INSERT INTO haul_host (host, requests, window_count) VALUES ($1, $2, $2)
            ON CONFLICT (host) DO UPDATE SET requests = haul_host.requests + EXCLUDED.requests,
                window_count = haul_host.window_count + EXCLUDED.window_count
            """, [.text(host), .integer(Int64(count))], inOrder: false)
    }

    nonisolated(nonsending) func recordThrottle(host: String, reason: String, hold: Duration?, connections: Int) async {
        let micros = hold.map { Int64($0.inSeconds * 1_000_000) } ?? 0
        _ = try? await run(
            "SELECT haul_host_throttled($1, $2, $3, $4)",
            [.text(host), .text(reason), .integer(micros), .integer(Int64(connections))], inOrder: false)
    }

    nonisolated(nonsending) func recordPolicy(host: String, rate: Double?, hold: Duration?) async {
        let millirate = rate.map { Int64($0 * 1000) }
        let micros = hold.map { Int64($0.inSeconds * 1_000_000) } ?? 0
        _ = try? await run(
            "SELECT haul_host_learned($1, $2, $3)", [.text(host), StoredValue(millirate), .integer(micros)],
            inOrder: false)
    }

    nonisolated(nonsending) func hostStatuses() async throws(DownloadError) -> [HostStatus] {
        let rows = try await run(
            """
            SELECT host, requests, policy_rate, backoff_rate, connection_cap,
                CASE WHEN hold_until > clock_timestamp()
                    THEN extract(epoch FROM hold_until - clock_timestamp())::float8 END,
                last_throttle, reason, throttles
            FROM haul_host ORDER BY host
            """
        ).rows
        return rows.compactMap { row in
            let cells = row.makeRandomAccess()
            guard let host = try? cells[0].decode(String.self) else { return nil }
            return HostStatus(
                host: host, requests: Int((try? cells[1].decode(Int64.self)) ?? 0),
                policyRate: (try? cells[2].decode(Double?.self)) ?? nil,
                backoffRate: (try? cells[3].decode(Double?.self)) ?? nil,
                connectionCap: ((try? cells[4].decode(Int32?.self)) ?? nil).map(Int.init),
                heldForSeconds: (try? cells[5].decode(Double?.self)) ?? nil,
                lastThrottle: (try? cells[6].decode(Date?.self)) ?? nil,
                reason: (try? cells[7].decode(String?.self)) ?? nil,
                throttles: Int((try? cells[8].decode(Int64.self)) ?? 0))
        }
    }

    /// Migration v8: the table and its three functions. The rules are ``HaulKit``'s `HostPoliteness`, in SQL: a
    /// throttle halves the rate (the least of the backoff's, the rate measured over the last window and the policy's;
    /// 2/s when none is known; never below 0.2/s) and the connections, at most once a second; each second after the
    /// last throttle gives back 5% of the rate it was cut from, and the limit is lifted at twice that.
    static let hostBudgetMigration = """
        CREATE TABLE haul_host (
            host TEXT PRIMARY KEY,
            next_slot TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
            hold_until TIMESTAMPTZ,
            policy_rate DOUBLE PRECISION,
            backoff_rate DOUBLE PRECISION,
            decreased_from DOUBLE PRECISION,
            connection_cap INT,
            last_decrease TIMESTAMPTZ,
            last_increase TIMESTAMPTZ,
            last_throttle TIMESTAMPTZ,
            reason TEXT,
            throttles BIGINT NOT NULL DEFAULT 0,
            requests BIGINT NOT NULL DEFAULT 0,
            window_start TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
            window_count BIGINT NOT NULL DEFAULT 0,
            last_rate DOUBLE PRECISION
        );
        CREATE FUNCTION haul_host_reserve(p_host TEXT, p_gap_us BIGINT, p_max_connections BIGINT,
            OUT wait_us BIGINT, OUT cap INT, OUT limited BOOLEAN) AS $$
        DECLARE
            h haul_host%ROWTYPE;
            t TIMESTAMPTZ := clock_timestamp();
            gap DOUBLE PRECISION;
            start TIMESTAMPTZ;
            secs DOUBLE PRECISION;
        BEGIN
            INSERT INTO haul_host (host, next_slot, window_start) VALUES (p_host, t, t) ON CONFLICT (host) DO NOTHING;
            SELECT * INTO h FROM haul_host WHERE host = p_host FOR UPDATE;
            IF (h.backoff_rate IS NOT NULL OR h.connection_cap IS NOT NULL) AND h.last_increase IS NOT NULL
                AND t - h.last_increase >= interval '1 second' THEN
                secs := extract(epoch FROM t - h.last_increase);
                IF h.backoff_rate IS NOT NULL THEN
                    h.backoff_rate := h.backoff_rate
                        + GREATEST(0.1, GREATEST(h.decreased_from, COALESCE(h.policy_rate, 0)) * 0.05) * secs;
                    IF h.backoff_rate >= h.decreased_from * 2 THEN
                        h.backoff_rate := NULL;
                        h.decreased_from := NULL;
                    END IF;
                END IF;
                IF h.connection_cap IS NOT NULL THEN
                    h.connection_cap := CASE WHEN h.connection_cap + 1 >= p_max_connections THEN NULL
                        ELSE h.connection_cap + 1 END;
                END IF;
                h.last_increase := t;
            END IF;
            gap := GREATEST(p_gap_us::DOUBLE PRECISION,
                CASE WHEN h.policy_rate > 0 THEN 1e6 / (h.policy_rate * 0.9) ELSE 0 END,
                CASE WHEN h.backoff_rate > 0 THEN 1e6 / h.backoff_rate ELSE 0 END);
            start := GREATEST(t, h.next_slot);
            IF h.hold_until IS NOT NULL AND h.hold_until > start THEN
                start := h.hold_until;
                IF gap = 0 THEN gap := 100000; END IF;
            END IF;
            IF t - h.window_start > interval '5 seconds' THEN
                h.last_rate := h.window_count / extract(epoch FROM t - h.window_start);
                h.window_start := t;
                h.window_count := 0;
            END IF;
            UPDATE haul_host SET next_slot = start + gap * interval '1 microsecond',
                backoff_rate = h.backoff_rate, decreased_from = h.decreased_from, connection_cap = h.connection_cap,
                last_increase = h.last_increase, requests = h.requests + 1, window_start = h.window_start,
                window_count = h.window_count + 1, last_rate = h.last_rate
            WHERE host = p_host;
            wait_us := (extract(epoch FROM start - t) * 1e6)::BIGINT;
            cap := h.connection_cap;
            limited := h.policy_rate IS NOT NULL OR h.backoff_rate IS NOT NULL OR h.connection_cap IS NOT NULL
                OR (h.hold_until IS NOT NULL AND h.hold_until > t);
        END;
        $$ LANGUAGE plpgsql VOLATILE;
        CREATE FUNCTION haul_host_throttled(p_host TEXT, p_reason TEXT, p_hold_us BIGINT, p_connections BIGINT)
        RETURNS VOID AS $$
        DECLARE
            h haul_host%ROWTYPE;
            t TIMESTAMPTZ := clock_timestamp();
            measured DOUBLE PRECISION;
            rate DOUBLE PRECISION;
        BEGIN
            INSERT INTO haul_host (host, next_slot, window_start) VALUES (p_host, t, t) ON CONFLICT (host) DO NOTHING;
            SELECT * INTO h FROM haul_host WHERE host = p_host FOR UPDATE;
            h.throttles := h.throttles + 1;
            h.last_throttle := t;
            h.reason := p_reason;
            IF p_hold_us > 0 THEN
                h.hold_until := GREATEST(COALESCE(h.hold_until, t),
                    t + LEAST(p_hold_us, 3600000000) * interval '1 microsecond');
            END IF;
            IF h.last_decrease IS NULL OR t - h.last_decrease >= interval '1 second' THEN
                measured := CASE WHEN h.window_count >= 2
                    THEN h.window_count / GREATEST(1, extract(epoch FROM t - h.window_start)) ELSE h.last_rate END;
                -- Under a known policy the cut starts from it, by a fifth; else from the rate measured, by half.
                rate := CASE WHEN h.policy_rate IS NOT NULL THEN LEAST(h.backoff_rate, h.policy_rate)
                    ELSE COALESCE(LEAST(h.backoff_rate, measured), 2) END;
                h.backoff_rate := GREATEST(0.2, rate * CASE WHEN h.policy_rate IS NOT NULL THEN 0.8 ELSE 0.5 END);
                h.decreased_from := rate;
                h.connection_cap := GREATEST(1, floor(COALESCE(h.connection_cap, GREATEST(1, p_connections)) * 0.5));
                h.last_decrease := t;
                h.last_increase := t;
            END IF;
            UPDATE haul_host SET throttles = h.throttles, last_throttle = h.last_throttle, reason = h.reason,
                hold_until = h.hold_until, backoff_rate = h.backoff_rate, decreased_from = h.decreased_from,
                connection_cap = h.connection_cap, last_decrease = h.last_decrease, last_increase = h.last_increase
            WHERE host = p_host;
        END;
        $$ LANGUAGE plpgsql VOLATILE;
        CREATE FUNCTION haul_host_learned(p_host TEXT, p_millirate BIGINT, p_hold_us BIGINT) RETURNS VOID AS $$
        BEGIN
            INSERT INTO haul_host (host) VALUES (p_host) ON CONFLICT (host) DO NOTHING;
            -- A new policy counts the requests of the current window against itself (at most a second on).
            UPDATE haul_host SET
                backoff_rate = CASE WHEN p_millirate > 0 AND policy_rate IS NULL AND backoff_rate IS NOT NULL
                    THEN GREATEST(backoff_rate, p_millirate / 1000.0 * 0.8) ELSE backoff_rate END,
                decreased_from = CASE WHEN p_millirate > 0 AND policy_rate IS NULL AND backoff_rate IS NOT NULL
                    THEN p_millirate / 1000.0 ELSE decreased_from END,
                next_slot = CASE WHEN p_millirate > 0 AND policy_rate IS DISTINCT FROM p_millirate / 1000.0
                    THEN GREATEST(next_slot, LEAST(
                        window_start + window_count * (1e6 / (p_millirate / 1000.0 * 0.9)) * interval '1 microsecond',
                        clock_timestamp() + interval '1 second'))
                    ELSE next_slot END,
                policy_rate = COALESCE(p_millirate / 1000.0, policy_rate),
                hold_until = CASE WHEN p_hold_us > 0 THEN GREATEST(COALESCE(hold_until, clock_timestamp()),
                    clock_timestamp() + LEAST(p_hold_us, 3600000000) * interval '1 microsecond') ELSE hold_until END
            WHERE host = p_host;
        END;
        $$ LANGUAGE plpgsql VOLATILE;
        """
}
