//! `reduce explain`: the hardware counters that carry each teaching step's
//! reason, read by Nsight Compute (`ncu --clock-control none --set full`,
//! never changing the GPU's clocks) on one launch of each kernel: the first
//! level of a `reduce run` over the whole input.
//!
//! Harris's reasons, and the counters that measure them:
//! * divergent branches (step 1 → 2): branch efficiency, active threads per
//!   warp instruction;
//! * shared-memory bank conflicts (2 → 3): conflicts on shared loads and stores;
//! * idle threads and instruction overhead (3 → 4 → 5 → 6): warp instructions
//!   executed per element, active threads per instruction;
//! * barriers (4 → 5 → 6): warps stalled at a barrier;
//! * loads in flight (7, vectorized, single_pass): warps stalled on memory
//!   (long scoreboard), DRAM throughput, L2 hit rate;
//! * and for every step: registers per thread and achieved occupancy.
//!
//! Columns: kernel time; branch efficiency (uniform branch targets); active
//! (predicated-on) threads per warp instruction, of 32; shared-memory bank
//! conflicts, warp instructions, global-load (warp) instructions and
//! shared-memory instructions per input element; warps stalled at a barrier and on a global load (long
//! scoreboard), per issued instruction; DRAM read throughput; L2 hit rate;
//! registers per thread; achieved occupancy.
//!
//! A counter that this `ncu` does not report is printed as `n/a`; the raw CSV
//! is kept for the record, and `reduce explain --from-raw FILE` prints the
//! table again from it without a GPU.

use std::path::Path;
use std::process::Command;

use reduction::{Error, Result, registry::Kernel};

/// One counter of the table: its column title, how to read it from the raw
/// metrics, and how to print it.
struct Counter {
    title: &'static str,
    read: fn(&Metrics, usize) -> Option<f64>,
    digits: usize,
}

/// One profiled launch: metric name → value (as printed by `ncu --page raw`).
pub struct Metrics {
    values: Vec<(String, String)>,
}

impl Metrics {
    /// The value of the first of `names` present, as a number (ncu prints
    /// thousands separators in some versions: they are dropped).
    pub fn get(&self, names: &[&str]) -> Option<f64> {
        names.iter().find_map(|name| {
            let (_, v) = self.values.iter().find(|(k, _)| k == name)?;
            v.replace(',', "").trim().parse().ok()
        })
    }

    /// The sum of the values of every metric whose name contains all of `parts`.
    pub fn sum_containing(&self, parts: &[&str]) -> Option<f64> {
        let found: Vec<f64> = self
            .values
            .iter()
            .filter(|(k, _)| parts.iter().all(|p| k.contains(p)))
            .filter_map(|(_, v)| v.replace(',', "").trim().parse().ok())
            .collect();
        (!found.is_empty()).then(|| found.iter().sum())
    }
}

