import NIOConcurrencyHelpers
import NIOCore

/// A byte stream read once (standard input, a pipe) and served live: every connected player gets the bytes
/// from when it connected. Reading waits while nobody is connected, and each chunk waits until every player
/// took it, so a slow device slows the source instead of filling memory.
final class LiveStream: Sendable {
    /// Writes one chunk to a player and completes once written; `nil` ends that player's response.
    typealias Writer = @Sendable (ByteBuffer?) async throws -> Void

    private struct State {
        var players: [Int: Writer] = [:]
        var nextID = 0
        var ended = false
        var waitingForPlayer: CheckedContinuation<Bool, Never>?
    }

    private let state = NIOLockedValueBox(State())

    /// Adds a player; `nil` once the stream has ended (answered 404: there is nothing more to play).
    func connect(_ writer: @escaping Writer) -> Int? {
        let (id, waiting) = state.withLockedValue { state -> (Int?, CheckedContinuation<Bool, Never>?) in
            guard !state.ended else { return (nil, nil) }
            let id = state.nextID
            state.nextID += 1
            state.players[id] = writer
            defer { state.waitingForPlayer = nil }
            return (id, state.waitingForPlayer)
        }
        waiting?.resume(returning: true)
        return id
    }

    func disconnect(_ id: Int) {
        _ = state.withLockedValue { $0.players.removeValue(forKey: id) }
    }

    /// Reads chunks with `next` until it returns `nil` or throws, handing each to the players connected then.
    func pump(_ next: () async throws -> ByteBuffer?) async {
        guard await waitForPlayer() else { return end() }
        do {
            while let chunk = try await next() {
                var players = currentPlayers()
                while players.isEmpty {
                    guard await waitForPlayer() else { return end() }
                    players = currentPlayers()
                }
                await withTaskGroup(of: (Int, Bool).self) { group in
                    for (id, write) in players {
                        group.addTask { ((try? await write(chunk)) != nil) ? (id, true) : (id, false) }
                    }
                    for await (id, written) in group where !written { disconnect(id) }
                }
            }
        } catch {
            // The source failed: end what was sent so far, as a closed pipe would.
        }
        end()
    }

    /// Ends the stream now (the server stops).
    func cancel() {
        let waiting = state.withLockedValue { state -> CheckedContinuation<Bool, Never>? in
            state.ended = true
            defer { state.waitingForPlayer = nil }
            return state.waitingForPlayer
        }
        waiting?.resume(returning: false)
        end()
    }

    private func currentPlayers() -> [(Int, Writer)] {
        state.withLockedValue { state in state.players.map { ($0.key, $0.value) } }
    }

    private func waitForPlayer() async -> Bool {
        await withCheckedContinuation { continuation in
            let answer: Bool? = state.withLockedValue { state in
                if state.ended { return false }
                if !state.players.isEmpty { return true }
                state.waitingForPlayer = continuation
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    private func end() {
        let players = state.withLockedValue { state -> [Writer] in
            state.ended = true
            defer { state.players.removeAll() }
            return Array(state.players.values)
        }
        for write in players { Task { try? await write(nil) } }
    }
}
