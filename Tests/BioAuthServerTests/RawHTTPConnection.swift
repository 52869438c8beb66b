import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes sent to a live test server over a plain TCP socket: HTTP framing errors cannot be produced by an HTTP
/// client, which refuses to send them.
enum RawHTTPConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Sends `request` to 127.0.0.1:`port`, half-closes the connection when `closeAfterSending`, and returns all
    /// the server sent until it closed (or 5 seconds passed).
    /// `from` binds the connection to a source address first (any of 127.0.0.0/8 on Linux), to act as another client.
    static func exchange(port: Int, _ request: [UInt8], closeAfterSending: Bool = false, from source: String? = nil) throws -> [UInt8] {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw Failure(description: "bind \(source): \(errno)") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect: \(errno)") }
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard written > 0 else { throw Failure(description: "send: \(errno)") }
            sent += written
        }
        if closeAfterSending { shutdown(fd, Int32(SHUT_WR)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return received
    }

    /// A POST of `json` to `path` on a connection of its own; the response's status and body.
    static func post(
        port: Int,
        _ path: String,
        json: String,
        headers: [String] = [],
        from source: String? = nil
    ) throws -> (status: Int, body: String) {
        let head =
            ([
                "POST \(path) HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json", "Content-Length: \(json.utf8.count)",
                "Connection: close",
            ] + headers).joined(separator: "\r\n")
        let received = try exchange(port: port, Array((head + "\r\n\r\n" + json).utf8), from: source)
        guard let response = parse(received) else { throw Failure(description: "no HTTP response: \(String(decoding: received, as: UTF8.self))") }
        return (response.status, response.body)
    }

    /// Runs blocking socket work on a thread of its own: on the concurrency pool (two threads on a two-core machine)
    /// it would starve the very server it talks to.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// The status code, header block and body of the first response in `bytes`.
    static func parse(_ bytes: [UInt8]) -> (status: Int, headers: String, body: String)? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return nil }
        let head = String(text[..<split.lowerBound])
        let statusLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        return (status, head.lowercased(), String(text[split.upperBound...]))
    }
}
