//! The benchmark chart: one panel per input size, a pair of bars per kernel
//! (Rust, CUDA C++) showing GB/s, and the theoretical and copy peaks as lines.
//!
//! ```
//! // `chart` turns a benchmark report into an SVG document (`reduce bench --svg`):
//! let chart: fn(&reduce::bench::Report) -> String = reduce::svg::chart;
//! # let _ = chart;
//! ```

use crate::bench::Report;

const BAR: f64 = 16.0;
const GROUP: f64 = 2.0 * BAR + 14.0;
const LEFT: f64 = 64.0;
const PANEL_H: f64 = 220.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 64.0;
const RUST: &str = "#d55e00";
const CUDA: &str = "#0072b2";

/// The chart of `report` as an SVG document (written by `reduce bench --svg FILE`).
///
/// ```
/// use reduce::bench::Report;
/// let device = reduction::device::DeviceInfo {
///     name: "G80".into(),
///     ordinal: 0,
///     compute_capability: (1, 0),
///     sm_count: 16,
///     l2_bytes: 0,
///     total_mem: 768 << 20,
///     mem_clock_khz: 900_000,
///     bus_width_bits: 384,
///     driver_version: 13000,
/// };
/// let report = Report {
///     peak_theoretical: 86.4e9,
///     copy_bandwidth: 70e9,
///     device,
///     commit: "abc1234".into(),
///     dtype: "f32".into(),
///     op: "sum".into(),
///     block: 128,
///     runs: 30,
///     cuda_note: None,
///     tables: vec![], // one panel per table
/// };
/// let svg = reduce::svg::chart(&report);
/// assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
/// assert!(svg.contains("G80 — f32 sum, block 128"));
/// ```
pub fn chart(report: &Report) -> String {
    let kernels = report.tables.first().map_or(0, |t| t.rows.len());
    let width = LEFT + kernels as f64 * GROUP + 150.0;
    let panel = TOP + PANEL_H + BOTTOM;
    let height = panel * report.tables.len() as f64 + 60.0;
    let ymax = report.peak_theoretical.max(report.copy_bandwidth) * 1.08 / 1e9;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="11">
<rect width="100%" height="100%" fill="white"/>
<text x="{LEFT}" y="18" font-size="13" font-weight="bold">{} — {} {}, block {}: GB/s per kernel, Rust vs CUDA C++ (NVRTC)</text>
"#,
        esc(&report.device.name),
        report.dtype,
        report.op,
        report.block
    );
    for (p, table) in report.tables.iter().enumerate() {
        let y0 = 30.0 + p as f64 * panel + TOP; // top of the plot area
        let y = |gbps: f64| y0 + PANEL_H * (1.0 - gbps / ymax);
        s += &format!(
            "<text x=\"{LEFT}\" y=\"{:.1}\" font-weight=\"bold\">n = {} ({:.0} MiB)</text>\n",
            y0 - 10.0,
            table.n,
            table.bytes as f64 / (1 << 20) as f64
        );
        // y axis with gridlines every 1000 GB/s (or 100 below 1000)
        let step = if ymax > 2000.0 { 1000.0 } else { 100.0 };
        let mut g = 0.0;
        while g <= ymax {
            s += &format!(
                "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{g:.0}</text>\n",
                LEFT + kernels as f64 * GROUP,
                y(g),
                y(g),
                LEFT - 4.0,
                y(g) + 4.0
            );
            g += step;
        }
        for (i, row) in table.rows.iter().enumerate() {
            let x = LEFT + i as f64 * GROUP + 7.0;
            let bar = |x: f64, gbps: f64, color: &str, who: &str| {
                format!(
                    "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{BAR}\" height=\"{:.1}\" fill=\"{color}\"><title>{} {who}: {gbps:.0} GB/s</title></rect>\n",
                    y(gbps),
                    y0 + PANEL_H - y(gbps),
                    row.kernel
                )
            };
            s += &bar(x, row.rust.bandwidth / 1e9, RUST, "Rust");
            if let Some(c) = &row.cuda {
                s += &bar(x + BAR, c.bandwidth / 1e9, CUDA, "CUDA C++");
            }
            s += &format!(
                "<text transform=\"translate({:.1},{:.1}) rotate(40)\">{}</text>\n",
                x + 4.0,
                y0 + PANEL_H + 12.0,
                row.kernel
            );
        }
        for (value, label, dash) in
            [(report.peak_theoretical, "theoretical", "6,3"), (report.copy_bandwidth, "copy", "2,2")]
        {
            let gbps = value / 1e9;
            s += &format!(
                "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"black\" stroke-dasharray=\"{dash}\"/><text x=\"{:.1}\" y=\"{:.1}\">{label} {gbps:.0} GB/s</text>\n",
                LEFT + kernels as f64 * GROUP,
                y(gbps),
                y(gbps),
                LEFT + kernels as f64 * GROUP + 6.0,
                y(gbps) + 4.0
            );
        }
    }
    let ly = height - 14.0;
    s += &format!(
        "<rect x=\"{LEFT}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{RUST}\"/><text x=\"{:.1}\" y=\"{ly:.1}\">Rust</text><rect x=\"{:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{CUDA}\"/><text x=\"{:.1}\" y=\"{ly:.1}\">CUDA C++</text>\n</svg>\n",
        ly - 9.0,
        LEFT + 14.0,
        LEFT + 60.0,
        ly - 9.0,
        LEFT + 74.0
    );
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{Measurement, Row, Table};
    use crate::timing::Stats;
    use reduction::device::DeviceInfo;

    fn measurement(kernel: &str, gbps: f64) -> Measurement {
        Measurement {
            kernel: kernel.into(),
            block: 128,
            n: 1 << 20,
            got: "1".into(),
            expected: "1".into(),
            ok: true,
            stats: Stats::of(vec![1.0]).unwrap(),
            bandwidth: gbps * 1e9,
        }
    }

    #[test]
    fn bars_peaks_and_labels() {
        let row = |kernel: &str, rust, cuda: Option<f64>| Row {
            kernel: kernel.into(),
            step: 1,
            title: String::new(),
            source: String::new(),
            rust: measurement(kernel, rust),
            step_speedup: None,
            cumulative_speedup: 1.0,
            of_theoretical: 0.5,
            of_copy: 0.5,
            cuda: cuda.map(|c| measurement(kernel, c)),
            cuda_note: None,
            rust_over_cuda: None,
        };
        let report = Report {
            device: DeviceInfo {
                name: "Test <GPU>".into(),
                ordinal: 0,
                compute_capability: (9, 0),
                sm_count: 132,
                l2_bytes: 1,
                total_mem: 1,
                mem_clock_khz: 1,
                bus_width_bits: 1,
                driver_version: 13000,
            },
            peak_theoretical: 4.8e12,
            copy_bandwidth: 4.2e12,
            commit: "abc1234".into(),
            dtype: "i32".into(),
            op: "sum".into(),
            block: 128,
            runs: 30,
            cuda_note: None,
            tables: vec![Table {
                n: 1 << 20,
                bytes: 4 << 20,
                rows: vec![row("reduce1", 500.0, Some(450.0)), row("single_pass", 4400.0, None)],
            }],
        };
        let svg = chart(&report);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<rect x=").count(), 3 + 2, "three bars and two legend boxes");
        assert!(svg.contains("theoretical 4800 GB/s") && svg.contains("copy 4200 GB/s"));
        assert!(svg.contains("Test &lt;GPU&gt;"));
        assert!(svg.contains("single_pass Rust: 4400 GB/s"));
    }
}
