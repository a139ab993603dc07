import Foundation
import RecordStore
@testable import StoreServer
import Testing

/// The call page as the daemon serves it: the embedded files are web/ exactly (every file listed), each
/// with its media type; the report endpoint keeps a user's report for that user only.
@Suite("Call page")
struct CallPageTests {
    static let web = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/StoreServer/CallPage/web").standardized

    @Test("CallPage.files holds every file of web/, byte for byte (else list it in CallPage+Files.swift)")
    func embeddedFilesAreCurrent() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.web.path).sorted()
        #expect(names.sorted() == CallPage.files.keys.sorted())
        for name in names {
            let disk = try [UInt8](Data(contentsOf: Self.web.appendingPathComponent(name)))
            #expect(CallPage.files[name] == disk, "\(name) differs from web/")
        }
    }

    @Test("GET /call is the page, /call/<file> its modules and stylesheet; anything else 404")
    func routes() throws {
        let page = try #require(CallPage.response(path: "/call"))
        #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(String(decoding: page.body, as: UTF8.self).contains(#"src="/call/main.js""#))
        #expect(CallPage.response(path: "/call/main.js")?.headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(CallPage.response(path: "/call/call.css")?.headers["Content-Type"] == "text/css; charset=utf-8")
        #expect(CallPage.response(path: "/call/../users.json") == nil)
        #expect(CallPage.response(path: "/call/nothing.js") == nil)
        #expect(CallPage.response(path: "/database") == nil)
    }

    @Test("every module the page imports is served")
    func importsResolve() throws {
        for (name, bytes) in CallPage.files where name.hasSuffix(".js") {
            let text = String(decoding: bytes, as: UTF8.self)
            for line in text.split(separator: "\n") where line.hasPrefix("import ") {
                guard let from = line.range(of: #"from "\./"#) else { continue }
                let module = line[from.upperBound...].prefix { $0 != "\"" }
                #expect(CallPage.files[String(module)] != nil, "\(name) imports \(module)")
            }
        }
    }

    @Test("reports are kept per (room, user), bounded in count")
    func reportsBounded() {
        let reports = CallReports()
        reports.put(room: "room_a", user: "u", body: Array("{}".utf8))
        #expect(reports.report(room: "room_a", user: "u") == Array("{}".utf8))
        #expect(reports.report(room: "room_a", user: "v") == nil)
        for i in 0..<(CallReports.maxReports + 5) { reports.put(room: "room_b", user: "u\(i)", body: [1]) }
        #expect(reports.report(room: "room_a", user: "u") == nil, "the oldest went first")
        #expect(reports.report(room: "room_b", user: "u\(CallReports.maxReports + 4)") == [1])
    }

    @Test("/call/report: only the user itself posts and reads its report; not JSON, too large, unnamed refused")
    func reportEndpointRefusesStrangers() async throws {
        let store = try EmbeddedStore(options: .inMemoryForTests)
        defer { store.close() }
        let users = try UserRegistry(directory: nil)
        let alice = try users.add("alice"), eve = try users.add("eve")
        let api = StoreAPI(store: store, users: users, allowRegister: false)
        func send(_ method: String, _ target: String, token: String?, body: [UInt8] = []) async -> Int {
            var headers = HTTPHeaders()
            if let token { headers.add("Authorization", "Bearer \(token)") }
            guard case .response(let r) = await api.handle(HTTPRequest(method: method, target: target,
                                                                      headers: headers, body: body)) else { return 0 }
            return r.status
        }
        let report = "/call/report?room=room_abcd1234&me=alice"
        #expect(await send("POST", report, token: nil, body: Array("{}".utf8)) == 421)
        #expect(await send("POST", report, token: "nonsense", body: Array("{}".utf8)) == 401)
        #expect(await send("POST", report, token: eve, body: Array("{}".utf8)) == 403)
        #expect(await send("POST", report, token: alice, body: Array("[1]".utf8)) == 400)
        #expect(await send("POST", report, token: alice, body: Array("{".utf8)) == 400)
        #expect(await send("POST", report, token: alice,
                           body: [UInt8](repeating: 32, count: CallReports.maxBytes + 1)) == 413)
        #expect(await send("POST", "/call/report?room=room_abcd1234", token: alice, body: Array("{}".utf8)) == 400)
        #expect(await send("GET", report, token: alice) == 404, "nothing posted yet")
        #expect(await send("POST", report, token: alice, body: Array(#"{"ok":true}"#.utf8)) == 200)
        #expect(await send("GET", report, token: alice) == 200)
        #expect(await send("GET", report, token: eve) == 403)
        #expect(await send("DELETE", report, token: alice) == 405)
        #expect(await send("POST", "/call", token: nil) == 405)
        #expect(await send("GET", "/call/missing.js", token: nil) == 404)
        #expect(await send("GET", "/call?room=room_abcd1234&me=a&remote=b", token: nil) == 200)
    }
}
