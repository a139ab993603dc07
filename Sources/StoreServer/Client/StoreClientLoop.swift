import Net

/// The process's one event loop for store clients' requests. A request is sent and its response
/// read on this loop, with non-blocking sockets, so a request costs no thread of its own: before,
/// each waited in a blocking `recv` on a pool thread, two thread switches per request. nil when
/// the loop cannot be made (epoll or eventfd refused): requests then fail with a clear error.
enum StoreClientLoop {
    static let shared: EventLoop? = {
        guard let loop = try? EventLoop(name: "zonertc-client") else { return nil }
        loop.start()
        return loop
    }()
}
