//! `reduce cards`: one Markdown page with every GPU card's measurements side
//! by side, made (no GPU needed) from the folders of raw output that
//! `bash cli/baselines/card.sh speed DIR` writes, one per card: the read
//! ceiling, the operations and rows, columns and segments beside torch and
//! CuPy, Harris's table with its CUDA C++ twins, and the float sums' modes
//! beside CUB. Every number has fixed decimals, so the same folders always
//! make the same page, byte for byte.

use std::path::Path;

use reduction::{DType, Error, Result};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::bench::Report;
use crate::ops_bench::OpRow;
use crate::shapes_bench::ShapeRow;

/// The files of a card's folder the page is made from.
pub const FILES: [&str; 10] = [
    "info.txt",
    "read-ceiling.jsonl",
    "bench-i32.json",
    "bench-f32.json",
    "ops.json",
    "ops-vendor.jsonl",
    "shapes.json",
    "shapes-vendor.jsonl",
    "modes.json",
    "modes-cub.jsonl",
];

/// Our time within this fraction of the best vendor's either way: a tie.
pub const TIE: f64 = 0.002;

/// One line of a JSON-lines file: the fields of each such file, all optional.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Line {
    what: String,
    library: String,
    op: String,
    ty: String,
    #[serde(rename = "type")]
    type_name: String,
    variant: String,
    case: String,
    n: usize,
    timing: Option<String>,
    bytes: usize,
    best_us: f64,
    median_us: f64,
    gbps: f64,
    error: Option<String>,
    /// A baseline's own check of its result (`cub_segmented_reduce.cu`).
    ok: Option<bool>,
}

/// One card's folder, read.
struct Card {
    /// The folder's name (`h100`): the column heads, so two machines of one
    /// kind stay apart.
    folder: String,
    name: String,
    commit: String,
    date: String,
    driver: String,
    ceiling: Vec<Line>,
    ops: Vec<OpRow>,
    ops_vendor: Vec<Line>,
    shapes: Vec<ShapeRow>,
    shapes_vendor: Vec<Line>,
    benches: Vec<Report>,
    modes: Vec<OpRow>,
    modes_cub: Vec<Line>,
}

fn read(dir: &Path, file: &str) -> Result<String> {
    let path = dir.join(file);
    std::fs::read_to_string(&path).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))
}

fn json<T: DeserializeOwned>(dir: &Path, file: &str) -> Result<T> {
    serde_json::from_str(&read(dir, file)?).map_err(|e| Error::Invalid(format!("{}: {e}", dir.join(file).display())))
}

/// The lines of a JSON-lines file that hold a measurement (those with an
/// `error`, and those whose own check failed, left out); lines that are
/// not JSON objects are skipped.
fn lines(dir: &Path, file: &str) -> Result<Vec<Line>> {
    let mut out = Vec::new();
    for (i, text) in read(dir, file)?.lines().enumerate().filter(|(_, l)| l.starts_with('{')) {
        let line: Line = serde_json::from_str(text)
            .map_err(|e| Error::Invalid(format!("{}:{}: {e}", dir.join(file).display(), i + 1)))?;
        if line.error.is_none() && line.ok != Some(false) {
            out.push(line);
        }
    }
    Ok(out)
}

