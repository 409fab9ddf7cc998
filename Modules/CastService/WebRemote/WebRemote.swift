import HTTPTypes
import Hummingbird
import NIOCore

/// The web remote: a page, a style sheet and a script, compiled into the binary (no files to install, nothing
/// from a CDN) and served at `/`. The page talks to the same `/v1` API as any client and follows `/v1/events`, so
/// it holds no privileges of its own: with tokens configured it asks for one and sends it like curl would.
enum WebRemote {
    /// One file of the remote.
    struct Asset: Sendable {
        let path: String
        let contentType: String
        let bytes: [UInt8]
    }

    static let assets = [
        Asset(path: "/", contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html),
        Asset(path: "/remote.css", contentType: "text/css; charset=utf-8", bytes: PackageResources.remote_css),
        Asset(
            path: "/remote.js",
            contentType: "text/javascript; charset=utf-8",
            bytes: PackageResources.remote_js
        ),
    ]

    /// Serves the assets on `router` (GET, and HEAD with the same headers).
    static func register(on router: Router<ServiceRequestContext>) {
        for asset in assets {
            let body = ByteBuffer(bytes: asset.bytes)
            let tag = "\"\(String(fnv1a(asset.bytes), radix: 16))\""
            router.get(RouterPath(asset.path)) { request, _ in
                response(body: body, contentType: asset.contentType, tag: tag, request: request)
            }
            router.head(RouterPath(asset.path)) { request, _ in
                var answer = response(body: body, contentType: asset.contentType, tag: tag, request: request)
                answer.body = ResponseBody()
                return answer
            }
        }
    }

    /// The asset, or 304 when the browser already has this version. The headers keep the page to itself: its
    /// scripts and styles come only from castd, and no other site may frame it (clickjacking a remote control).
    private static func response(body: ByteBuffer, contentType: String, tag: String, request: Request) -> Response {
        var headers = HTTPFields()
        headers[.eTag] = tag
        headers[.cacheControl] = "no-cache"
        headers[.xContentTypeOptions] = "nosniff"
        headers[.contentSecurityPolicy] =
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' http: https: data:; "
            + "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        if request.headers[.ifNoneMatch] == tag {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = contentType
        headers[.contentLength] = String(body.readableBytes)
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    /// A stable version tag for an asset (FNV-1a, 64 bits): it changes when the file does, so no time stamps.
    private static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}
