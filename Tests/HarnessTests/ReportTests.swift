// The harness's summaries and reports: percentiles that count failures as slower than any
// success, and the table, CSV, JSON and SVG a person reads.
import Foundation
import Harness
import Simulation
import Testing

func sample(_ seconds: Double?, resets: Int = 0) -> CallSample {
    CallSample(convergence: seconds, storeRequests: 10, recordsFetched: 20, bytesFetched: 2048, staleDrops: 1,
               duplicates: 2, resets: resets, firstPush: 2, firstPoll: nil, relayed: seconds == nil ? nil : false)
}

@Suite("Harness reports")
struct ReportTests {
    @Test("percentiles count failures as slower than every success")
    func percentiles() {
        let samples = (1...8).map { sample(Double($0)) } + [sample(nil), sample(nil)]
        let s = ConvergenceSummary(strategy: "push", pushLoss: 0.2, nat: "none", samples: samples)
        #expect(s.trials == 10 && s.converged == 8 && s.failures == 2)
        #expect(s.p50 == 5)
        #expect(s.p90 == nil && s.p99 == nil, "the 90th percentile falls among the failures")
        #expect(s.max == nil && s.slowestConverged == 8)
        #expect(s.fractionConverged(within: 4.5) == 0.4)
        #expect(s.fractionConverged(within: 100) == 0.8)
        #expect(s.firstPushMedian == 2 && s.firstPollMedian == nil)
        let all = ConvergenceSummary(strategy: "x", pushLoss: 0, nat: "none",
                                     samples: (1...100).map { sample(Double($0)) })
        #expect(all.p50 == 50 && all.p90 == 90 && all.p99 == 99 && all.max == 100)
    }

    static func summaries() -> [ConvergenceSummary] {
        var out: [ConvergenceSummary] = []
        for loss in [0.0, 0.5] {
            for (k, strategy) in ["push", "hybrid", "legacy"].enumerated() {
                let samples = (0..<20).map { i in
                    sample(i < 18 || strategy != "push" ? Double(i) * 0.3 + Double(k) : nil,
                           resets: strategy == "legacy" ? 2 : 0)
                }
                out.append(ConvergenceSummary(strategy: strategy, pushLoss: loss, nat: "none", samples: samples))
            }
        }
        return out
    }

    @Test("the markdown table has a row per configuration and shows failures and resets")
    func markdown() {
        let table = MarkdownReport.table(Self.summaries(), deadline: 60)
        let rows = table.split(separator: "\n")
        #expect(rows.count == 2 + 6)
        #expect(rows[0].contains("p50") && rows[0].contains("resets/call") && rows[0].contains("first poll p50"))
        #expect(table.contains("| push | 0.5 | none |"))
        #expect(table.contains("2/20"), "push's two failures")
        #expect(table.contains("> 60 s"), "a maximum among failures")
        #expect(rows.last!.contains("| 2.00 |"), "legacy's resets per call")
    }

    @Test("real figures sit beside simulated ones: a source column when sources differ")
    func realBesideSimulated() {
        let simulated = ConvergenceSummary(strategy: "hybrid", pushLoss: 0, nat: "none",
                                           samples: (1...10).map { sample(Double($0)) })
        let real = ConvergenceSummary(strategy: "hybrid", pushLoss: 0, nat: "loopback", source: "real lan",
                                      samples: (1...10).map { sample(Double($0) / 10) })
        let table = MarkdownReport.table([simulated, real], deadline: 30)
        #expect(table.hasPrefix("| source | strategy |"))
        #expect(table.contains("| real lan | hybrid | 0 | loopback |"))
        #expect(!MarkdownReport.table([simulated], deadline: 30).contains("source"))
        #expect(CSVReport.render([simulated, real]).contains("\nreal lan,hybrid,"))
    }