impl Card {
    fn read(dir: &Path) -> Result<Card> {
        let info = read(dir, "info.txt")?;
        let bad = || {
            let path = dir.join("info.txt");
            Error::Invalid(format!(
                "{}: expected `commit HASH, DATE` first and nvidia-smi's `name, driver, memory` last",
                path.display()
            ))
        };
        let first = info.lines().next().and_then(|l| l.strip_prefix("commit ")).and_then(|l| l.split_once(", "));
        let (commit, date) = first.ok_or_else(bad)?;
        let smi: Vec<&str> = info.lines().last().unwrap_or_default().split(", ").collect();
        let [name, driver, _] = smi[..] else { return Err(bad()) };
        let mut ceiling = lines(dir, "read-ceiling.jsonl")?;
        ceiling.retain(|l| l.what == "read_ceiling");
        let folder = dir.file_name().map_or_else(|| name.to_string(), |f| f.to_string_lossy().into_owned());
        Ok(Card {
            folder,
            name: name.to_string(),
            commit: commit.to_string(),
            date: date.to_string(),
            driver: driver.to_string(),
            ceiling,
            ops: json(dir, "ops.json")?,
            ops_vendor: lines(dir, "ops-vendor.jsonl")?,
            shapes: json(dir, "shapes.json")?,
            shapes_vendor: lines(dir, "shapes-vendor.jsonl")?,
            benches: vec![json(dir, "bench-i32.json")?, json(dir, "bench-f32.json")?],
            modes: json(dir, "modes.json")?,
            modes_cub: lines(dir, "modes-cub.jsonl")?,
        })
    }

    /// The card's read ceiling at exactly `bytes`, GB/s, if measured.
    fn ceiling(&self, bytes: Option<usize>) -> Option<f64> {
        self.ceiling.iter().find(|l| Some(l.bytes) == bytes).map(|l| l.gbps)
    }

    /// The name in column heads: the folder's.
    fn short(&self) -> &str {
        &self.folder
    }
}

/// `ahead` (ours faster by more than [`TIE`]), `tie`, `behind` (slower by
/// more than [`TIE`]), or `no vendor`: our time against the best vendor's.
pub fn verdict(ours_us: f64, vendor_us: Option<f64>) -> &'static str {
    match vendor_us {
        None => "no vendor",
        Some(v) if ours_us < v * (1.0 - TIE) => "ahead",
        Some(v) if ours_us > v * (1.0 + TIE) => "behind",
        Some(_) => "tie",
    }
}

/// Bytes an operation reads: `n` elements of `ty`, both vectors of a `dot`;
/// `None` for a type with no known size.
///
/// ```
/// assert_eq!(reduce::cards::bytes_read("dot", "f32", 1 << 22), Some(1 << 25));
/// assert_eq!(reduce::cards::bytes_read("sum", "bf16", 1 << 28), Some(1 << 29));
/// ```
pub fn bytes_read(op: &str, ty: &str, n: usize) -> Option<usize> {
    let inputs = if op == "dot" { 2 } else { 1 };
    DType::from_name(ty).map(|t| n * t.size() * inputs)
}

/// What a case of rows, columns or segments is matched on: its name, but for
/// segments only up to the word after `segments ` (the counts in
/// parentheses differ between ours and the vendors').
pub fn case_key(case: &str) -> &str {
    match case.strip_prefix("segments ") {
        Some(rest) => &case[..case.len() - rest.len() + rest.find(' ').unwrap_or(rest.len())],
        None => case,
    }
}

/// The fastest of `lines`, the first of equals.
fn best<'a>(lines: impl Iterator<Item = &'a Line>) -> Option<&'a Line> {
    lines.fold(None, |b: Option<&Line>, l| if b.is_some_and(|b| b.median_us <= l.median_us) { b } else { Some(l) })
}

