import Foundation
@testable import StoreServer
import Testing

/// The call page as the daemon serves it: the embedded files are web/ exactly (generate.sh was run), each
/// with its media type; the report endpoint keeps a user's report for that user only.
@Suite("Call page")
struct CallPageTests {
    static let web = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/StoreServer/CallPage/web").standardized

    @Test("CallPageFiles.swift holds every file of web/, byte for byte (else run CallPage/generate.sh)")
    func embeddedFilesAreCurrent() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.web.path).sorted()
        #expect(names.sorted() == CallPage.files.keys.sorted())
        for name in names {
            let disk = try String(contentsOf: Self.web.appendingPathComponent(name), encoding: .utf8)
            #expect(CallPage.files[name] == disk, "\(name) changed: run Sources/StoreServer/CallPage/generate.sh")
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
        for (name, text) in CallPage.files where name.hasSuffix(".js") {
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
}
