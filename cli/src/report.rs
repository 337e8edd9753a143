//! `reduce report`: the results page and its charts regenerated from the
//! JSON that `reduce bench --json` wrote (no GPU needed), and the one way a
//! generated table goes into a page of the docs ([`section`]).

use reduction::{Error, Result};

use crate::bench::Report;

/// The text between `<!-- report NAME -->` and `<!-- /report -->` in `page`
/// replaced by `text` (in a `text` code block), or an error naming the
/// missing marker.
///
/// ```
/// let page = "# R\n<!-- report a.json -->\nold\n<!-- /report -->\nend\n";
/// let new = reduce::report::splice(page, "a.json", "table\n").unwrap();
/// assert_eq!(new, "# R\n<!-- report a.json -->\n```text\ntable\n```\n<!-- /report -->\nend\n");
/// assert!(reduce::report::splice(page, "b.json", "x").is_err());
/// ```
pub fn splice(page: &str, name: &str, text: &str) -> Result<String> {
    splice_raw(page, name, &format!("```text\n{text}```\n"))?.ok_or_else(|| {
        Error::Invalid(format!("the page has no `<!-- report {name} -->` ... `<!-- /report -->` section"))
    })
}

/// [`splice`] without the code block, and `None` where the page has no such
/// section.
fn splice_raw(page: &str, name: &str, text: &str) -> Result<Option<String>> {
    section(page, &format!("<!-- report {name} -->\n"), "<!-- /report -->", text)
}

/// `page` with the text between the line `open` and the next `close`
/// replaced by `text`: how a generated table goes into a page of the docs
/// (`reduce report`, `reduce cards`). `None` where the page has no `open`;
/// an error where `open` is not closed.
///
/// ```
/// use reduce::report::section;
/// let page = "# Cards\n<!-- cards -->\nold\n<!-- /cards -->\n";
/// let new = section(page, "<!-- cards -->\n", "<!-- /cards -->", "new\n").unwrap();
/// assert_eq!(new.as_deref(), Some("# Cards\n<!-- cards -->\nnew\n<!-- /cards -->\n"));
/// assert!(section("# Cards\n", "<!-- cards -->\n", "<!-- /cards -->", "new\n").unwrap().is_none());
/// assert!(section("<!-- cards -->\nold\n", "<!-- cards -->\n", "<!-- /cards -->", "new\n").is_err());
/// ```
pub fn section(page: &str, open: &str, close: &str, text: &str) -> Result<Option<String>> {
    let Some(start) = page.find(open).map(|s| s + open.len()) else {
        return Ok(None);
    };
    let end =
        start + page[start..].find(close).ok_or_else(|| Error::Invalid(format!("`{}` is not closed", open.trim())))?;
    Ok(Some(format!("{}{}{}", &page[..start], text, &page[end..])))
}