    @Test("CSV: a header, one row per configuration, quoted fields, empty cells for percentiles among failures")
    func csv() {
        var summaries = Self.summaries()
        summaries[0].nat = "a,b"
        let csv = CSVReport.render(summaries)
        let lines = csv.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 1 + 6 + 1 && lines.last == "")
        #expect(lines[0].hasPrefix("source,strategy,push_loss,nat,trials"))
        #expect(lines[1].contains("\"a,b\""))
        let push = lines[1].split(separator: ",", omittingEmptySubsequences: false)
        #expect(push.count == CSVReport.header.count + 1, "the quoted comma is one field")
        #expect(lines.dropFirst().allSatisfy { $0.isEmpty || $0.hasPrefix("simulated,") })
    }

    @Test("the SVG is well-formed, has a panel per push-loss value, labelled axes and a legend entry per strategy")
    func svg() throws {
        let svg = CDFChart.render(Self.summaries(), title: "test chart", deadline: 60)
        let document = try #require(XMLOutline(svg), "not well-formed")
        #expect(document.elements.first == "svg")
        #expect(document.count("polyline") == 6, "one curve per strategy and panel")
        #expect(document.texts.contains("push loss 0 · NAT none"))
        #expect(document.texts.contains("push loss 0.5 · NAT none"))
        #expect(document.texts.filter { $0 == "seconds since call start" }.count == 2)
        #expect(document.texts.filter { $0 == "calls connected" }.count == 2)
        for strategy in ["push", "hybrid", "legacy"] { #expect(document.texts.contains(strategy)) }
        #expect(document.texts.contains("100%") && document.texts.contains("0%"))
    }

    @Test("JSON carries the trace hash and the speed, and reads back")
    func json() throws {
        let report = ExperimentReport(
            plan: ExperimentReport.Parameters(ExperimentPlan(strategies: ["push"], pushLosses: [0], nats: [.both(nil)],
                                                             trials: 20, seed: 1)),
            configurations: Self.summaries(), traceHash: String(repeating: "ab", count: 32), trials: 120, events: 999,
            cpuSeconds: 0.1, wallSeconds: 0.2)
        let data = try JSONEncoder().encode(report)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["traceHash"] as? String == report.traceHash)
        #expect((object["trialsPerCPUSecond"] as? Double).map { abs($0 - 1200) < 0.01 } == true)
        let back = try JSONDecoder().decode(ExperimentReport.self, from: data)
        #expect(back.configurations == report.configurations)
    }
}

/// A small XML well-formedness check for the chart: every tag closed in order, attributes
/// quoted, only the five predefined entities; elements in document order and text nodes.
struct XMLOutline {
    var elements: [String] = []
    var texts: [String] = []

    func count(_ name: String) -> Int { elements.filter { $0 == name }.count }

    init?(_ text: String) {
        var stack: [String] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "<") {
            let between = rest[..<open].trimmingCharacters(in: .whitespacesAndNewlines)
            if !between.isEmpty {
                guard !stack.isEmpty, let decoded = XMLOutline.decode(between) else { return nil }
                texts.append(decoded)
            }
            guard let close = rest[open...].firstIndex(of: ">") else { return nil }
            var tag = rest[rest.index(after: open)..<close]
            rest = rest[rest.index(after: close)...]
            if tag.hasPrefix("/") {
                guard stack.popLast() == String(tag.dropFirst()) else { return nil }
                continue
            }
            let selfClosing = tag.hasSuffix("/")
            if selfClosing { tag = tag.dropLast() }
            let name = String(tag.prefix { !$0.isWhitespace })
            guard !name.isEmpty, tag.filter({ $0 == "\"" }).count % 2 == 0 else { return nil }
            elements.append(name)
            if !selfClosing { stack.append(name) }
        }
        guard stack.isEmpty, rest.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
    }

    static func decode(_ text: String) -> String? {
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";") else { return nil }
            switch rest[rest.index(after: amp)..<semi] {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default: return nil
            }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }
}
