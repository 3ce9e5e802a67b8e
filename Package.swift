// swift-tools-version:6.2
import PackageDescription

/// Our own targets build with warnings as errors; dependencies keep their own settings.
let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "Haul",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "HaulKit", targets: ["HaulKit"]),
        // The fleet: a PostgreSQL queue many workers share. Apart, so that an app embedding HaulKit links no
        // PostgreSQL client.
        .library(name: "HaulFleet", targets: ["HaulFleet"]),
        .library(name: "HaulServer", targets: ["HaulServer"]),
        .executable(name: "haul", targets: ["haul"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Already under AsyncHTTPClient; named for its decompression errors (a corrupt body from a server that
        // compressed although asked not to).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // The daemon (`haul serve`): HTTP, WebSocket, and the service group that shuts it down on a signal.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", exact: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The fleet: many workers on one PostgreSQL queue (`--database postgres://…`).
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        // RFC 8941 structured fields: the digest headers servers send (Repr-Digest, Content-Digest).
        .package(url: "https://github.com/apple/swift-http-structured-headers", exact: "1.7.0"),
        // The daemon's `GET /metrics`: swift-metrics' API with a Prometheus registry behind it.
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        // Hooks (`--on-download-complete` and the others) run as child processes.
        .package(url: "https://github.com/swiftlang/swift-subprocess", exact: "1.0.2"),
        // Subprocess's `FilePath` on Linux (Apple platforms have it in the System framework).
        .package(url: "https://github.com/apple/swift-system", exact: "1.8.1"),
    ],
    targets: [
        // The engine: transport, storage, engine, scheduling. No CLI, server or PostgreSQL dependency (a test checks).
        .target(
            name: "HaulKit",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C functions, to read a queue of 100,000 rows without a value object per column.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
                "HaulConcurrencyHook",
            ],
            swiftSettings: strict
        ),
        // The fleet's store (`DownloadStoreFactory.sharedQueue`): many workers on one PostgreSQL queue. It sees
        // HaulKit's `package` declarations (the store protocol, the record and its columns).
        .target(
            name: "HaulFleet",
            dependencies: [
                "HaulKit",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        // The daemon: aria2's JSON-RPC over HTTP and WebSocket on Hummingbird. The library does not depend on it.
        .target(
            name: "HaulServer",
            dependencies: [
                "HaulKit",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        // Hooks and webhooks: delivers the events of a store's outbox (`haul serve`, `run` and `get`). Apart, so that
        // HaulKit links no process runner.
        .target(
            name: "HaulEvents",
            dependencies: [
                "HaulKit",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system", condition: .when(platforms: [.linux])),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The outbox's depth and failed deliveries, through whatever metrics backend the process has
                // (`haul serve`'s /metrics; none elsewhere).
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        // The `haul` command-line tool: a thin adapter over HaulKit's public API (HaulServer for `haul serve`,
        // HaulFleet for `--database`).
        .executableTarget(
            name: "haul",
            dependencies: [
                "HaulKit",
                "HaulFleet",
                "HaulServer",
                "HaulEvents",
                "HaulBuildStamp",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The commit and date of a release build (`tools/stamp-build` writes a `stamp.h` that only tools/build-release's
        // compiler sees); empty in a plain `swift build`, so a fresh clone builds as it is.
        .target(name: "HaulBuildStamp"),
        // Swift Concurrency's global-enqueue hook as linked, for `TaskPlacement` in a binary whose runtime is linked
        // statically (where `dlsym` cannot find it).
        .target(name: "HaulConcurrencyHook"),
        // The Swift samples of README.md and of HaulKit's DocC catalogue, compiled with every build; the documents
        // quote them (a test checks that each Swift block is one of them). Not a product.
        .target(name: "HaulSnippets", dependencies: ["HaulKit"], path: "Examples/Snippets", swiftSettings: strict),
        // An app's downloads screen (`DownloadListModel`) as a live table in a terminal. Not a product.
        .executableTarget(
            name: "DownloadList", dependencies: ["HaulKit"], path: "Examples/DownloadList", exclude: ["README.md"],
            swiftSettings: strict),
        // Test helpers shared by every test target, never shipped: the test origin, a mock clock, temp dirs.
        .target(
            name: "HaulTestSupport",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HaulServerTests",
            dependencies: [
                "HaulServer", "HaulKit", "HaulTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HaulKitTests",
            dependencies: [
                "HaulKit", "HaulFleet", "HaulEvents", "HaulTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        // Runs the built `haul` binary as a child process (crash tests, CLI behaviour).
        .testTarget(
            name: "HaulEndToEndTests",
            dependencies: [
                "haul", "DownloadList", "HaulKit", "HaulTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
    ]
)
