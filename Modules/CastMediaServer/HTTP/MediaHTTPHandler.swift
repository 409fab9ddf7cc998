import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Answers one connection's requests, one at a time (NIO's pipelining helper holds the next until this one
/// ends): routes by token, opens files on the thread pool, answers ranges and validators, streams files
/// with `FileRegion` (sendfile, so a 4 GiB file costs no memory), and records every answer in the fetch log.
final class MediaHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let registry: ShareRegistry
    private let fetchLog: FetchLog
    private let threadPool: NIOThreadPool
    private let logger: Logger
    private let fileCheckInterval: TimeAmount
    private var request: HTTPRequestHead?
    private var peer = "unknown"
    private var liveID: (stream: LiveStream, id: Int)?

    init(
        registry: ShareRegistry,
        fetchLog: FetchLog,
        threadPool: NIOThreadPool,
        logger: Logger,
        fileCheckInterval: TimeAmount = .milliseconds(500)
    ) {
        self.registry = registry
        self.fetchLog = fetchLog
        self.threadPool = threadPool
        self.logger = logger
        self.fileCheckInterval = fileCheckInterval
    }

    func channelActive(context: ChannelHandlerContext) {
        peer = context.remoteAddress?.ipAddress.map(FetchLog.normalized) ?? "unknown"
        fetchLog.connected(peer: peer)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let liveID { liveID.stream.disconnect(liveID.id) }
        liveID = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
        case .body:
            break  // Bodies are not expected; GET, HEAD and OPTIONS have none worth reading.
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Malformed HTTP: NIO's error handler answers 400 where it can; either way the connection ends.
        logger.debug("media server connection from \(peer) failed: \(error)")
        context.close(promise: nil)
    }

    // MARK: - Routing

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let isHead = head.method == .HEAD
        guard head.method == .GET || isHead else {
            if head.method == .OPTIONS { return answerPreflight(head, context: context) }
            return answerError(
                .methodNotAllowed,
                head: head,
                context: context,
                extra: [("Allow", "GET, HEAD, OPTIONS")]
            )
        }
        guard let (media, route) = registry.route(head.uri, peer: peer, isHead: isHead) else {
            return answerError(.notFound, head: head, context: context)
        }
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        switch route {
        case .file(let path, let contentType):
            threadPool.runIfActive(eventLoop: loop) {
                OpenedFile.openForReading(path: path, inside: nil, contentType: contentType)
            }.whenComplete { result in
                let (handler, context) = bound.value
                handler.answer(file: try? result.get(), head: head, itemID: media.id, context: context)
            }
        case .folderEntry(let root, let relativePath):
            let path = root + "/" + relativePath.joined(separator: "/")
            threadPool.runIfActive(eventLoop: loop) {
                OpenedFile.openForReading(path: path, inside: root, contentType: nil)
            }.whenComplete { result in
                let (handler, context) = bound.value
                handler.answer(file: try? result.get(), head: head, itemID: media.id, context: context)
            }
        case .bytes(let bytes, let contentType, let entityTag, let created):
            answer(
                bytes: bytes,
                representation: .init(contentType: contentType, entityTag: entityTag, modified: created),
                head: head,
                itemID: media.id,
                context: context
            )
        case .responder(let responder, let request):
            let threadPool = self.threadPool
            let promise = loop.makePromise(of: (MediaResponse, OpenedFile?).self)
            promise.completeWithTask {
                let response = try await responder.respond(to: request)
                guard case .file(let path, let contentType) = response else { return (response, nil) }
                let file = try await threadPool.runIfActive {
                    OpenedFile.openForReading(path: path, inside: nil, contentType: contentType)
                }
                return (response, file)
            }
            promise.futureResult.whenComplete { result in
                let (handler, context) = bound.value
                switch result {
                case .success((.file, let file)):
                    handler.answer(file: file, head: head, itemID: media.id, context: context)
                case .success((.bytes(let bytes, let contentType), _)):
                    let tag = "\"\(String(bytes.fingerprint, radix: 16))\""
                    handler.answer(
                        bytes: bytes,
                        representation: .init(contentType: contentType, entityTag: tag, modified: nil),
                        head: head,
                        itemID: media.id,
                        context: context
                    )
                case .success((.notFound, _)):
                    handler.answerError(.notFound, head: head, context: context, itemID: media.id)
                case .failure(let error):
                    handler.logger.warning("media server: \(media.name)/\(request.path) failed: \(error)")
                    handler.answerError(.internalServerError, head: head, context: context, itemID: media.id)
                }
            }
        case .stream(let stream, let contentType):
            answer(stream: stream, contentType: contentType, head: head, itemID: media.id, context: context)
        }
    }

    // MARK: - Answers

    /// The validators and type of what is about to be sent.
    struct Representation {
        var contentType: String
        var entityTag: String
        var modified: Int?
    }

    private func answer(file: OpenedFile?, head: HTTPRequestHead, itemID: String, context: ChannelHandlerContext) {
        guard let file else { return answerError(.notFound, head: head, context: context, itemID: itemID) }
        let representation = Representation(
            contentType: file.contentType,
            entityTag: file.entityTag,
            modified: file.modified
        )
        let plan = Self.plan(head: head, size: file.size, representation: representation)
        let handle = file.handle
        guard head.method != .HEAD, let range = plan.range, !range.isEmpty else {
            return send(plan, body: nil, head: head, itemID: itemID, context: context) { try? handle.close() }
        }
        let body = IOData.fileRegion(
            FileRegion(fileHandle: handle, readerIndex: Int(range.lowerBound), endIndex: Int(range.upperBound))
        )
        let watch = watchLength(of: handle, promised: range.upperBound, context: context)
        send(plan, body: body, head: head, itemID: itemID, context: context) {
            watch.cancel()
            try? handle.close()
        }
    }

    /// sendfile finds nothing past a file's end, and NIO tries again at once, for ever: a file that shrinks while
    /// it is sent (rewritten, truncated) would hold the connection open with no data and the server spinning.
    /// So the file's length is looked at while its body is sent, and once it is shorter than the length promised
    /// the connection is closed: a short body is the only honest signal left to the client.
    private func watchLength(of handle: NIOFileHandle, promised end: UInt64, context: ChannelHandlerContext)
        -> RepeatedTask
    {
        let channel = context.channel
        let (logger, peer) = (self.logger, self.peer)
        return context.eventLoop.scheduleRepeatedTask(initialDelay: fileCheckInterval, delay: fileCheckInterval) {
            task in
            let length = try? handle.withUnsafeFileDescriptor { descriptor -> UInt64? in
                var info = stat()
                return fstat(descriptor, &info) == 0 ? UInt64(info.st_size) : nil
            }
            guard let length = length ?? nil, length < end else { return }
            logger.warning(
                "media server: a file sent to \(peer) shrank to \(length) bytes of \(end): connection closed"
            )
            task.cancel()
            channel.close(promise: nil)
        }
    }

    private func answer(
        bytes: [UInt8],
        representation: Representation,
        head: HTTPRequestHead,
        itemID: String,
        context: ChannelHandlerContext
    ) {
        let plan = Self.plan(head: head, size: UInt64(bytes.count), representation: representation)
        var body: IOData?
        if head.method != .HEAD, let range = plan.range, !range.isEmpty {
            body = .byteBuffer(
                context.channel.allocator.buffer(bytes: bytes[Int(range.lowerBound)..<Int(range.upperBound)])
            )
        }
        send(plan, body: body, head: head, itemID: itemID, context: context) {}
    }

    private func answer(
        stream: LiveStream,
        contentType: String,
        head: HTTPRequestHead,
        itemID: String,
        context: ChannelHandlerContext
    ) {
        var headers = Self.commonHeaders(contentType: contentType)
        headers.add(name: "Cache-Control", value: "no-cache, no-store")
        headers.add(name: "Connection", value: "close")
        if head.method == .HEAD {
            record(head, itemID: itemID, status: .ok)
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))),
                promise: nil
            )
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        let channel = context.channel
        let id = stream.connect { chunk in
            if let chunk {
                try await channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(chunk)))
            } else {
                try? await channel.writeAndFlush(HTTPServerResponsePart.end(nil))
                try? await channel.close()
            }
        }
        guard let id else { return answerError(.notFound, head: head, context: context, itemID: itemID) }
        liveID = (stream, id)
        record(head, itemID: itemID, status: .ok)
        context.writeAndFlush(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))),
            promise: nil
        )
    }

    /// What to answer for a representation of `size` bytes: status, headers and the byte range of the body
    /// (half-open; `nil` for none).
    struct Plan {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var range: Range<UInt64>?
    }

    static func plan(head: HTTPRequestHead, size: UInt64, representation: Representation) -> Plan {
        var headers = commonHeaders(contentType: representation.contentType)
        headers.add(name: "Accept-Ranges", value: "bytes")
        headers.add(name: "ETag", value: representation.entityTag)
        if let modified = representation.modified {
            headers.add(name: "Last-Modified", value: HTTPDate.format(modified))
        }
        if notModified(head.headers, representation) {
            return Plan(status: .notModified, headers: headers, range: nil)
        }
        if let range = ByteRangeRequest(header: head.headers.first(name: "Range")),
            rangeStillApplies(head.headers, representation)
        {
            guard let part = range.resolve(size: size) else {
                headers.add(name: "Content-Range", value: "bytes */\(size)")
                headers.add(name: "Content-Length", value: "0")
                return Plan(status: .rangeNotSatisfiable, headers: headers, range: nil)
            }
            headers.add(name: "Content-Range", value: "bytes \(part.lowerBound)-\(part.upperBound)/\(size)")
            headers.add(name: "Content-Length", value: "\(part.count)")
            return Plan(status: .partialContent, headers: headers, range: part.lowerBound..<(part.upperBound + 1))
        }
        headers.add(name: "Content-Length", value: "\(size)")
        return Plan(status: .ok, headers: headers, range: 0..<size)
    }

    /// `If-None-Match` (weak comparison), else `If-Modified-Since`.
    private static func notModified(_ headers: HTTPHeaders, _ representation: Representation) -> Bool {
        if let tags = headers.first(name: "If-None-Match") {
            let wanted = representation.entityTag.trimmingPrefix("W/")
            return tags.split(separator: ",").contains {
                let tag = $0.trimmingASCIISpaces()
                return tag == "*" || tag.trimmingPrefix("W/") == wanted
            }
        }
        if let since = headers.first(name: "If-Modified-Since").flatMap(HTTPDate.parse),
            let modified = representation.modified
        {
            return modified <= since
        }
        return false
    }

    /// `If-Range`: the range holds only if the validator still matches (strong tag, or the exact date).
    private static func rangeStillApplies(_ headers: HTTPHeaders, _ representation: Representation) -> Bool {
        guard let condition = headers.first(name: "If-Range")?.trimmingASCIISpaces() else { return true }
        if condition.hasPrefix("\"") { return condition == representation.entityTag }
        if condition.hasPrefix("W/") { return false }
        guard let date = HTTPDate.parse(String(condition)), let modified = representation.modified else { return false }
        return date == modified
    }

    static func commonHeaders(contentType: String) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Server", value: "swift-cast")
        // Cast players fetch with CORS for text tracks, HLS and DASH: without these, subtitles never show.
        headers.add(name: "Access-Control-Allow-Origin", value: "*")
        headers.add(
            name: "Access-Control-Expose-Headers",
            value: "Accept-Ranges, Content-Length, Content-Range, Content-Type, ETag, Last-Modified"
        )
        return headers
    }

    private func answerPreflight(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = Self.commonHeaders(contentType: "text/plain")
        headers.add(name: "Access-Control-Allow-Methods", value: "GET, HEAD, OPTIONS")
        headers.add(
            name: "Access-Control-Allow-Headers",
            value: head.headers.first(name: "Access-Control-Request-Headers") ?? "Range, Origin, Accept, Content-Type"
        )
        headers.add(name: "Access-Control-Max-Age", value: "86400")
        headers.add(name: "Content-Length", value: "0")
        send(
            Plan(status: .noContent, headers: headers, range: nil),
            body: nil,
            head: head,
            itemID: nil,
            context: context
        ) {}
    }

    private func answerError(
        _ status: HTTPResponseStatus,
        head: HTTPRequestHead,
        context: ChannelHandlerContext,
        itemID: String? = nil,
        extra: [(String, String)] = []
    ) {
        var headers = Self.commonHeaders(contentType: "text/plain; charset=utf-8")
        let text = "\(status.code) \(status.reasonPhrase)\n"
        headers.add(name: "Content-Length", value: "\(text.utf8.count)")
        for (name, value) in extra { headers.add(name: name, value: value) }
        let body = head.method == .HEAD ? nil : IOData.byteBuffer(context.channel.allocator.buffer(string: text))
        send(
            Plan(status: status, headers: headers, range: nil),
            body: body,
            head: head,
            itemID: itemID ?? ShareRegistry.token(of: head.uri),
            context: context
        ) {}
    }

    private func send(
        _ plan: Plan,
        body: IOData?,
        head: HTTPRequestHead,
        itemID: String?,
        context: ChannelHandlerContext,
        finally cleanUp: @escaping @Sendable () -> Void
    ) {
        var headers = plan.headers
        let keepAlive = head.isKeepAlive
        if !keepAlive {
            headers.replaceOrAdd(name: "Connection", value: "close")
        } else if head.version.minor == 0 {
            headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
        record(head, itemID: itemID, status: plan.status)
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: plan.status, headers: headers))),
            promise: nil
        )
        if let body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { result in
            cleanUp()
            if !keepAlive || (try? result.get()) == nil { channel.close(promise: nil) }
        }
    }

    private func record(_ head: HTTPRequestHead, itemID: String?, status: HTTPResponseStatus) {
        fetchLog.record(
            FetchRecord(
                itemID: itemID,
                peer: peer,
                method: head.method.rawValue,
                range: head.headers.first(name: "Range"),
                status: Int(status.code)
            )
        )
    }
}

extension Array where Element == UInt8 {
    /// FNV-1a: a strong validator for bytes in memory (not a security property; tokens are what protect).
    var fingerprint: UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in self {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
}

extension StringProtocol {
    fileprivate func trimmingPrefix(_ prefix: String) -> SubSequence {
        hasPrefix(prefix) ? self[index(startIndex, offsetBy: prefix.count)...] : self[...]
    }
}
