//! The book (`docs/`) and the README hold to what they describe: every page
//! made from measurements is what its command makes of the committed raw
//! output, the command reference is the commands' own help, every link
//! resolves, the raw output stays small and named by card, and no page
//! speaks of how the project was built. All on the CPU.
//!
//! A generated page that differs fails with the command that makes it;
//! `REDUCE_BLESS=1` rewrites the command reference in place.

mod common;
#[path = "common/reduce_bin.rs"]
mod reduce_bin;

use std::path::{Path, PathBuf};

use common::{cpu_trial, ensure};
use libtest_mimic::Failed;
use reduce_bin::{reduce, root};

/// `reduce ARGS`, which must succeed; its stdout.
fn reduce_ok(args: &[&str]) -> Result<String, Failed> {
    let out = reduce(args)?;
    ensure(out.status.success(), || format!("reduce {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr)))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A scratch folder of this process, removed by the caller.
fn scratch(what: &str) -> Result<PathBuf, Failed> {
    let dir = std::env::temp_dir().join(format!("reduce-docs-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn same(a: &Path, b: &Path) -> bool {
    std::fs::read(a).ok() == std::fs::read(b).ok()
}

/// The teaching steps, a row each in the counters' table.
const STEPS: usize = 11;

/// The cards measured: the folders of `docs/results` but `multi`.
const CARDS: [&str; 2] = ["h100", "h200"];

fn main() {
    let trials = vec![
        cpu_trial("docs::harris_page_is_made_from_its_reports", harris_page),
        cpu_trial("docs::card_pages_are_made_from_their_results", card_pages),
        cpu_trial("docs::tutorial_counters_are_made_from_the_raw_ncu_output", tutorial_counters),
        cpu_trial("docs::reference_is_the_commands_help", reference),
        cpu_trial("docs::readme_is_short_and_lists_every_command", readme),
        cpu_trial("docs::readme_shows_the_program_ci_builds", readme_program),
        cpu_trial("docs::every_page_is_in_the_summary_and_every_link_resolves", links),
        cpu_trial("docs::results_are_few_and_named_by_card", results_by_card),
        cpu_trial("docs::no_process_words", no_process_words),
        cpu_trial("docs::the_path_check_catches_a_moved_file", || {
            let page = "see `host/src/no_such.rs` and `host/src/lib.rs`, and `reduce list`";
            let found = missing_paths(&root()?, Path::new("t.md"), page);
            ensure(found.len() == 1 && found[0].contains("no_such"), || format!("{found:?}"))
        }),
        cpu_trial("docs::raw_output_is_cited_by_its_part", cited_parts),
        cpu_trial("docs::sources_point_at_pages_that_exist", sources_point_at_pages),
        cpu_trial("docs::the_source_check_catches_a_moved_page", || {
            let text = "see docs/src/performance/tuning.md and `docs/src/guide/gone.md`.";
            let found = missing_pages(&root()?, Path::new("x.rs"), text);
            ensure(found.len() == 1 && found[0].ends_with("docs/src/guide/gone.md"), || format!("{found:?}"))
        }),
        cpu_trial("docs::the_part_check_catches_a_missing_part", || {
            let dir = scratch("parts")?;
            let raw = dir.join("raw.txt");
            std::fs::write(&raw, "# ==== Tiles, 2026-11-26 ====\n1 2 3\n# ==== Tiles again, 2026-11-27 ====\n")?;
            let page = "[raw, \"Tiles again\"](raw.txt) [raw,\n\"Rows\"](raw.txt) [raw, \"Tiles\"](raw.txt) \
                        as the last sitting of [raw](raw.txt) shows, and `[raw, \"Nope\"](raw.txt)` is code";
            let found = unnamed_parts(&dir.join("t.md"), page);
            std::fs::remove_dir_all(&dir)?;
            ensure(
                found.len() == 3
                    && found[0].contains("last sitting")
                    && found[1].contains("\"Rows\" is on 0")
                    && found[2].contains("\"Tiles\" is on 2"),
                || format!("{found:?}"),
            )
        }),
        cpu_trial("docs::the_link_check_catches_a_broken_link", || {
            let page = "# T\n\n## A heading\n[ok](#a-heading) [bad](#nothing) [gone](no-such.md)\n";
            let found = broken_links(Path::new("/nonexistent/t.md"), page);
            ensure(found.len() == 2 && found.iter().all(|f| f.contains("nothing") || f.contains("no-such")), || {
                format!("{found:?}")
            })
        }),
    ];
    common::run(trials)
}

/// `docs/src/performance/harris.md` and its charts are what `reduce report`
/// makes of the cards' reports, regenerated in a scratch copy.
fn harris_page() -> Result<(), Failed> {
    let (root, dir) = (root()?, scratch("harris")?);
    let page = dir.join("harris.md");
    std::fs::copy(root.join("docs/src/performance/harris.md"), &page)?;
    let mut args = vec!["report".to_string()];
    for card in CARDS {
        std::fs::create_dir_all(dir.join(card))?;
        for t in ["i32", "f32"] {
            let json = dir.join(card).join(format!("bench-{t}.json"));
            std::fs::copy(root.join(format!("docs/results/{card}/bench-{t}.json")), &json)?;
            args.push(json.display().to_string());
        }
    }
    args.extend(["--page".to_string(), page.display().to_string()]);
    reduce_ok(&args.iter().map(String::as_str).collect::<Vec<_>>())?;
    let mut differ = Vec::new();
    if !same(&page, &root.join("docs/src/performance/harris.md")) {
        differ.push("docs/src/performance/harris.md".to_string());
    }
    for card in CARDS {
        for t in ["i32", "f32"] {
            let svg = format!("{card}/bench-{t}.svg");
            if !same(&dir.join(&svg), &root.join("docs/results").join(&svg)) {
                differ.push(format!("docs/results/{svg}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    ensure(differ.is_empty(), || {
        format!("{} differ from `reduce report` of the reports (the command is on the page)", differ.join(", "))
    })
}

/// Each card's page, and the two side by side, are what `reduce cards`
/// makes of the committed folders.
fn card_pages() -> Result<(), Failed> {
    let (root, dir) = (root()?, scratch("cards")?);
    let mut pages: Vec<(String, Vec<&str>)> = CARDS.iter().map(|c| (format!("{c}.md"), vec![*c])).collect();
    pages.push(("cards.md".into(), CARDS.to_vec()));
    let mut differ = Vec::new();
    for (name, cards) in &pages {
        let committed = root.join("docs/src/performance").join(name);
        let page = dir.join(name);
        std::fs::copy(&committed, &page)?;
        let mut args = vec!["cards".to_string()];
        args.extend(cards.iter().map(|c| root.join("docs/results").join(c).display().to_string()));
        args.extend(["--page".to_string(), page.display().to_string()]);
        reduce_ok(&args.iter().map(String::as_str).collect::<Vec<_>>())?;
        if !same(&page, &committed) {
            differ.push(format!("docs/src/performance/{name} (`reduce cards` of {})", cards.join(", ")));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    ensure(differ.is_empty(), || format!("differ from their folders: {}", differ.join("; ")))
}

/// The counters tables of the tutorial, one per card with raw ncu output,
/// are `reduce explain --from-raw` of it.
fn tutorial_counters() -> Result<(), Failed> {
    let root = root()?;
    let tutorial = std::fs::read_to_string(root.join("docs/src/tutorial.md"))?;
    let mut tables = 0;
    for card in CARDS {
        let raw = root.join(format!("docs/results/{card}/explain-raw-i32.txt"));
        if !raw.is_file() {
            continue;
        }
        let table = reduce_ok(&["explain", "--from-raw", &raw.display().to_string()])?;
        let open = format!("<!-- explain {card} -->\n");
        let between = tutorial.split(open.as_str()).nth(1).and_then(|t| t.split("<!-- /explain -->").next());
        ensure(between == Some(table.as_str()), || {
            format!("docs/src/tutorial.md's {card} table differs from:\n{table}")
        })?;
        ensure(table.lines().count() == 2 + STEPS, || table.clone())?;
        tables += 1;
    }
    ensure(tables > 0, || "no card has docs/results/CARD/explain-raw-i32.txt".into())
}

/// The commands `reduce --help` lists (its hidden ones are not).
fn commands() -> Result<Vec<String>, Failed> {
    let help = reduce_ok(&["--help"])?;
    let names: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .map_while(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|n| n != "help")
        .collect();
    ensure(names.len() > 10, || format!("commands: {names:?}"))?;
    Ok(names)
}

/// `docs/src/reference/cli.md`: `reduce --help` and every command's
/// `--help`, verbatim, between `<!-- reference -->` and `<!-- /reference -->`.
fn reference() -> Result<(), Failed> {
    let path = root()?.join("docs/src/reference/cli.md");
    let mut text = format!("## `reduce`\n\n```text\n{}```\n", reduce_ok(&["--help"])?);
    for name in commands()? {
        text += &format!("\n## `reduce {name}`\n\n```text\n{}```\n", reduce_ok(&[&name, "--help"])?);
    }
    let page = std::fs::read_to_string(&path)?;
    let made = reduce::report::section(&page, "<!-- reference -->\n", "<!-- /reference -->", &text)
        .map_err(|e| e.to_string())?
        .ok_or("docs/src/reference/cli.md has no `<!-- reference -->` section")?;
    if std::env::var_os("REDUCE_BLESS").is_some() {
        std::fs::write(&path, &made)?;
    }
    ensure(made == page, || {
        "docs/src/reference/cli.md differs from the commands' --help: \
         `REDUCE_BLESS=1 cargo test -p reduce --test docs` rewrites it"
            .into()
    })
}

/// The README: at most 200 lines, and its command table names every command.
fn readme() -> Result<(), Failed> {
    let readme = std::fs::read_to_string(root()?.join("README.md"))?;
    let lines = readme.lines().count();
    ensure(lines <= 200, || format!("README.md has {lines} lines (at most 200)"))?;
    let missing: Vec<String> = commands()?
        .into_iter()
        .filter(|n| !readme.contains(&format!("| `{n}")) && !readme.contains(&format!("| `reduce {n}")))
        .collect();
    ensure(missing.is_empty(), || format!("README.md's command table lacks: {missing:?}"))
}

/// The README's program ("Use it from your project") is
/// `examples/downstream/src/main.rs`, which CI builds on stable.
fn readme_program() -> Result<(), Failed> {
    let root = root()?;
    let readme = std::fs::read_to_string(root.join("README.md"))?;
    let program = std::fs::read_to_string(root.join("examples/downstream/src/main.rs"))?;
    let shown =
        readme.split("```rust\n").nth(1).and_then(|r| r.split("```").next()).ok_or("README.md shows no Rust")?;
    ensure(shown.lines().count() > 10 && program.contains(shown.trim()), || {
        "README.md's program differs from examples/downstream/src/main.rs".into()
    })
}

/// mdBook's id of a heading: lower case, spaces to `-`, only letters,
/// digits, `-` and `_` kept.
fn heading_id(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_lowercase().next().unwrap_or(c)),
            _ => None,
        })
        .collect()
}

/// The ids of a Markdown page's headings (outside code blocks).
fn heading_ids(page: &str) -> Vec<String> {
    let mut code = false;
    let mut ids = Vec::new();
    for line in page.lines() {
        if line.starts_with("```") {
            code = !code;
        } else if !code && line.starts_with('#') {
            ids.push(heading_id(line.trim_start_matches('#')));
        }
    }
    ids
}

/// The relative links of a Markdown page (outside code blocks and inline
/// code) that do not resolve: a missing file, or a missing heading of a page.
fn broken_links(file: &Path, page: &str) -> Vec<String> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut found = Vec::new();
    for (n, text) in prose(page) {
        for part in text.split("](").skip(1) {
            let Some(target) = part.split(')').next().and_then(|t| t.split_whitespace().next()) else { continue };
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
            let target_file = if path.is_empty() { file.to_path_buf() } else { dir.join(path) };
            let ok = if path.is_empty() && anchor.is_empty() {
                true
            } else if !anchor.is_empty() && (path.is_empty() || path.ends_with(".md")) {
                let page =
                    if path.is_empty() { Some(page.to_string()) } else { std::fs::read_to_string(&target_file).ok() };
                page.is_some_and(|p| heading_ids(&p).iter().any(|id| id == anchor))
            } else {
                target_file.exists()
            };
            if !ok {
                found.push(format!("{}:{}: {target}", file.display(), n + 1));
            }
        }
    }
    found
}

/// The lines of a Markdown page outside code blocks, numbered from 0, each
/// without its inline code spans: the text whose links are links.
fn prose(page: &str) -> Vec<(usize, String)> {
    let mut code = false;
    page.lines()
        .enumerate()
        .filter(|(_, l)| {
            if l.starts_with("```") {
                code = !code;
                return false;
            }
            !code
        })
        .map(|(n, l)| (n, l.split('`').step_by(2).collect::<Vec<_>>().join(" ")))
        .collect()
}

/// Every `.md` file under `dir`.
fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(d) = folders.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The book's pages, the README and the raw output's README: what a reader
/// reads.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut files = markdown_under(&root.join("docs/src"));
    files.extend([root.join("README.md"), root.join("docs/results/README.md")]);
    files
}

/// Every page of `docs/src` is in `SUMMARY.md`, and every relative link of
/// the book, the README and the raw output's README resolves.
fn links() -> Result<(), Failed> {
    let root = root()?;
    let src = root.join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md"))?;
    let listed: Vec<PathBuf> =
        summary.split("](").skip(1).filter_map(|p| p.split(')').next()).map(|p| src.join(p)).collect();
    let files = pages(&root);
    let unlisted: Vec<String> = files
        .iter()
        .filter(|p| p.starts_with(&src) && !p.ends_with("SUMMARY.md") && !listed.contains(p))
        .map(|p| p.display().to_string())
        .collect();
    ensure(unlisted.is_empty(), || format!("pages missing from docs/src/SUMMARY.md: {unlisted:?}"))?;
    let mut broken = Vec::new();
    for f in &files {
        broken.extend(broken_links(f, &std::fs::read_to_string(f)?));
    }
    ensure(files.len() > 15, || format!("{} pages", files.len()))?;
    ensure(broken.is_empty(), || format!("broken links:\n{}", broken.join("\n")))?;
    let mut missing = Vec::new();
    for f in &files {
        missing.extend(missing_paths(&root, f, &std::fs::read_to_string(f)?));
    }
    ensure(missing.is_empty(), || format!("files named in the docs that are not there:\n{}", missing.join("\n")))
}

/// A header line of a raw output file: a sitting's title (`#` or `=` in a
/// text file, a line with `"what": "sitting"` in a JSON lines file).
fn is_header(line: &str) -> bool {
    line.starts_with('#') || line.starts_with('=') || line.contains("\"what\": \"sitting\"")
}

/// The citations of raw output in a page that do not name one part of
/// it: a link into `docs/results` whose text quotes a part (`[h200/x.txt,
/// "The part"](...)`) must find it on exactly one header line of the file,
/// and no page points at a part by where it lies ("the last sitting"),
/// which moves when the file grows.
fn unnamed_parts(file: &Path, page: &str) -> Vec<String> {
    let dir = file.parent().unwrap_or(Path::new("."));
    // a link's text may run over a line's end
    let text = prose(page).into_iter().map(|(_, l)| l).collect::<Vec<_>>().join(" ");
    let mut found = Vec::new();
    let lower = text.to_lowercase();
    for vague in ["the last sitting", "the last part", "the last parts", "the end of [", "its later part"] {
        if lower.contains(vague) {
            found.push(format!("{}: a part named by where it lies: {vague:?}", file.display()));
        }
    }
    for (i, _) in text.match_indices("](") {
        let Some(open) = text[..i].rfind('[') else { continue };
        let label = &text[open + 1..i];
        let Some(target) = text[i + 2..].split(')').next() else { continue };
        let mut quoted = label.split('"');
        let Some(part) = quoted.nth(1) else { continue };
        if target.contains("://") || target.ends_with(".md") || target.contains(".md#") {
            continue;
        }
        let raw = std::fs::read_to_string(dir.join(target)).unwrap_or_default();
        let headers = raw.lines().filter(|l| is_header(l) && l.contains(part)).count();
        if headers != 1 {
            found.push(format!("{}: {target} \"{part}\" is on {headers} header lines, not one", file.display()));
        }
    }
    found
}

/// Every page names the part of the raw output it cites.
fn cited_parts() -> Result<(), Failed> {
    let root = root()?;
    let files = pages(&root);
    let mut found = Vec::new();
    for f in &files {
        found.extend(unnamed_parts(f, &std::fs::read_to_string(f)?));
    }
    ensure(found.is_empty(), || format!("raw output cited without its part:\n{}", found.join("\n")))
}

/// The repository files a page names in code spans (`host/src/x.rs`,
/// `gpu/src/kernels/`) that do not exist: a page that fell behind a move.
fn missing_paths(root: &Path, file: &Path, text: &str) -> Vec<String> {
    const TOP: [&str; 11] = [
        "host/",
        "gpu/",
        "device/",
        "cli/",
        "tests/",
        "testkit/",
        "xtask/",
        "cuda/",
        "ptx-builder/",
        "docs/",
        "examples/",
    ];
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| TOP.iter().any(|t| span.starts_with(t)) && !span.contains([' ', '*', '{', '<']))
        .filter(|span| !root.join(span.trim_end_matches(['.', ',', ':'])).exists())
        .map(|span| format!("{}: `{span}`", file.display()))
        .collect()
}

/// `docs/results`: its README and one folder per card (and `multi`), at
/// most 60 files in all.
fn results_by_card() -> Result<(), Failed> {
    let results = root()?.join("docs/results");
    let mut count = 0;
    let mut stray = Vec::new();
    let mut folders = vec![results.clone()];
    while let Some(d) = folders.pop() {
        for entry in std::fs::read_dir(&d)?.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if d == results && !CARDS.contains(&name.as_str()) && name != "multi" {
                    stray.push(name);
                }
                folders.push(path);
            } else {
                count += 1;
                if d == results && name != "README.md" {
                    stray.push(name);
                }
            }
        }
    }
    ensure(stray.is_empty(), || format!("docs/results holds more than the cards' folders: {stray:?}"))?;
    ensure(count <= 60, || format!("docs/results holds {count} files (at most 60)"))
}

/// The words of how the project was built, not of what it does: a period
/// of work, an issue number, a run id, the words of a hand-in, a reader of the work, a source
/// document by its file number. Spelled in pieces so that this file does
/// not hold them.
fn process_word(line: &str) -> Option<String> {
    let l = line.to_lowercase();
    let words =
        [["ses", "sion"].concat(), ["as sub", "mitted"].concat(), ["revi", "ewer"].concat(), ["seed ", "00"].concat()];
    if let Some(w) = words.iter().find(|w| l.contains(w.as_str())) {
        return Some(w.clone());
    }
    let b = l.as_bytes();
    let digits = |i: usize| b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    for i in 0..b.len() {
        let boundary = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        // an issue number
        if b[i..].starts_with(["iss", "ue "].concat().as_bytes()) && boundary && digits(i + 6) > 0 {
            return Some(String::from_utf8_lossy(&b[i..(i + 6 + digits(i + 6))]).into_owned());
        }
        // a run id: the letter s, digits, c, digits
        if b[i] == b's' && boundary && i + 1 < b.len() {
            let d = digits(i + 1);
            let j = i + 1 + d;
            if d > 0 && j + 1 < b.len() && b[j] == b'c' && b[j + 1].is_ascii_digit() {
                let end = j + 1 + digits(j + 1);
                if end == b.len() || !b[end].is_ascii_alphanumeric() {
                    return Some(String::from_utf8_lossy(&b[i..end]).into_owned());
                }
            }
        }
    }
    None
}

/// No process words in the README, the book, the raw output's README, the
/// sources (and so the API docs), any command's help or the list of kernels.
fn no_process_words() -> Result<(), Failed> {
    let (run, number, word) = (["in s1", "0c2 we"].concat(), ["iss", "ue 13's"].concat(), ["tiss", "ue 13"].concat());
    for (line, want) in [(run.as_str(), true), (number.as_str(), true), (word.as_str(), false), ("use 4 s1c", false)] {
        ensure(process_word(line).is_some() == want, || format!("the check itself: {line:?}"))?;
    }
    let root = root()?;
    let mut files = pages(&root);
    files.push(root.join("docs/book.toml"));
    files.extend(sources(&root));
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            if let Some(w) = process_word(line) {
                found.push(format!("{}:{}: {w}", f.display(), i + 1));
            }
        }
    }
    // the help of the command and of each of its commands, and the list of kernels
    let mut commands: Vec<Vec<String>> = vec![vec!["--help".into()], vec!["list".into()]];
    commands.extend(commands_for_help()?);
    for args in &commands {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for line in reduce_ok(&args)?.lines() {
            if let Some(w) = process_word(line) {
                found.push(format!("reduce {}: {w}", args.join(" ")));
            }
        }
    }
    ensure(files.len() > 100, || format!("{} files", files.len()))?;
    ensure(found.is_empty(), || found.join("\n"))
}