/// Each key of every card, once, in the order first met.
fn union<K: PartialEq>(cards: &[Card], keys: impl Fn(&Card) -> Vec<K>) -> Vec<K> {
    let mut out = Vec::new();
    for k in cards.iter().flat_map(keys) {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

/// A Markdown table: the first `left` columns aligned left, the rest right;
/// each card's columns `per_card` after the `keys`.
fn table(cards: &[Card], keys: &[&str], per_card: &[&str], rows: &[Vec<String>]) -> String {
    let mut head: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    head.extend(cards.iter().flat_map(|c| per_card.iter().map(move |p| format!("{} {p}", c.short()))));
    let mut s = format!("| {} |\n|", head.join(" | "));
    for i in 0..head.len() {
        s += if i < keys.len() { "---|" } else { "---:|" };
    }
    s += "\n";
    for row in rows {
        s += &format!("| {} |\n", row.join(" | "));
    }
    s
}

/// `2^22`, or the number where it is not a power of two.
fn count(n: usize) -> String {
    if n.is_power_of_two() { format!("2^{}", n.ilog2()) } else { n.to_string() }
}

/// Our GB/s as a share of a ceiling; blank without one.
fn share(gbps: f64, ceiling: Option<f64>) -> String {
    ceiling.map_or(String::new(), |c| format!("{:.1}%", 100.0 * gbps / c))
}

/// The best vendor's µs and name; blank without one.
fn vendor(best: Option<&Line>) -> String {
    best.map_or(String::new(), |v| format!("{:.2} {}", v.median_us, v.library))
}

/// The page for the cards in `dirs`, a column each in that order: a
/// header of commit, date and driver, then a section per measurement.
pub fn page(dirs: &[std::path::PathBuf]) -> Result<String> {
    let cards = dirs.iter().map(|d| Card::read(d)).collect::<Result<Vec<_>>>()?;
    let mut s = format!("| | {} |\n|---|", cards.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(" | "));
    s += &"---|".repeat(cards.len());
    s += "\n";
    for (what, field) in [("commit", 0), ("date", 1), ("driver", 2)] {
        let cells: Vec<&str> = cards.iter().map(|c| [&c.commit, &c.date, &c.driver][field].as_str()).collect();
        s += &format!("| {what} | {} |\n", cells.join(" | "));
    }

    s += "\n## Read ceiling\n\nThe best time of the swept read-only kernel (`cli/baselines/read_ceiling.cu`) over its launch shapes, per buffer size, and its GB/s: what reading the bytes costs on the card.\n\n";
    let rows: Vec<Vec<String>> = union(&cards, |c| c.ceiling.iter().map(|l| l.bytes).collect())
        .into_iter()
        .map(|bytes| {
            let mut row = vec![format!("{} ({} MiB)", count(bytes), bytes as f64 / f64::from(1 << 20))];
            for c in &cards {
                let l = c.ceiling.iter().find(|l| l.bytes == bytes);
                row.push(l.map_or(String::new(), |l| format!("{:.2}", l.best_us)));
                row.push(l.map_or(String::new(), |l| format!("{:.1}", l.gbps)));
            }
            row
        })
        .collect();
    s += &table(&cards, &["bytes"], &["µs", "GB/s"], &rows);

    s += "\n## Operations\n\nThe default kernel (`reduce ops`) and the fastest of torch and CuPy on the same operation, type and size, timed the same way; the share is of the read ceiling at the bytes read (both vectors of a dot product), blank where none was measured at that size; a tie is within 0.2%.\n\n";
    let rows: Vec<Vec<String>> = union(&cards, |c| c.ops.iter().map(|r| (r.op.clone(), r.ty.clone(), r.n)).collect())
        .into_iter()
        .map(|(op, ty, n)| {
            let mut row = vec![op.clone(), ty.clone(), count(n)];
            for c in &cards {
                let Some(r) = c.ops.iter().find(|r| r.op == op && r.ty == ty && r.n == n) else {
                    row.extend(std::iter::repeat_n(String::new(), 4));
                    continue;
                };
                let timing = |l: &Line| l.timing.as_deref().is_none_or(|t| t == r.timing.name());
                let v = best(c.ops_vendor.iter().filter(|l| l.op == op && l.ty == ty && l.n == n && timing(l)));
                row.push(format!("{:.2}", r.median_us));
                row.push(vendor(v));
                row.push(share(r.gbps, c.ceiling(bytes_read(&op, &ty, n))));
                row.push(verdict(r.median_us, v.map(|v| v.median_us)).to_string());
            }
            row
        })
        .collect();
    s += &table(&cards, &["op", "type", "n"], &["µs", "vendor µs", "of ceiling", "verdict"], &rows);

    s += "\n## Rows, columns, segments\n\nf32 sums of 1 GiB (`reduce shapes`, the automatic strategy) and the fastest of the vendors' (`cli/baselines/shapes_vendor.py`); the share is of the read ceiling at 1 GiB; a tie is within 0.2%.\n\n";
    let auto = |c: &Card| c.shapes.iter().filter(|r| r.strategy == "auto").map(|r| r.case.clone()).collect::<Vec<_>>();
    let mut names: Vec<String> = Vec::new(); // ours, the first card's count where they differ
    for name in union(&cards, auto) {
        if !names.iter().any(|n| case_key(n) == case_key(&name)) {
            names.push(name);
        }
    }
    let rows: Vec<Vec<String>> = names
        .iter()
        .map(|name| {
            let key = case_key(name);
            let mut row = vec![name.clone()];
            for c in &cards {
                let Some(r) = c.shapes.iter().find(|r| r.strategy == "auto" && case_key(&r.case) == key) else {
                    row.extend(std::iter::repeat_n(String::new(), 4));
                    continue;
                };
                let v = best(c.shapes_vendor.iter().filter(|l| case_key(&l.case) == key));
                row.push(format!("{:.2}", r.median_us));
                row.push(vendor(v));
                row.push(share(r.gbps, c.ceiling(Some(1 << 30))));
                row.push(verdict(r.median_us, v.map(|v| v.median_us)).to_string());
            }
            row
        })
        .collect();
    s += &table(&cards, &["case"], &["µs", "vendor µs", "of ceiling", "verdict"], &rows);

    s += "\n## Harris's table\n\n`reduce bench`: each kernel's median time, ms, in Rust and as its CUDA C++ twin (`n/a` where the twin did not run).\n\n";
    let keys = union(&cards, |c| {
        let cells = c.benches.iter().flat_map(|b| b.tables.iter().map(move |t| (b, t)));
        cells.flat_map(|(b, t)| t.rows.iter().map(move |r| (b.dtype.clone(), t.n, r.kernel.clone()))).collect()
    });
    let rows: Vec<Vec<String>> = keys
        .into_iter()
        .map(|(ty, n, kernel)| {
            let mut row = vec![ty.clone(), count(n), kernel.clone()];
            for c in &cards {
                let tables = c.benches.iter().filter(|b| b.dtype == ty).flat_map(|b| &b.tables);
                let r = tables.filter(|t| t.n == n).flat_map(|t| &t.rows).find(|r| r.kernel == kernel);
                row.push(r.map_or(String::new(), |r| format!("{:.4}", r.rust.stats.median_ms)));
                let twin = r.map(|r| r.cuda.as_ref().map_or("n/a".into(), |m| format!("{:.4}", m.stats.median_ms)));
                row.push(twin.unwrap_or_default());
            }
            row
        })
        .collect();
    s += &table(&cards, &["type", "n", "kernel"], &["Rust ms", "CUDA C++ ms"], &rows);

    s += "\n## Modes\n\nThe float sums (`reduce modes`): default, reproducible on any GPU (gpu_to_gpu) and accurate, their time and speed as a multiple of the default's; CUB's plain sum beside the default and its deterministic one beside gpu_to_gpu, where the CCCL has it (`cli/baselines/cub_determinism.cu`).\n\n";
    let keys = union(&cards, |c| c.modes.iter().map(|r| (r.ty.clone(), r.n, r.mode.clone())).collect());
    let rows: Vec<Vec<String>> = keys
        .into_iter()
        .map(|(ty, n, mode)| {
            let mut row = vec![ty.clone(), count(n), mode.clone()];
            for c in &cards {
                let find = |m: &str| c.modes.iter().find(|r| r.ty == ty && r.n == n && r.mode == m);
                let Some(r) = find(mode.as_str()) else {
                    row.extend(std::iter::repeat_n(String::new(), 3));
                    continue;
                };
                row.push(format!("{:.2}", r.median_us));
                row.push(find("default").map_or(String::new(), |d| format!("{:.3}", r.gbps / d.gbps)));
                let variant = if mode == "default" { "plain" } else { mode.as_str() };
                let cub = c.modes_cub.iter().find(|l| l.type_name == ty && l.n == n && l.variant == variant);
                row.push(cub.map_or(String::new(), |l| format!("{:.2}", l.median_us)));
            }
            row
        })
        .collect();
    s += &table(&cards, &["type", "n", "mode"], &["µs", "× default", "CUB µs"], &rows);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests-data/cards/h100")
    }

    /// The row of the page's table that starts with `start`.
    fn row(page: &str, start: &str) -> Vec<String> {
        let line = page.lines().find(|l| l.starts_with(start)).unwrap_or_else(|| panic!("no row {start}\n{page}"));
        line.split(" | ").map(|c| c.trim_matches(|ch| ch == '|' || ch == ' ').to_string()).collect()
    }

    #[test]
    fn verdicts_turn_at_two_tenths_of_a_percent() {
        assert_eq!(verdict(99.7, Some(100.0)), "ahead");
        assert_eq!(verdict(99.9, Some(100.0)), "tie");
        assert_eq!(verdict(100.0, Some(100.0)), "tie");
        assert_eq!(verdict(100.1, Some(100.0)), "tie");
        assert_eq!(verdict(100.3, Some(100.0)), "behind");
        assert_eq!(verdict(1.0, None), "no vendor");
    }

    #[test]
    fn segment_cases_match_by_their_kind_not_their_count() {
        assert_eq!(case_key("segments loguniform (3778 segments)"), case_key("segments loguniform (3695 segments)"));
        assert_ne!(case_key("segments loguniform (3778 segments)"), case_key("segments pareto1.5 (3778 segments)"));
        let page = page(&[fixture()]).unwrap();
        // ours 380.08 µs against torch.segment_reduce's 684.56, listed under the other count
        let r = row(&page, "| segments loguniform");
        assert_eq!(r[1..], ["380.08", "684.56 torch.segment_reduce", "90.2%", "ahead"]);
    }

    #[test]
    fn shares_are_of_the_ceiling_at_the_bytes_read() {
        let page = page(&[fixture()]).unwrap();
        // 2^22 f32 read 2^24 bytes: 1422.8 of 1707.8 GB/s; cupy's 13.33 µs is the faster vendor
        assert_eq!(row(&page, "| sum | f32 | 2^22")[3..], ["11.79", "13.33 cupy", "83.3%", "ahead"]);
        // 2^22 bf16 and a dot of 2^22 f32 read 2^23 and 2^25 bytes: no ceiling measured there
        assert_eq!(row(&page, "| sum | bf16 | 2^22")[3..], ["9.26", "12.64 torch", "", "ahead"]);
        assert_eq!(row(&page, "| dot | f32 | 2^22")[5], "");
        assert_eq!(row(&page, "| sum | f32 | 2^28")[3..], ["350.34", "349.65 cupy", "97.9%", "tie"]);
        assert_eq!(row(&page, "| f32 | 2^28 | default")[3..], ["350.66", "1.000", "350.21"]);
        assert_eq!(row(&page, "| i32 | 2^22 | reduce1")[3..], ["0.0340", "0.0496"]);
    }

    #[test]
    fn a_missing_file_is_named() {
        let dir = std::env::temp_dir().join(format!("reduce-cards-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for file in FILES.iter().filter(|&&f| f != "shapes.json") {
            std::fs::copy(fixture().join(file), dir.join(file)).unwrap();
        }
        let err = page(std::slice::from_ref(&dir)).unwrap_err().to_string();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(err.starts_with(&dir.join("shapes.json").display().to_string()) && err.lines().count() == 1, "{err}");
    }
}
