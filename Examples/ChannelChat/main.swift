// A chat with a receiver app over a custom channel: each line read is sent on the app's namespace and the app's
// answer printed. Against cast-receiver, its echo app (E0C40001) answers every line with itself.
//
//     swift run ChannelChat [--host HOST:PORT] [--app E0C40001] [--namespace urn:x-cast:com.example.echo]
import CastDiscovery
import CastSession

let arguments = CommandLine.arguments
func option(_ name: String) -> String? { arguments.firstIndex(of: name).flatMap { arguments.dropFirst($0 + 1).first } }

let device = try await DiscoveryManager.device(at: option("--host"))
let context = CastContext(options: CastOptions(receiverApplicationID: option("--app") ?? "E0C40001"))
let session = try await context.sessionManager.startSession(with: device)
let chat = try GenericChannel(namespace: option("--namespace") ?? "urn:x-cast:com.example.echo")
session.add(chat)  // connects now: the app is running and lists the namespace
let app = session.application.displayName
print("Chatting with \(app) on \(device.friendlyName); end with Ctrl-D.")

while let line = readLine() {
    let reply = try await chat.sendTextMessage(line, awaitingReplyWithin: .seconds(10))
    switch reply {
    case .string(let text): print("\(app): \(text)")
    case .binary(let bytes): print("\(app): \(bytes.count) bytes")
    }
}
await context.sessionManager.endSession(stopCasting: true)
