// swift-tools-version:6.2
// The floor under Haul's small-file speed (issue 17): AsyncHTTPClient alone fetching a list into files, with the
// client configured as Haul's (`HTTPTransport`), and nothing else: no record, no part file, no sync, no events.
// Built and run by `bench/floor.sh`; not part of Haul's package (its dependencies build in a `.build` of its own).
import PackageDescription

let package = Package(
    name: "HaulFloor",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0")
    ],
    targets: [
        .executableTarget(
            name: "haul-floor",
            dependencies: [.product(name: "AsyncHTTPClient", package: "async-http-client")]
        )
    ]
)
