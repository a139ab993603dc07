// The convergence CDFs as an SVG, written by hand: one panel per push-loss value (columns) and
// NAT setup (rows), one curve per strategy — the fraction of calls connected on one epoch by
// each moment after the call's start. A curve that ends below 100 % is the calls that never
// connected within the deadline. Colours are the Okabe–Ito palette (readable with colour
// blindness), and each strategy also has its own dash pattern, so the chart survives grey print.
import Foundation

/// Renders the convergence CDFs of an experiment as an SVG document.
public enum CDFChart {
    static let palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#F0E442"]
    static let dashes = ["", "8 4", "2 3", "10 3 2 3", "4 2", "1 2", "12 4 4 4", "6 6"]

    static let panelWidth = 440.0
    static let panelHeight = 300.0
    static let plotLeft = 58.0
    static let plotRight = 18.0
    static let plotTop = 34.0
    static let plotBottom = 48.0
    static let titleHeight = 66.0
    static let legendHeight = 34.0

    /// The SVG text. `title` heads the figure; `deadline` bounds the time axis.
    public static func render(_ summaries: [ConvergenceSummary], title: String, deadline: Double) -> String {
        let losses = unique(summaries.map(\.pushLoss))
        let nats = unique(summaries.map(\.nat))
        let strategies = unique(summaries.map(\.strategy))
        let columns = max(1, losses.count), rows = max(1, nats.count)
        let width = Double(columns) * panelWidth + 20
        let height = titleHeight + legendHeight + Double(rows) * panelHeight + 10
        let slowest = summaries.compactMap(\.slowestConverged).max() ?? 1
        let (xMax, xStep) = axis(upTo: min(max(slowest, 1), max(deadline, 1)))

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" \
            viewBox="0 0 \(n(width)) \(n(height))" font-family="Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="\(n(width / 2))" y="24" text-anchor="middle" font-size="17" font-weight="bold">\
            \(escape(title))</text>

            """
        // The subtitle on one line when it fits, else on two.
        let notes = ["share of calls connected on one epoch, by time since the call started;",
                     "a curve below 100 % at the right edge: calls not connected within \(n(deadline)) s"]
        let lines = Double(notes.joined(separator: " ").count) * 6.6 < width - 20
            ? [notes.joined(separator: " ")] : notes
        for (k, line) in lines.enumerated() {
            svg += "<text x=\"\(n(width / 2))\" y=\"\(n(42 + Double(k) * 14))\" text-anchor=\"middle\" "
                + "font-size=\"12\" fill=\"#444444\">\(escape(line))</text>\n"
        }
        // Legend.
        var x = 20.0
        let legendY = titleHeight + 14
        for (i, strategy) in strategies.enumerated() {
            svg += "<line x1=\"\(n(x))\" y1=\"\(n(legendY))\" x2=\"\(n(x + 30))\" y2=\"\(n(legendY))\" "
                + "stroke=\"\(color(i))\" stroke-width=\"2.5\"\(dash(i))/>\n"
            svg += "<text x=\"\(n(x + 36))\" y=\"\(n(legendY + 4))\" font-size=\"13\">\(escape(strategy))</text>\n"
            x += 46 + Double(strategy.count) * 7.5 + 14
        }
        for (r, nat) in nats.enumerated() {
            for (c, loss) in losses.enumerated() {
                let originX = 10 + Double(c) * panelWidth
                let originY = titleHeight + legendHeight + Double(r) * panelHeight
                let curves = strategies.enumerated().compactMap { i, strategy -> (Int, ConvergenceSummary)? in
                    summaries.first { $0.nat == nat && $0.pushLoss == loss && $0.strategy == strategy }.map { (i, $0) }
                }
                svg += panel(curves, x: originX, y: originY, xMax: xMax, xStep: xStep,
                             title: "push loss \(number(loss)) · NAT \(nat)")
            }
        }
        svg += "</svg>\n"
        return svg
    }

    private static func panel(_ curves: [(Int, ConvergenceSummary)], x: Double, y: Double, xMax: Double,
                              xStep: Double, title: String) -> String {
        let left = x + plotLeft, right = x + panelWidth - plotRight
        let top = y + plotTop, bottom = y + panelHeight - plotBottom
        func px(_ t: Double) -> Double { left + (right - left) * min(t, xMax) / xMax }
        func py(_ f: Double) -> Double { bottom - (bottom - top) * f }
        var s = "<g>\n"
        s += "<text x=\"\(n((left + right) / 2))\" y=\"\(n(y + 20))\" text-anchor=\"middle\" font-size=\"14\" "
            + "font-weight=\"bold\">\(escape(title))</text>\n"
        // Grid and ticks.
        for k in 0...4 {
            let f = Double(k) / 4
            s += "<line x1=\"\(n(left))\" y1=\"\(n(py(f)))\" x2=\"\(n(right))\" y2=\"\(n(py(f)))\" "
                + "stroke=\"#dddddd\" stroke-width=\"1\"/>\n"
            s += "<text x=\"\(n(left - 6))\" y=\"\(n(py(f) + 4))\" text-anchor=\"end\" font-size=\"11\">"
                + "\(k * 25)%</text>\n"
        }
        var t = 0.0
        while t <= xMax + 1e-9 {
            s += "<line x1=\"\(n(px(t)))\" y1=\"\(n(top))\" x2=\"\(n(px(t)))\" y2=\"\(n(bottom))\" "
                + "stroke=\"#eeeeee\" stroke-width=\"1\"/>\n"
            s += "<text x=\"\(n(px(t)))\" y=\"\(n(bottom + 16))\" text-anchor=\"middle\" font-size=\"11\">"
                + "\(number(t))</text>\n"
            t += xStep
        }
        s += "<rect x=\"\(n(left))\" y=\"\(n(top))\" width=\"\(n(right - left))\" height=\"\(n(bottom - top))\" "
            + "fill=\"none\" stroke=\"#333333\" stroke-width=\"1\"/>\n"
        s += "<text x=\"\(n((left + right) / 2))\" y=\"\(n(bottom + 36))\" text-anchor=\"middle\" font-size=\"12\">"
            + "seconds since call start</text>\n"
        s += "<text transform=\"translate(\(n(x + 16)) \(n((top + bottom) / 2))) rotate(-90)\" "
            + "text-anchor=\"middle\" font-size=\"12\">calls connected</text>\n"
        // Curves: the empirical CDF sampled at every pixel column, drawn as steps.
        let columns = Int(right - left)
        for (i, summary) in curves {
            var points: [String] = ["\(n(left)),\(n(py(0)))"]
            var previous = 0.0
            for col in 1...columns {
                let time = xMax * Double(col) / Double(columns)
                let f = summary.fractionConverged(within: time)
                if f != previous {
                    points.append("\(n(left + Double(col))),\(n(py(previous)))")
                    points.append("\(n(left + Double(col))),\(n(py(f)))")
                    previous = f
                }
            }
            points.append("\(n(right)),\(n(py(previous)))")
            s += "<polyline fill=\"none\" stroke=\"\(color(i))\" stroke-width=\"2\"\(dash(i)) "
                + "points=\"\(points.joined(separator: " "))\"><title>\(escape(summary.strategy)): "
                + "\(summary.converged) of \(summary.trials) connected</title></polyline>\n"
        }
        s += "</g>\n"
        return s
    }

    /// An axis from 0 to a round number at or above `value`, with 4–8 ticks.
    static func axis(upTo value: Double) -> (max: Double, step: Double) {
        let steps = [0.25, 0.5, 1, 2, 2.5, 5, 10, 15, 20, 30, 60, 120, 300, 600]
        for step in steps where (value / step).rounded(.up) <= 8 {
            return ((value / step).rounded(.up) * step, step)
        }
        let step = (value / 8).rounded(.up)
        return ((value / step).rounded(.up) * step, step)
    }

    static func color(_ i: Int) -> String { palette[i % palette.count] }

    static func dash(_ i: Int) -> String {
        let d = dashes[i % dashes.count]
        return d.isEmpty ? "" : " stroke-dasharray=\"\(d)\""
    }

    static func unique<T: Equatable>(_ values: [T]) -> [T] {
        var out: [T] = []
        for v in values where !out.contains(v) { out.append(v) }
        return out
    }

    /// A coordinate with at most one decimal.
    static func n(_ value: Double) -> String {
        let r = (value * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(format: "%.1f", r)
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%g", value)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
