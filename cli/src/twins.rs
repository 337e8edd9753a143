//! The CUDA C++ column of `reduce bench`, measured in a process of its own.
//!
//! A kernel that faults (an illegal address, a trap) leaves a sticky error
//! on its CUDA context: every later call in that context fails. The CUDA
//! C++ twins are compiled at run time from a file a learner may edit, so
//! they run apart from the Rust kernels: `reduce bench` starts itself again
//! with `--cuda-from K` (hidden), and that process measures the twins from
//! cell `K` on ([`crate::bench::cells`]' order), printing one JSON [`Line`]
//! per cell. When it ends before the last cell, the cell it was at gets the
//! reason (its last line on stderr, or its exit status) and a fresh process
//! goes on from the next one. So a faulting twin costs its own cell and
//! nothing else: the Rust table, the other twins and the JSON complete.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use crate::bench::Cell;

/// One line the twins' process prints on stdout.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Line {
    /// A cell, measured or with its reason.
    Cell(Cell),
    /// No twin can run at all (no NVRTC, the source does not compile): the
    /// whole column's reason.
    Column(String),
}

impl Line {
    /// The line as printed: one JSON object, no newline inside.
    ///
    /// ```
    /// use reduce::twins::Line;
    /// let text = Line::Column("libnvrtc not found".into()).text();
    /// assert!(matches!(Line::parse(&text), Some(Line::Column(why)) if why == "libnvrtc not found"));
    /// assert!(Line::parse("progress: 3/10").is_none());
    /// ```
    pub fn text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A printed line read back; `None` for any other output.
    pub fn parse(line: &str) -> Option<Line> {
        serde_json::from_str(line).ok()
    }
}

/// Run the twins' process `exe args --cuda-from K` until a cell is in for
/// each of `wanted` (size and kernel id, in [`crate::bench::cells`]' order,
/// as the process measures them), starting a fresh one after each that
/// ended early; `tick` is called for each cell. `Err` is the whole column's
/// reason.
///
/// ```no_run
/// let args = ["bench", "--n", "1048576", "--kernel", "reduce1"].map(String::from);
/// let exe = std::env::current_exe().unwrap();
/// let cells = reduce::twins::run_column(&exe, &args, &[(1 << 20, "reduce1".into())], |_| {});
/// ```
pub fn run_column(
    exe: &Path,
    args: &[String],
    wanted: &[(usize, String)],
    mut tick: impl FnMut(&Cell),
) -> Result<Vec<Cell>, String> {
    let mut cells: Vec<Cell> = Vec::new();
    while let Some((n, kernel)) = wanted.get(cells.len()) {
        let from = cells.len();
        let mut child = Command::new(exe)
            .args(args)
            .arg("--cuda-from")
            .arg(from.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {} for the CUDA C++ column: {e}", exe.display()))?;
        let mut stderr = child.stderr.take();
        // stderr is read on its own thread, so a chatty child cannot block on a full pipe
        let errors = std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(e) = stderr.as_mut() {
                let _ = e.read_to_string(&mut text);
            }
            text
        });
        if let Some(out) = child.stdout.take() {
            for line in BufReader::new(out).lines() {
                match line.as_deref().ok().and_then(Line::parse) {
                    Some(Line::Cell(cell)) => {
                        tick(&cell);
                        cells.push(cell);
                    }
                    Some(Line::Column(why)) => {
                        let _ = child.wait();
                        return Err(why);
                    }
                    None => {}
                }
            }
        }
        let status = child.wait().map_err(|e| format!("waiting for the CUDA C++ process: {e}"))?;
        let errors = errors.join().unwrap_or_default();
        if cells.len() == from {
            // it measured nothing: the cell it was at is lost, with the reason
            let why = errors.lines().rev().map(str::trim).find(|l| !l.is_empty()).map(str::to_string);
            let why = why.unwrap_or_else(|| format!("the CUDA C++ process ended ({status})"));
            let cell = Cell { n: *n, kernel: kernel.clone(), outcome: Err(why) };
            tick(&cell);
            cells.push(cell);
        }
    }
    Ok(cells)
}
