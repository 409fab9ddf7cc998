import CastReceiver
import CastService
import CastStyleConfig
import Foundation
import NIOConcurrencyHelpers
import Testing

/// Safe by default: binds, bearer tokens, cross-origin requests, body limits and rate limits, over real HTTP.
@Suite struct AccessTests {
    @Test func onlyLoopbackListensWithoutTokens() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:8765").isLoopback)
        #expect(try ListenAddress(parsing: "127.0.0.2:1").isLoopback)
        #expect(try ListenAddress(parsing: "[::1]:1").isLoopback)
        #expect(try ListenAddress(parsing: "localhost:0").isLoopback)
        #expect(try !ListenAddress(parsing: "0.0.0.0:8765").isLoopback)
        #expect(try !ListenAddress(parsing: "127.0.0.1.example.org:80").isLoopback)
        #expect(try !ListenAddress(parsing: "[::]:8765").isLoopback)

        var options = CastServiceServer.Options()
        options.address = try ListenAddress(parsing: "0.0.0.0:8765")
        let error = #expect(throws: CastServiceError.self) { try options.validate() }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.field == "listen")
        options.tokens = [BearerTokenHash(hashing: "secret")]
        try options.validate()

        for bad in ["8765", "host:", "host:70000", ":80"] {
            let error = #expect(throws: CastServiceError.self) { try ListenAddress(parsing: bad) }
            #expect(error?.code == .invalidConfiguration, "\(bad)")
        }
    }

    @Test func aProfilesDaemonSectionBecomesTheServersOptions() throws {
        let defaults = try CastServiceServer.Options(DaemonSettings())
        let builtIn = CastServiceServer.Options()
        #expect(defaults.address == builtIn.address)
        #expect(defaults.rateLimit == builtIn.rateLimit)
        #expect(defaults.maximumBodySize == builtIn.maximumBodySize)
        #expect(defaults.tokens.isEmpty && defaults.allowedOrigins.isEmpty)

        let profile = try CastProfile(
            xml: """
                <castProfile xmlns="urn:swift-cast:profile:1">
                  <daemon listen="0.0.0.0:9000" requestsPerSecond="none" maximumBodySize="2048">
                    <token hash="\(BearerTokenHash(hashing: "secret"))"/>
                    <allowedOrigin origin="https://home.example"/>
                  </daemon>
                </castProfile>
                """
        ).resolved()
        let options = try CastServiceServer.Options(profile.daemon)
        #expect(options.address == ListenAddress(host: "0.0.0.0", port: 9000))
        #expect(options.tokens == [BearerTokenHash(hashing: "secret")])
        #expect(options.rateLimit == nil)
        #expect(options.maximumBodySize == 2048)
        #expect(options.allowedOrigins == ["https://home.example"])

        var open = profile.daemon
        open.tokenHashes = []
        let error = #expect(throws: CastServiceError.self) { try CastServiceServer.Options(open) }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func tokenHashesRoundTripAndRefuseOtherForms() throws {
        let (token, hash) = BearerTokenHash.generate()
        #expect(token.count == 64)
        #expect(hash.matches(token))
        #expect(!hash.matches(token + "x"))
        #expect(try BearerTokenHash(parsing: hash.description) == hash)
        // SHA-256 of "abc", the FIPS 180-2 test vector.
        #expect(
            BearerTokenHash(hashing: "abc").description
                == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        for bad in [
            "", "sha256:", "sha256:abc", "md5:" + String(repeating: "0", count: 64),
            "sha256:" + String(repeating: "g", count: 64), "sha256:" + String(repeating: "0", count: 66),
        ] {
            let error = #expect(throws: CastServiceError.self) { try BearerTokenHash(parsing: bad) }
            #expect(error?.code == .invalidConfiguration, "\(bad)")
        }
    }

    @Test func tokensAreRequiredOnceSet() async throws {
        let (token, hash) = BearerTokenHash.generate()
        var options = CastServiceServer.Options()
        options.tokens = [BearerTokenHash(hashing: "another client"), hash]
        try await withHub { hub, _ in
            try await withServer(hub, options: options) { port in
                let missing = try await TestHTTP.send(port: port, "GET", "/v1/devices")
                #expect(missing.status == 401)
                #expect(missing.header("WWW-Authenticate") == "Bearer realm=\"castd\"")
                #expect(missing.header("Content-Type") == "application/problem+json")
                #expect(missing.json?["code"]?.stringValue == "unauthorized")

                let wrong = try await TestHTTP.send(
                    port: port,
                    "GET",
                    "/v1/devices",
                    headers: [("Authorization", "Bearer \(token)0")]
                )
                #expect(wrong.status == 401)
                let basic = try await TestHTTP.send(
                    port: port,
                    "GET",
                    "/v1/devices",
                    headers: [("Authorization", "Basic \(token)")]
                )
                #expect(basic.status == 401)

                let right = try await TestHTTP.send(
                    port: port,
                    "GET",
                    "/v1/devices",
                    headers: [("Authorization", "bearer \(token)")]
                )
                #expect(right.status == 200)
                #expect(right.json?["devices"]?.arrayValue?.count == 1)
            }
        }
    }

    @Test func eachClientIsRateLimitedByTheInjectedClock() async throws {
        let clock = ManualClock()
        var options = CastServiceServer.Options()
        options.rateLimit = RateLimit(requestsPerSecond: 2, burst: 3)
        try await withHub { hub, _ in
            try await withServer(hub, options: options, clock: clock) { port in
                for _ in 0..<3 {
                    #expect(try await TestHTTP.send(port: port, "GET", "/v1/devices").status == 200)
                }
                let limited = try await TestHTTP.send(port: port, "GET", "/v1/devices")
                #expect(limited.status == 429)
                #expect(limited.header("Retry-After") == "1")
                #expect(limited.json?["code"]?.stringValue == "rateLimited")

                clock.advance(by: .milliseconds(500))  // one request's worth at 2 per second
                #expect(try await TestHTTP.send(port: port, "GET", "/v1/devices").status == 200)
                #expect(try await TestHTTP.send(port: port, "GET", "/v1/devices").status == 429)
                clock.advance(by: .seconds(60))  // the bucket refills to its burst, not beyond
                for _ in 0..<3 {
                    #expect(try await TestHTTP.send(port: port, "GET", "/v1/devices").status == 200)
                }
                #expect(try await TestHTTP.send(port: port, "GET", "/v1/devices").status == 429)
            }
        }
    }

    @Test func bodiesOverTheLimitAreRefusedWhetherDeclaredOrStreamed() async throws {
        var options = CastServiceServer.Options()
        options.maximumBodySize = 256
        try await withHub { hub, emulator in
            let id = hub.devices[0].device.id
            try await withServer(hub, options: options) { port in
                let padding = String(repeating: "x", count: 400)
                let declared = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"url":"http://example.com/a.mp4","title":"\#(padding)"}"#
                )
                #expect(declared.status == 413)
                #expect(declared.json?["code"]?.stringValue == "bodyTooLarge")

                let chunked = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    chunkedJSON: #"{"url":"http://example.com/a.mp4","title":"\#(padding)"}"#
                )
                #expect(chunked.status == 413)
                #expect(emulator.devices[0].launches.isEmpty)

                let small = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    chunkedJSON: #"{"url":"http://example.com/a.mp4"}"#
                )
                #expect(small.status == 200)
            }
        }
    }

    /// DNS rebinding: a page whose name an attacker made resolve to 127.0.0.1 sends castd "same-origin" requests
    /// naming its own host. Without tokens castd answers only requests for a loopback host (it loaded media for
    /// the attacker's page).
    @Test func requestsForAnotherHostAreRefusedWithoutTokens() async throws {
        try await withHub { hub, emulator in
            let id = hub.devices[0].device.id
            try await withServer(hub) { port in
                let rebound = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"url":"http://attacker.test/evil.mp4"}"#,
                    headers: [("Origin", "http://attacker.test:\(port)")],
                    host: "attacker.test:\(port)"
                )
                #expect(rebound.status == 403)
                #expect(rebound.json?["code"]?.stringValue == "forbiddenOrigin")
                #expect(emulator.devices[0].launches.isEmpty)
                let listed = try await TestHTTP.send(port: port, "GET", "/v1/devices", host: "attacker.test")
                #expect(listed.status == 403)
                for host in ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)", "LOCALHOST"] {
                    #expect(
                        try await TestHTTP.send(port: port, "GET", "/v1/devices", host: host).status == 200,
                        "\(host)"
                    )
                }
            }
        }
    }

    @Test func otherSitesPagesAreRefusedAndAllowedOriginsGetCORS() async throws {
        var options = CastServiceServer.Options()
        options.allowedOrigins = ["https://home.example"]
        try await withHub { hub, emulator in
            let id = hub.devices[0].device.id
            try await withServer(hub, options: options) { port in
                // A cross-site form post: no preflight, and it must not run.
                let forged = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"url":"http://example.com/a.mp4"}"#,
                    headers: [("Origin", "https://evil.example")]
                )
                #expect(forged.status == 403)
                #expect(forged.json?["code"]?.stringValue == "forbiddenOrigin")
                #expect(forged.header("Access-Control-Allow-Origin") == nil)
                #expect(emulator.devices[0].launches.isEmpty)

                let preflight = try await TestHTTP.send(
                    port: port,
                    "OPTIONS",
                    "/v1/devices/\(id)/volume",
                    headers: [("Origin", "https://home.example"), ("Access-Control-Request-Method", "PUT")]
                )
                #expect(preflight.status == 204)
                #expect(preflight.header("Access-Control-Allow-Origin") == "https://home.example")
                #expect(preflight.header("Access-Control-Allow-Methods")?.contains("PUT") == true)
                #expect(preflight.header("Access-Control-Allow-Headers")?.contains("Authorization") == true)

                let allowed = try await TestHTTP.send(
                    port: port,
                    "GET",
                    "/v1/devices",
                    headers: [("Origin", "https://home.example")]
                )
                #expect(allowed.status == 200)
                #expect(allowed.header("Access-Control-Allow-Origin") == "https://home.example")
                #expect(allowed.header("Vary") == "Origin")

                let sameOrigin = try await TestHTTP.send(
                    port: port,
                    "GET",
                    "/v1/devices",
                    headers: [("Origin", "http://127.0.0.1:\(port)")]
                )
                #expect(sameOrigin.status == 200)
                #expect(sameOrigin.header("Access-Control-Allow-Origin") == nil)
            }
        }
    }

    @Test func readsNeverChangeState() async throws {
        try await withHub { hub, emulator in
            let id = hub.devices[0].device.id
            try await withServer(hub) { port in
                for (method, path, allowed) in [
                    ("GET", "/v1/devices/\(id)/media/pause", "POST"), ("GET", "/v1/devices/\(id)/app", "DELETE, POST"),
                    ("GET", "/v1/devices/\(id)/volume", "PUT"), ("HEAD", "/v1/devices/\(id)/media", "POST"),
                ] {
                    let reply = try await TestHTTP.send(port: port, method, path)
                    #expect(reply.status == 405, "\(method) \(path)")
                    #expect(reply.header("Allow") == allowed, "\(method) \(path)")
                    #expect(method == "HEAD" || reply.json?["code"]?.stringValue == "methodNotAllowed")
                }
                #expect(emulator.devices[0].launches.isEmpty)
                let listing = try await TestHTTP.send(port: port, "DELETE", "/v1/devices")
                #expect(listing.status == 405)
                #expect(listing.header("Allow") == "GET, HEAD")
                // HEAD is answered where GET is (it was 405, naming HEAD among the allowed methods).
                for path in ["/v1/devices", "/v1/devices/\(id)", "/metrics"] {
                    let head = try await TestHTTP.send(port: port, "HEAD", path)
                    let get = try await TestHTTP.send(port: port, "GET", path)
                    #expect(head.status == 200, "HEAD \(path)")
                    #expect(head.body.isEmpty)
                    #expect(head.header("Content-Type") == get.header("Content-Type"), "HEAD \(path)")
                }
                let unknown = try await TestHTTP.send(port: port, "GET", "/v1/nothing/here")
                #expect(unknown.status == 404)
                #expect(unknown.header("Content-Type") == "application/problem+json")
                #expect(unknown.json?["code"]?.stringValue == "routeNotFound")
            }
        }
    }
}

/// A clock that moves only when told: the rate limit's refills are seen without waiting.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let current = NIOLockedValueBox(Instant(offset: .zero))

    var now: Instant { current.withLockedValue { $0 } }
    var minimumResolution: Duration { .nanoseconds(1) }

    func advance(by duration: Duration) {
        current.withLockedValue { $0 = $0.advanced(by: duration) }
    }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        // The rate limit only reads the time; nothing sleeps on this clock.
        throw CancellationError()
    }
}