/// The sources, scripts and examples: what the API docs, the commands and
/// the developers read.
fn sources(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders: Vec<PathBuf> = [
        "gpu/src",
        "host/src",
        "device/src",
        "testkit/src",
        "cli/src",
        "cli/baselines",
        "xtask/src",
        "ptx-builder/src",
        "tests",
        "cuda",
        "examples",
    ]
    .iter()
    .map(|d| root.join(d))
    .collect();
    while let Some(dir) = folders.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if path.is_dir() && name != "target" {
                folders.push(path);
            } else if [".rs", ".cu", ".py", ".sh", ".md", ".toml"].iter().any(|e| name.ends_with(e)) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The pages and raw output a source points at (`docs/src/x.md`,
/// `docs/results/h200/y.txt`) that are not there: a pointer left behind
/// when a page moved.
fn missing_pages(root: &Path, file: &Path, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, _) in text.match_indices("docs/") {
        let path: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '<' | '>'))
            .collect();
        let path = path.trim_end_matches('.');
        let named_file = path.rsplit('/').next().is_some_and(|n| n.contains('.'));
        if named_file && !path.contains('<') && !root.join(path).exists() {
            found.push(format!("{}: {path}", file.display()));
        }
    }
    found
}

/// Every page or raw output file a source points at exists.
fn sources_point_at_pages() -> Result<(), Failed> {
    let root = root()?;
    // this file names made-up pages for its own checks
    let files: Vec<PathBuf> = sources(&root).into_iter().filter(|f| !f.ends_with("tests/docs.rs")).collect();
    let mut found = Vec::new();
    for f in &files {
        found.extend(missing_pages(&root, f, &std::fs::read_to_string(f).unwrap_or_default()));
    }
    ensure(files.len() > 100, || format!("{} files", files.len()))?;
    ensure(found.is_empty(), || format!("pages the sources name that are not there:\n{}", found.join("\n")))
}

/// `[COMMAND, --help]` for every command.
fn commands_for_help() -> Result<Vec<Vec<String>>, Failed> {
    Ok(commands()?.into_iter().map(|n| vec![n, "--help".to_string()]).collect())
}
