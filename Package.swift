// swift-tools-version: 6.1
//
// swift-cast: a Google Cast sender framework for Linux.
// The layout follows the design card: library modules under Modules/, thin command-line apps under Apps/,
// tests under Tests/, scripts under Tools/. Every target lives at an explicit `path:`.

import PackageDescription

let package = Package(
    name: "swift-cast",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CastLogging", targets: ["CastLogging"]),
        .library(name: "CastTransport", targets: ["CastTransport"]),
        .library(name: "CastDiscovery", targets: ["CastDiscovery"]),
        .library(name: "CastMedia", targets: ["CastMedia"]),
        .library(name: "CastSession", targets: ["CastSession"]),
        .library(name: "CastControllers", targets: ["CastControllers"]),
        .library(name: "CastReceiver", targets: ["CastReceiver"]),
        .library(name: "CastStyleConfig", targets: ["CastStyleConfig"]),
        .library(name: "CastMediaServer", targets: ["CastMediaServer"]),
        .library(name: "CastService", targets: ["CastService"]),
        .library(name: "CastStreaming", targets: ["CastStreaming"]),
        .executable(name: "cast", targets: ["CastLauncher"]),
        .executable(name: "castd", targets: ["CastdLauncher"]),
        .executable(name: "cast-receiver", targets: ["CastReceiverLauncher"]),
        // The three in one binary that picks the tool by the name it runs under (Tools/package.sh installs it as
        // cast, with castd and cast-receiver as symlinks): the Swift runtime, Foundation and its ICU data once.
        .executable(name: "swift-cast", targets: ["SwiftCastLauncher"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // Without its default BinaryDelimitedStreams trait (Foundation's InputStream/OutputStream), which would make
        // classic Foundation visible to every module that imports SwiftProtobuf.
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0", traits: []),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", exact: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        // Both without their default FullFoundation trait, whose date formatters (DateFormatter, ISO8601DateFormatter)
        // would link classic Foundation and ICU's data into the binary; nothing here reads swift-configuration
        // (Hummingbird's ConfigurationSupport).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4", traits: []),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
    ],
    targets: [
        // MARK: - C shims (system libraries; C types never leave the module that wraps them)

        .systemLibrary(
            name: "COpenSSL",
            path: "Modules/COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CAvahi",
            path: "Modules/CAvahi",
            pkgConfig: "avahi-client",
            providers: [.apt(["libavahi-client-dev"])]
        ),
        .systemLibrary(
            name: "CLibXML2",
            path: "Modules/CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .systemLibrary(name: "CVPX", path: "Modules/CVPX", pkgConfig: "vpx", providers: [.apt(["libvpx-dev"])]),
        .systemLibrary(name: "COpus", path: "Modules/COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CAOM", path: "Modules/CAOM", pkgConfig: "aom", providers: [.apt(["libaom-dev"])]),
        .systemLibrary(
            name: "COpenH264",
            path: "Modules/COpenH264",
            pkgConfig: "openh264",
            providers: [.apt(["libopenh264-dev"])]
        ),
        .systemLibrary(
            name: "CMosquitto",
            path: "Modules/CMosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),

        // MARK: - Modules

        .target(
            name: "CastLogging",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Modules/CastLogging"
        ),
        .target(
            name: "CastTransport",
            dependencies: [
                "CastLogging",
                "COpenSSL",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            path: "Modules/CastTransport",
            exclude: ["Protos"]
        ),

        .target(
            name: "CastDiscovery",
            dependencies: [
                "CAvahi",
                "CastLogging",
                "CastTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Modules/CastDiscovery"
        ),
        .target(
            name: "CastMedia",
            dependencies: [
                "CastLogging",
                "CastTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Modules/CastMedia"
        ),
        .target(
            name: "CastSession",
            dependencies: [
                "CastDiscovery",
                "CastLogging",
                "CastMedia",
                "CastTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Modules/CastSession"
        ),
        .target(
            name: "CastControllers",
            dependencies: [
                "CastDiscovery",
                "CastLogging",
                "CastMedia",
                "CastSession",
                "CastStyleConfig",
                "CastTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Modules/CastControllers"
        ),
        .target(
            name: "CastStyleConfig",
            dependencies: [
                "CLibXML2",
                "CastDiscovery",
                "CastLogging",
                "CastSession",
                "CastTransport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/CastStyleConfig",
            exclude: ["README.md"],
            // Compiled in, not a resource bundle: the product is one static binary (Tools/package.sh).
            resources: [.embedInCode("Schemas/profile.xsd"), .embedInCode("Schemas/style.xsd")]
        ),
        .target(
            name: "CastMediaServer",
            dependencies: [
                "CastLogging",
                "CastMedia",
                "CastTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Modules/CastMediaServer"
        ),
        .target(
            name: "CastStreaming",
            dependencies: [
                "CAOM",
                "COpenH264",
                "COpus",
                "CVPX",
                "CastLogging",
                "CastMediaServer",
                "CastSession",
                "CastTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Modules/CastStreaming"
        ),
        .target(
            name: "CastReceiver",
            dependencies: [
                "CastDiscovery",
                "CastLogging",
                "CastMedia",
                "CastMediaServer",
                "CastStreaming",
                "CastTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Modules/CastReceiver"
        ),

        .target(
            name: "CastService",
            dependencies: [
                "CMosquitto",
                "CastDiscovery",
                "CastLogging",
                "CastMedia",
                "CastMediaServer",
                "CastSession",
                "CastStyleConfig",
                "CastTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            path: "Modules/CastService",
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"],
            resources: [
                .embedInCode("WebRemote/Assets/index.html"),
                .embedInCode("WebRemote/Assets/remote.css"),
                .embedInCode("WebRemote/Assets/remote.js"),
            ]
        ),

        // MARK: - Version (VERSION + git commit, stamped when either changes; `--version` of every app)

        .plugin(name: "VersionStamp", capability: .buildTool(), path: "Plugins/VersionStamp"),
        .target(name: "CastVersion", path: "Modules/CastVersion", plugins: ["VersionStamp"]),

        // MARK: - Apps (each a library with its command; Apps/Launchers holds the executables' entry points)

        .target(
            name: "cast",
            dependencies: [
                "CastControllers",
                "CastDiscovery",
                "CastLogging",
                "CastMedia",
                "CastMediaServer",
                "CastReceiver",
                "CastSession",
                "CastStreaming",
                "CastStyleConfig",
                "CastTransport",
                "CastVersion",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Apps/cast"
        ),
        .target(
            name: "castd",
            dependencies: [
                "CastDiscovery",
                "CastLogging",
                "CastService",
                "CastSession",
                "CastStyleConfig",
                "CastTransport",
                "CastVersion",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Apps/castd"
        ),
        .target(
            name: "cast-receiver",
            dependencies: [
                "CastDiscovery",
                "CastLogging",
                "CastReceiver",
                "CastStreaming",
                "CastTransport",
                "CastVersion",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Apps/cast-receiver"
        ),
        .executableTarget(name: "CastLauncher", dependencies: ["cast"], path: "Apps/Launchers/cast"),
        .executableTarget(name: "CastdLauncher", dependencies: ["castd"], path: "Apps/Launchers/castd"),
        .executableTarget(
            name: "CastReceiverLauncher",
            dependencies: ["cast-receiver"],
            path: "Apps/Launchers/cast-receiver"
        ),
        .executableTarget(
            name: "SwiftCastLauncher",
            dependencies: ["cast", "castd", "cast-receiver"],
            path: "Apps/Launchers/swift-cast"
        ),

        // MARK: - Examples (each the shortest correct way to do its task with the library products alone; README's
        // Examples table; Tools/examples.sh runs each against cast-receiver)

        .executableTarget(
            name: "CastVideosTerminal",
            dependencies: ["CastDiscovery", "CastMedia", "CastSession"],
            path: "Examples/CastVideosTerminal"
        ),
        .executableTarget(
            name: "ChannelChat",
            dependencies: ["CastDiscovery", "CastSession"],
            path: "Examples/ChannelChat"
        ),
        .executableTarget(
            name: "QueueWithAds",
            dependencies: ["CastDiscovery", "CastMedia", "CastSession"],
            path: "Examples/QueueWithAds"
        ),
        .executableTarget(
            name: "DeviceWatcher",
            dependencies: ["CastDiscovery", "CastSession"],
            path: "Examples/DeviceWatcher"
        ),
        .executableTarget(
            name: "ResumablePlayer",
            dependencies: ["CastDiscovery", "CastMedia", "CastSession"],
            path: "Examples/ResumablePlayer"
        ),

        // MARK: - Benchmarks (print figures; not run by the tests)

        .executableTarget(
            name: "cast-benchmarks",
            dependencies: [
                "CastDiscovery", "CastMedia", "CastMediaServer", "CastReceiver", "CastService", "CastSession",
                "CastTransport",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tools/Benchmarks"
        ),
        .executableTarget(
            name: "cast-soak",
            dependencies: [
                "CastDiscovery", "CastMedia", "CastReceiver", "CastSession", "CastTransport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tools/Soak"
        ),

        // MARK: - Fuzzing (libFuzzer targets for every parser of peer or file input; Tools/fuzz.sh)

        .executableTarget(
            name: "cast-fuzz",
            dependencies: [
                "CastDiscovery", "CastMedia", "CastMediaServer", "CastReceiver", "CastSession", "CastStreaming",
                "CastStyleConfig", "CastTransport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Tools/Fuzz",
            exclude: ["corpus", "make-seeds.py"]
        ),

        // MARK: - Tests

        .testTarget(
            name: "CastLoggingTests",
            dependencies: [
                "CastLogging", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/CastLoggingTests"
        ),
        .testTarget(
            name: "CastTransportTests",
            dependencies: [
                "CastTransport", "COpenSSL",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ],
            path: "Tests/CastTransportTests"
        ),
        .testTarget(
            name: "CastSessionTests",
            dependencies: [
                "CastDiscovery",
                "CastMedia",
                "CastReceiver",
                "CastSession",
                "CastTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/CastSessionTests"
        ),
        .testTarget(
            name: "CastCLITests",
            dependencies: [
                "cast",
                "CastControllers",
                "CastMedia",
                "CastTransport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/CastCLITests"
        ),
        .testTarget(
            name: "CastMediaTests",
            dependencies: [
                "CastMedia",
                "CastTransport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/CastMediaTests"
        ),
        .testTarget(
            name: "CastDiscoveryTests",
            dependencies: [
                "CastDiscovery",
                "CastMedia",
                "CastReceiver",
                "CastSession",
                "CastTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/CastDiscoveryTests"
        ),
        .testTarget(
            name: "CastStyleConfigTests",
            dependencies: ["CastStyleConfig", "CastSession", "CastLogging", "CastDiscovery", "CastTransport"],
            path: "Tests/CastStyleConfigTests"
        ),
        .testTarget(
            name: "CastStreamingTests",
            dependencies: [
                "CastReceiver",
                "CastSession",
                "CastStreaming",
                "CastTransport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/CastStreamingTests"
        ),
        .testTarget(
            name: "CastMediaServerTests",
            dependencies: [
                "CastMediaServer",
                "CastTransport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/CastMediaServerTests"
        ),
        .testTarget(
            name: "CastServiceTests",
            dependencies: [
                "CastDiscovery",
                "CastMedia",
                "CastReceiver",
                "CastService",
                "CastStyleConfig",
                "CastSession",
                "CastTransport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/CastServiceTests"
        ),
        .testTarget(
            name: "CastReceiverTests",
            dependencies: [
                "CastReceiver",
                "cast-receiver",
                "CastTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/CastReceiverTests",
            resources: [.copy("Golden")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// MARK: - Settings shared by every Swift target

for target in package.targets where target.type != .system && target.type != .plugin {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}

// MARK: - Documentation

// swift-docc-plugin, for `swift package generate-documentation` and `preview-documentation` over the DocC catalogs
// (Modules/*/*.docc), only when asked for: `CAST_DOCC_PLUGIN=1 swift package …`. With the plugin in the graph
// every `swift build` compiles SwiftProtobuf again (40–70 s on the 2-core machine); the test command checks the
// catalogs from the debug build's symbol graphs instead (Tools/docs.sh).
if Context.environment["CAST_DOCC_PLUGIN"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