const COUNTERS: [Counter; 13] = [
    Counter { title: "time µs", read: |m, _| m.get(&["gpu__time_duration.sum"]).map(|ns| ns / 1e3), digits: 1 },
    Counter {
        title: "branch eff %",
        read: |m, _| m.get(&["smsp__sass_average_branch_targets_threads_uniform.pct"]),
        digits: 1,
    },
    Counter {
        title: "active threads/inst",
        read: |m, _| m.get(&["smsp__thread_inst_executed_pred_on_per_inst_executed.ratio"]),
        digits: 1,
    },
    Counter {
        title: "bank conflicts/elem",
        read: |m, n| {
            let ld = m.get(&["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]);
            let st = m.get(&["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]);
            match (ld, st) {
                (None, None) => m.get(&["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"]).map(|c| c / n as f64),
                (ld, st) => Some((ld.unwrap_or(0.0) + st.unwrap_or(0.0)) / n as f64),
            }
        },
        digits: 3,
    },
    Counter {
        title: "warp inst/elem",
        read: |m, n| m.get(&["smsp__inst_executed.sum", "sm__inst_executed.sum"]).map(|i| i / n as f64),
        digits: 3,
    },
    Counter {
        title: "global load inst/elem",
        read: |m, n| m.get(&["smsp__sass_inst_executed_op_global_ld.sum"]).map(|i| i / n as f64),
        digits: 4,
    },
    Counter {
        title: "shared inst/elem",
        read: |m, n| m.get(&["smsp__sass_inst_executed_op_shared.sum"]).map(|i| i / n as f64),
        digits: 3,
    },
    Counter {
        title: "barrier stall",
        read: |m, _| m.get(&["smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"]),
        digits: 2,
    },
    Counter {
        title: "memory stall",
        read: |m, _| m.get(&["smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"]),
        digits: 2,
    },
    Counter {
        title: "DRAM GB/s",
        read: |m, _| m.get(&["dram__bytes_read.sum.per_second"]).map(|b| b / 1e9),
        digits: 0,
    },
    Counter { title: "L2 hit %", read: |m, _| m.get(&["lts__t_sector_hit_rate.pct"]), digits: 1 },
    Counter { title: "regs", read: |m, _| m.get(&["launch__registers_per_thread"]), digits: 0 },
    Counter {
        title: "occupancy %",
        read: |m, _| m.get(&["sm__warps_active.avg.pct_of_peak_sustained_active"]),
        digits: 1,
    },
];

/// Parse `ncu --csv --page raw`: a header of metric names, a row of units,
/// then one row per profiled launch. Lines before the header (ncu's own
/// messages) are skipped.
///
/// ```
/// let csv = "==PROF== Connected\n\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"nsecond\"\n\"0\",\"k\",\"1,234\"\n";
/// let rows = reduce::explain::parse_raw_csv(csv);
/// assert_eq!(rows.len(), 1);
/// assert_eq!(rows[0].get(&["gpu__time_duration.sum"]), Some(1234.0));
/// ```
pub fn parse_raw_csv(text: &str) -> Vec<Metrics> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("\"ID\""));
    let Some(header) = lines.next().map(fields) else {
        return Vec::new();
    };
    lines
        .skip(1) // units
        .filter(|l| l.starts_with('"'))
        .map(|l| Metrics { values: header.iter().cloned().zip(fields(l)).collect() })
        .collect()
}

/// The fields of one CSV line whose fields are all quoted.
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    out.push(field);
    out
}

/// The table: one row per kernel (`None`: ncu profiled no launch of it).
///
/// ```
/// let k = reduction::registry::Kernel::find("reduce1").unwrap();
/// let text = reduce::explain::table(&[(k, None)], 1 << 22);
/// assert!(text.contains("| 1 | reduce1 | n/a"));
/// ```
pub fn table(rows: &[(&'static Kernel, Option<Metrics>)], n: usize) -> String {
    let titles: Vec<&str> = COUNTERS.iter().map(|c| c.title).collect();
    let mut s = format!("| step | kernel | {} |\n|---:|---|{}\n", titles.join(" | "), "---:|".repeat(titles.len()));
    for (k, m) in rows {
        let cells: Vec<String> = COUNTERS
            .iter()
            .map(|c| match m.as_ref().and_then(|m| (c.read)(m, n)) {
                Some(v) => format!("{v:.*}", c.digits),
                None => "n/a".to_string(),
            })
            .collect();
        s += &format!("| {} | {} | {} |\n", k.step, k.id, cells.join(" | "));
    }
    for c in &COUNTERS {
        if rows.iter().all(|(_, m)| m.as_ref().and_then(|m| (c.read)(m, n)).is_none()) {
            s += &format!("n/a `{}`: this ncu reported none of its metrics (or profiled no launch)\n", c.title);
        }
    }
    s
}

/// `ncu`: `$NCU`, else on `$PATH` or in CUDA's default place; or why there
/// is none.
pub fn find_ncu() -> Result<std::path::PathBuf> {
    if let Some(path) = std::env::var_os("NCU").map(std::path::PathBuf::from) {
        return if path.is_file() {
            Ok(path)
        } else {
            Err(Error::Invalid(format!("ncu (Nsight Compute) not found at NCU={}", path.display())))
        };
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("ncu"))
        .find(|p| p.is_file());
    on_path
        .or_else(|| Some("/usr/local/cuda/bin/ncu".into()).filter(|p: &std::path::PathBuf| p.is_file()))
        .ok_or_else(|| Error::Invalid("ncu (Nsight Compute) not found: put the CUDA toolkit's bin/ on PATH".into()))
}

/// Profile the first launch of each kernel's entry in `reduce run --kernel
/// K --n N --block B --runs 1` (this executable, `args` = the type and the
/// device) and return its metrics; the raw CSV of each is appended to `raw`.
pub fn profile(
    ncu: &Path,
    kernels: &[&'static Kernel],
    n: usize,
    block: u32,
    args: &[String],
    raw: &mut String,
) -> Result<Vec<(&'static Kernel, Option<Metrics>)>> {
    let exe = std::env::current_exe().map_err(|e| Error::Invalid(format!("cannot find this executable: {e}")))?;
    let mut rows = Vec::new();
    for &k in kernels {
        let output = Command::new(ncu)
            .args(["--clock-control", "none", "--set", "full", "--csv", "--page", "raw"])
            .args(["--kernel-name", &format!("regex:^{}_", k.id), "--launch-count", "1"])
            .arg(&exe)
            .args(["run", "--kernel", k.id, "--n", &n.to_string(), "--block", &block.to_string(), "--runs", "1"])
            .args(args)
            .output()
            .map_err(|e| Error::Invalid(format!("cannot run {}: {e}", ncu.display())))?;
        let text = String::from_utf8_lossy(&output.stdout);
        raw.push_str(&format!("## {} (exit {:?})\n{text}\n", k.id, output.status.code()));
        raw.push_str(&String::from_utf8_lossy(&output.stderr));
        rows.push((k, parse_raw_csv(&text).into_iter().next()));
    }
    Ok(rows)
}

/// The rows again from the raw text [`profile`] wrote: one `## <kernel id>`
/// section per kernel.
///
/// ```
/// let raw = "## reduce1 (exit Some(0))\n\"ID\",\"gpu__time_duration.sum\"\n\"\",\"ns\"\n\"0\",\"2000\"\n";
/// let rows = reduce::explain::from_raw(raw).unwrap();
/// assert_eq!(rows[0].0.id, "reduce1");
/// assert_eq!(rows[0].1.as_ref().unwrap().get(&["gpu__time_duration.sum"]), Some(2000.0));
/// ```
pub fn from_raw(text: &str) -> Result<Vec<(&'static Kernel, Option<Metrics>)>> {
    let mut rows = Vec::new();
    for section in text.split("\n## ").map(|s| s.trim_start_matches("## ")) {
        let Some(id) = section.split_whitespace().next() else { continue };
        rows.push((Kernel::find(id)?, parse_raw_csv(section).into_iter().next()));
    }
    Ok(rows)
}