/// Each step's speedup next to the published ones (Harris's G80 with 4M
/// ints, the 2023 review's V100 with 32M ints), then the card of `report` at
/// each of its sizes (2^22, 2^25 and 2^28, in that order). The page section
/// `<!-- report NAME steps -->`.
pub fn steps_table(report: &Report) -> String {
    // (step, change, G80 4M, V100 32M): Harris's and the 2023 review's figures
    const SEEDS: [(&str, &str, &str, &str); 10] = [
        ("1 → 2", "no divergent branch (strided index)", "2.33×", "1.72×"),
        ("2 → 3", "sequential addressing (no bank conflicts)", "2.01×", "1.25×"),
        ("3 → 4", "first add during the load", "1.78×", "1.81×"),
        ("4 → 5", "unroll the last warp", "1.80×", "-"),
        ("5 → 6", "completely unrolled", "1.41×", "1.04× (4→6)"),
        ("6 → 7", "multiple elements per thread", "1.42×", "1.12×"),
        ("7 → 8", "last warp as a synced tile", "-", "1.00×"),
        ("8 → 9", "warp shuffles", "-", "1.01×"),
        ("9 → 10", "16-byte loads (ours)", "-", "-"),
        ("10 → 11", "one launch (ours)", "-", "-"),
    ];
    let card = short_name(&report.device.name);
    let sizes: Vec<String> = report.tables.iter().map(|t| format!("{card} 2^{}", t.n.ilog2())).collect();
    let mut s = format!("| step | change | G80 4M | V100 32M | {} |\n|---|---|---:|---:|", sizes.join(" | "));
    s += &"---:|".repeat(sizes.len());
    s += "\n";
    for (i, (step, change, g80, v100)) in SEEDS.iter().enumerate() {
        let h200: Vec<String> = report
            .tables
            .iter()
            .map(|t| t.rows.get(i + 1).and_then(|r| r.step_speedup).map_or("-".into(), |x| format!("{x:.2}×")))
            .collect();
        s += &format!("| {step} | {change} | {g80} | {v100} | {} |\n", h200.join(" | "));
    }
    let cumulative: Vec<String> = report
        .tables
        .iter()
        .map(|t| t.rows.get(6).map_or("-".into(), |r| format!("{:.1}×", r.cumulative_speedup)))
        .collect();
    s += &format!("| 1 → 7 | cumulative | 30.0× | 4.5× (1→9) | {} |\n", cumulative.join(" | "));
    let reduce7: Vec<String> = report
        .tables
        .iter()
        .map(|t| {
            t.rows.get(6).map_or("-".into(), |r| {
                format!("{:.0} GB/s ({:.0}%)", r.rust.bandwidth / 1e9, 100.0 * r.of_theoretical)
            })
        })
        .collect();
    s += &format!("| reduce7 | bandwidth | 62.7 GB/s (73% of 86.4) | | {} |\n", reduce7.join(" | "));
    s
}

/// A card's name without the vendor and the memory: "NVIDIA H100 80GB HBM3"
/// is "H100".
///
/// ```
/// assert_eq!(reduce::report::short_name("NVIDIA H100 80GB HBM3"), "H100");
/// assert_eq!(reduce::report::short_name("NVIDIA H200"), "H200");
/// assert_eq!(reduce::report::short_name(""), "GPU");
/// ```
pub fn short_name(name: &str) -> &str {
    name.split_whitespace().find(|w| *w != "NVIDIA").unwrap_or("GPU")
}

/// The name of a report's page sections: its file name after its folder's,
/// `h100/bench-i32.json` (a page holds the same file of several cards).
fn section_name(path: &std::path::Path) -> String {
    let file = |p: Option<&std::ffi::OsStr>| p.map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let folder = file(path.parent().and_then(|d| d.file_name()));
    let name = file(path.file_name());
    if folder.is_empty() { name } else { format!("{folder}/{name}") }
}

/// `reduce report`: for each JSON report, write its chart beside it
/// (`.svg`) and, if `page` is given, its tables into the page's marked
/// section named by its folder and file (`<!-- report h100/bench-i32.json
/// -->`; and [`steps_table`] into the section `NAME steps`, where the page
/// has one).
pub fn regenerate(json: &[std::path::PathBuf], page: Option<&std::path::Path>) -> Result<()> {
    let io = |path: &std::path::Path, e: std::io::Error| Error::Invalid(format!("{}: {e}", path.display()));
    let mut text = match page {
        Some(p) => Some(std::fs::read_to_string(p).map_err(|e| io(p, e))?),
        None => None,
    };
    for path in json {
        let raw = std::fs::read_to_string(path).map_err(|e| io(path, e))?;
        let report: Report =
            serde_json::from_str(&raw).map_err(|e| Error::Invalid(format!("{}: not a report: {e}", path.display())))?;
        let svg = path.with_extension("svg");
        std::fs::write(&svg, crate::svg::chart(&report)).map_err(|e| io(&svg, e))?;
        let name = section_name(path);
        if let Some(t) = text.as_mut() {
            *t = splice(t, &name, &report.text())?;
            if let Some(with_steps) = splice_raw(t, &format!("{name} steps"), &steps_table(&report))? {
                *t = with_steps;
            }
        }
    }
    if let (Some(p), Some(t)) = (page, text) {
        std::fs::write(p, t).map_err(|e| io(p, e))?;
    }
    Ok(())
}
