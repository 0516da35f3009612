// swift-tools-version:6.2
import PackageDescription

/// Every Islet target opts into the same strictness: C modules may only be imported `internal`,
/// existentials are spelled `any`, and members are visible only through their own module's import.
let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let log = Target.Dependency.product(name: "Logging", package: "swift-log")
let heap = Target.Dependency.product(name: "HeapModule", package: "swift-collections")
let deque = Target.Dependency.product(name: "DequeModule", package: "swift-collections")
let hashTrees = Target.Dependency.product(name: "HashTreeCollections", package: "swift-collections")

let package = Package(
    name: "islet",
    products: [
        .executable(name: "islet", targets: ["islet"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Exact: the compiled templates read this version's parse tree (IsletRender/CompiledMustache.swift).
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", exact: "2.1.1"),
    ],
    targets: [
        .systemLibrary(name: "CLibUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        .systemLibrary(
            name: "CLibWebSockets", pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev", "libwebsockets-evlib-uv"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // hiredis (Debian libhiredis-dev) with its libuv adapter, compiled here so that libuv's
        // types stay CLibUV's.
        .target(name: "CHiredis", dependencies: ["CLibUV"], linkerSettings: [.linkedLibrary("hiredis")]),

        // One cache hint (__builtin_prefetch) for the engine's long clock steps; header only.
        .systemLibrary(name: "CPrefetch"),
        .target(name: "IsletCore", dependencies: ["CPrefetch", heap, hashTrees], swiftSettings: settings),
        .target(
            name: "IsletRender",
            dependencies: ["IsletCore", .product(name: "Mustache", package: "swift-mustache")],
            swiftSettings: settings),
        .target(name: "IsletStore", dependencies: ["CSQLite", log], swiftSettings: settings),
        .target(
            name: "IsletTransport", dependencies: ["CLibUV", "CLibWebSockets", "CPrefetch", "CNGHTTP2", "COpenSSL", "CHiredis", log, deque],
            swiftSettings: settings),
        .target(
            name: "IsletServer",
            dependencies: [
                "IsletCore", "IsletRender", "IsletStore", "IsletTransport", log, deque,
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            resources: [.embedInCode("OpenAPI/openapi.json")],
            swiftSettings: settings),
        .target(name: "IsletClient", swiftSettings: settings),
        .target(name: "IsletSnapshot", dependencies: ["CZlib"], swiftSettings: settings),
        .target(
            name: "IsletBench",
            dependencies: [
                "IsletCore", "IsletRender", "IsletStore", "IsletTransport", "IsletServer", "IsletClient", log,
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: settings),
        .executableTarget(
            name: "islet",
            dependencies: [
                "IsletServer", "IsletClient", "IsletBench", "IsletSnapshot", log,
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: settings,
            // jemalloc as the process's allocator (it interposes malloc for the Swift runtime
            // too): an update or a 24 h jump allocates and frees thousands of small objects,
            // which glibc's allocator serves slower and with more memory per connection
            // (BENCHMARKS.md, "Round 11").
            linkerSettings: [.linkedLibrary("jemalloc")]),
        .target(
            name: "IsletTestSupport",
            dependencies: [
                "IsletCore", "IsletRender", "IsletStore", "IsletTransport", "IsletServer", log,
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: settings),

        .testTarget(
            name: "IsletCoreTests", dependencies: ["IsletCore", "IsletTestSupport"], exclude: ["Golden/revision-1", "Time/time-zone-vectors"],
            swiftSettings: settings),
        .testTarget(name: "IsletRenderTests", dependencies: ["IsletRender", "IsletTestSupport"], swiftSettings: settings),
        .testTarget(name: "IsletStoreTests", dependencies: ["IsletStore", "IsletTestSupport"], swiftSettings: settings),
        .testTarget(
            name: "IsletTransportTests", dependencies: ["IsletTransport", "IsletTestSupport"], swiftSettings: settings),
        .testTarget(name: "IsletServerTests", dependencies: ["IsletServer", "IsletTestSupport"], swiftSettings: settings),
        .testTarget(
            name: "IsletBenchTests", dependencies: ["IsletBench", "IsletServer", "IsletTransport", "IsletTestSupport"],
            swiftSettings: settings),
        .testTarget(name: "IsletSnapshotTests", dependencies: ["IsletSnapshot"], swiftSettings: settings),
        .testTarget(
            name: "IsletCLITests",
            dependencies: ["IsletTestSupport", "IsletCore", "IsletRender", "IsletStore", "IsletTransport", log],
            swiftSettings: settings),
    ]
)
