import NIOCore

/// Runs tasks on one event loop, for work that follows a connection's I/O.
///
/// A task consuming a connection's messages on the global executor wakes one of its threads for every message
/// and hands each reply to yet another thread; with this executor as the task's preference, a message is
/// handled on the loop that read it, in the same turn of that loop. The handling must not block.
package final class EventLoopTaskExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    package init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
