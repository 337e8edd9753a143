//! The PTX build recipe: compile a `no_std` kernel crate to PTX with rustc's
//! own NVPTX backend. The workspace's one way kernels become PTX, used by
//! the host library's build script (`host/build.rs`), by `cargo xtask
//! build-ptx`, and by anyone's build script for a kernel crate of their own
//! (the role rust-cuda's `cuda_builder` plays).
//!
//! The kernels need a nightly compiler (`extern "gpu-kernel"`, NVPTX
//! intrinsics) and `core` built from source (`-Zbuild-std=core`, the
//! `rust-src` component), because rustup ships no standard library for
//! `nvptx64-nvidia-cuda`. The caller's build need not be nightly: the
//! kernel crate names its toolchain in its own `rust-toolchain.toml`, and
//! this crate runs `rustup run <that toolchain> cargo rustc ... --emit=asm`,
//! installing the toolchain (with `rust-src`) through rustup first when it
//! is missing. So a stable project can depend on a crate whose build script
//! builds kernels. See `../shared/TOOLCHAIN.md` for why this route and not
//! rust-cuda's `rustc_codegen_nvvm`.
//!
//! ```no_run
//! // build.rs of a crate that embeds the PTX of its kernel crate `../kernels`:
//! use std::path::PathBuf;
//! let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
//! let build = ptx_builder::PtxBuild::new("../kernels", "kernels", ptx_builder::nested_target_dir(&out_dir));
//! build.print_rerun_if_changed();
//! build.build(&out_dir.join("kernels.ptx")).unwrap_or_else(|e| panic!("{e}"));
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

/// The default target: Turing. PTX for sm_75 is JIT-compiled by the driver
/// for every GPU from Turing on (Ampere, Ada, Hopper, Blackwell), because PTX
/// is forward compatible. The kernels need nothing newer: `shfl.sync`,
/// `bar.warp.sync` and `match.any.sync` exist since sm_70.
pub const DEFAULT_ARCH: &str = "sm_75";

/// The target of the second, smaller PTX a library ships beside the
/// [`DEFAULT_ARCH`] one: Ampere, whose `cp.async` copies global memory
/// straight into shared memory. Of a build for it only the entries that
/// use what sm_75 lacks are kept ([`newer_entries`]); cards of sm_80 and
/// later load those entries from it, and every other from the sm_75 PTX.
pub const NEWER_ARCH: &str = "sm_80";

/// What to build.
#[derive(Clone, Debug)]
pub struct PtxBuild {
    /// The kernel crate's folder: its `Cargo.toml`, and a `rust-toolchain.toml`
    /// here or in a folder above it naming the nightly to build with.
    pub crate_dir: PathBuf,
    /// The kernel crate's package name (`gpu`).
    pub package: String,
    /// `sm_75`, `sm_80`, `sm_90`, ...: rustc's `-C target-cpu`.
    pub arch: String,
    /// Cargo features of the kernel crate.
    pub features: Vec<String>,
    /// Cargo's target directory for the nested build (see [`nested_target_dir`]).
    pub target_dir: PathBuf,
}

/// Where a build script's nested PTX build keeps its files: `ptx/` in the
/// outer build's target directory, found from `OUT_DIR`
/// (`<target>/<profile>/build/<pkg>-<hash>/out`), so that debug and release
/// builds share one compiled `core` and nothing is written into a
/// dependency's source tree. A separate directory, because the outer cargo
/// holds the lock on its own.
///
/// ```
/// use std::path::Path;
/// let out = Path::new("/p/target/release/build/host-1f2e/out");
/// assert_eq!(ptx_builder::nested_target_dir(out), Path::new("/p/target/ptx"));
/// assert_eq!(ptx_builder::nested_target_dir(Path::new("/odd")), Path::new("/odd/ptx-target"));
/// ```
pub fn nested_target_dir(out_dir: &Path) -> PathBuf {
    match out_dir.ancestors().find(|a| a.file_name().is_some_and(|n| n == "build")) {
        Some(build) => build.parent().and_then(Path::parent).unwrap_or(out_dir).join("ptx"),
        None => out_dir.join("ptx-target"),
    }
}

impl PtxBuild {
    /// A build of `package` in `crate_dir` for [`DEFAULT_ARCH`], no features.
    pub fn new(crate_dir: impl Into<PathBuf>, package: &str, target_dir: impl Into<PathBuf>) -> Self {
        PtxBuild {
            crate_dir: crate_dir.into(),
            package: package.to_string(),
            arch: DEFAULT_ARCH.to_string(),
            features: Vec::new(),
            target_dir: target_dir.into(),
        }
    }

    /// Tell cargo to run the build script again when the kernel crate's
    /// sources, manifest or toolchain change, or those of a crate it
    /// depends on by path (the device library in a checkout), and of theirs.
    pub fn print_rerun_if_changed(&self) {
        println!("cargo:rerun-if-changed={}", self.crate_dir.join("rust-toolchain.toml").display());
        for dir in path_dependencies(&self.crate_dir) {
            for path in ["src", "Cargo.toml"] {
                println!("cargo:rerun-if-changed={}", dir.join(path).display());
            }
        }
    }

    /// The toolchain the kernel crate names: `channel` in the first
    /// `rust-toolchain.toml` found in its folder or above.
    pub fn toolchain(&self) -> Result<String, String> {
        let file = self
            .crate_dir
            .ancestors()
            .map(|d| d.join("rust-toolchain.toml"))
            .find(|f| f.is_file())
            .ok_or_else(|| format!("no rust-toolchain.toml in {} or above it", self.crate_dir.display()))?;
        let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        channel(&text).ok_or_else(|| format!("{}: no `channel = \"...\"` line", file.display()))
    }

    /// The per-build directory: arch and features in the name, so that
    /// differently configured builds do not overwrite each other.
    fn config_dir(&self) -> PathBuf {
        let mut name = self.arch.clone();
        for f in &self.features {
            name.push('-');
            name.push_str(f);
        }
        self.target_dir.join(name)
    }

    /// Compile the kernel crate to PTX and copy it to `out`.
    ///
    /// Fails with the compiler's output if the build fails, and if the PTX
    /// calls a function it does not define (`.extern .func`: a call the
    /// driver cannot resolve, typically a panic path).
    pub fn build(&self, out: &Path) -> Result<(), String> {
        let toolchain = self.toolchain()?;
        let rustup = Rustup::find()?;
        rustup.ensure(&toolchain)?;
        let mut cmd = rustup.command();
        // A build script inherits the outer build's configuration (its
        // toolchain, flags, target and profile); none of it is meant for this
        // nested build.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            let outer = (key.starts_with("CARGO_") && key != "CARGO_HOME")
                || key.starts_with("RUSTC")
                || key.starts_with("RUSTDOC")
                || key.contains("RUSTFLAGS")
                || matches!(
                    key.as_str(),
                    "RUSTUP_TOOLCHAIN" | "TARGET" | "HOST" | "OUT_DIR" | "OPT_LEVEL" | "PROFILE" | "DEBUG" | "NUM_JOBS"
                );
            if outer {
                cmd.env_remove(&key);
            }
        }
        cmd.current_dir(&self.crate_dir)
            .args(["run", &toolchain, "cargo", "rustc", "--package", &self.package, "--lib", "--release"])
            .args(["--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
            .arg("--manifest-path")
            .arg(self.crate_dir.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(self.config_dir())
            .arg("--message-format=json-render-diagnostics");
        if !self.features.is_empty() {
            cmd.arg("--features").arg(self.features.join(","));
        }
        cmd.args(["--", "--emit=asm", "-C"]).arg(format!("target-cpu={}", self.arch));

        let output = cmd.output().map_err(|e| format!("cannot run {}: {e}", rustup.0.display()))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(format!(
                "building the {} crate for {} with {toolchain} failed:\n{}",
                self.package,
                self.arch,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let asm = asm_path(&stdout, &self.package)
            .ok_or(format!("cargo reported no library artifact for the {} package", self.package))?;
        let ptx = std::fs::read_to_string(&asm).map_err(|e| format!("cannot read {}: {e}", asm.display()))?;
        if let Some(line) = ptx.lines().find(|l| l.trim_start().starts_with(".extern .func")) {
            return Err(format!(
                "{}: the PTX calls a function nobody defines (a panic path or a core function that was not inlined): {line}",
                asm.display()
            ));
        }
        if let Some(dir) = out.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(out, ptx).map_err(|e| format!("cannot write {}: {e}", out.display()))
    }

    /// This build for [`NEWER_ARCH`], reduced to the entries that use what
    /// sm_75 lacks ([`newer_entries`]), written to `out`; the whole build's
    /// PTX is left beside it (`.whole.ptx`).
    pub fn build_newer(&self, out: &Path) -> Result<(), String> {
        let whole = out.with_extension("whole.ptx");
        PtxBuild { arch: NEWER_ARCH.to_string(), ..self.clone() }.build(&whole)?;
        let text = std::fs::read_to_string(&whole).map_err(|e| format!("cannot read {}: {e}", whole.display()))?;
        std::fs::write(out, newer_entries(&text)).map_err(|e| format!("cannot write {}: {e}", out.display()))
    }
}

/// `crate_dir` and the folders of the crates it depends on by `path`, and
/// theirs, each once: the `path = "..."` values of its `Cargo.toml`.
///
/// ```
/// let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
/// assert_eq!(ptx_builder::path_dependencies(here), [here]); // no dependencies
/// ```
pub fn path_dependencies(crate_dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![crate_dir.to_path_buf()];
    let mut next = 0;
    while next < found.len() {
        let dir = found[next].clone();
        next += 1;
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        for value in manifest.split("path = \"").skip(1).filter_map(|rest| rest.split('"').next()) {
            let dep = dir.join(value);
            if dep.join("Cargo.toml").is_file() && !found.iter().any(|f| same(f, &dep)) {
                found.push(dep);
            }
        }
    }
    found
}

/// Whether two paths name the same folder.
fn same(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The `channel` of a `rust-toolchain.toml`.
///
/// ```
/// # use ptx_builder::channel;
/// assert_eq!(channel("[toolchain]\nchannel = \"nightly-2026-05-20\"\n").as_deref(), Some("nightly-2026-05-20"));
/// assert_eq!(channel("[toolchain]\n"), None);
/// ```
pub fn channel(toml: &str) -> Option<String> {
    toml.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "channel").then(|| value.trim().trim_matches('"').to_string())
    })
}

/// The `rustup` executable.
struct Rustup(PathBuf);

impl Rustup {
    /// `$CARGO_HOME/bin/rustup`, `~/.cargo/bin/rustup`, or `rustup` on the `PATH`.
    fn find() -> Result<Rustup, String> {
        let homes = [
            std::env::var_os("CARGO_HOME").map(PathBuf::from),
            std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")),
        ];
        let found = homes.into_iter().flatten().map(|h| h.join("bin").join("rustup")).find(|p| p.is_file());
        let rustup = found.unwrap_or_else(|| PathBuf::from("rustup"));
        match Command::new(&rustup).arg("--version").output() {
            Ok(o) if o.status.success() => Ok(Rustup(rustup)),
            _ => Err("building the kernels needs rustup (to fetch the nightly toolchain they are compiled with); \
                      install it from rustup.rs, or set REDUCTION_PTX to a PTX file made by `cargo xtask build-ptx`"
                .to_string()),
        }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.0);
        cmd.env_remove("RUSTUP_TOOLCHAIN");
        cmd
    }

    /// Install `toolchain` with `rust-src` unless both are there already
    /// (rustup 1.28 and later no longer install a toolchain on first use).
    fn ensure(&self, toolchain: &str) -> Result<(), String> {
        let sysroot = self.command().args(["run", toolchain, "rustc", "--print", "sysroot"]).output();
        let has_src = |o: &std::process::Output| {
            let root = String::from_utf8_lossy(&o.stdout).trim().to_string();
            Path::new(&root).join("lib/rustlib/src/rust/library/core").is_dir()
        };
        if matches!(&sysroot, Ok(o) if o.status.success() && has_src(o)) {
            return Ok(());
        }
        let status = self
            .command()
            .args(["toolchain", "install", toolchain, "--profile", "minimal", "--component", "rust-src"])
            .status()
            .map_err(|e| format!("cannot run {}: {e}", self.0.display()))?;
        if !status.success() {
            return Err(format!("`rustup toolchain install {toolchain} --component rust-src` failed"));
        }
        Ok(())
    }
}

/// The `.s` file rustc wrote beside the `.rmeta` of the library of
/// `package` (whose library may have a name of its own: the package
/// `reduction-kernels` builds the library `gpu`), from cargo's JSON messages.
fn asm_path(cargo_json: &str, package: &str) -> Option<PathBuf> {
    let line = cargo_json.lines().find(|l| {
        l.contains("\"reason\":\"compiler-artifact\"")
            && (l.contains(&format!("#{package}@")) || l.contains(&format!("/{package}#")))
    })?;
    let target = &line[line.find("\"target\":{")?..];
    let name_at = target.find("\"name\":\"")? + "\"name\":\"".len();
    let lib = &target[name_at..name_at + target[name_at..].find('"')?];
    let prefix = format!("lib{lib}-");
    let start = line.find(&prefix)?;
    let end = start + line[start..].find(".rmeta")?;
    let meta = PathBuf::from(&line[line[..start].rfind('"')? + 1..end]);
    let hash = &line[start + prefix.len()..end];
    Some(meta.parent()?.join(format!("{lib}-{hash}.s")))
}

/// `reduce3_sum_i32` from `.visible .entry reduce3_sum_i32(`.
///
/// ```
/// assert_eq!(ptx_builder::entry_name(".visible .entry k(\n"), Some("k"));
/// assert_eq!(ptx_builder::entry_name(".func f()"), None);
/// ```
pub fn entry_name(line: &str) -> Option<&str> {
    let rest = line.strip_prefix(".visible .entry ").or_else(|| line.strip_prefix(".entry "))?;
    rest.split('(').next().map(str::trim)
}

/// The entries of `ptx` in file order: each one's name and the bytes of
/// its text, from its `.entry` line to the line where its braces balance
/// again (its inline assembly opens scopes of its own, at a line's start;
/// an entry the text ends inside runs to the end).
///
/// ```
/// let ptx = ".version 8.0\n.target sm_80\n.visible .entry a(\n)\n{\nret;\n}\n.visible .entry b(\n)\n{\n{\ncp.async.commit_group;\n}\nret;\n}\n";
/// let spans = ptx_builder::entry_spans(ptx);
/// assert_eq!(spans.iter().map(|(name, _)| *name).collect::<Vec<_>>(), ["a", "b"]);
/// assert_eq!(&ptx[spans[0].1.clone()], ".visible .entry a(\n)\n{\nret;\n}\n");
/// assert_eq!(spans[1].1.end, ptx.len());
/// ```
pub fn entry_spans(ptx: &str) -> Vec<(&str, std::ops::Range<usize>)> {
    let mut spans = Vec::new();
    let mut entry: Option<(&str, usize)> = None; // the entry being read, and where its text starts
    let mut depth = 0u32; // braces open: a body's own, and its inline assembly's scopes
    let mut end = 0; // where the line read ends
    for line in ptx.split_inclusive('\n') {
        let start = end;
        end += line.len();
        if let Some(name) = entry_name(line).filter(|_| depth == 0) {
            entry = Some((name, start));
        }
        let code = line.split("//").next().unwrap_or_default();
        depth = code.chars().fold(depth, |d, c| match c {
            '{' => d + 1,
            '}' => d.saturating_sub(1),
            _ => d,
        });
        if depth == 0 && code.contains('}') {
            // the end of a function body
            if let Some((name, from)) = entry.take() {
                spans.push((name, from..end));
            }
        }
    }
    spans.extend(entry.map(|(name, from)| (name, from..ptx.len())));
    spans
}

/// `ptx` with its header, declarations and functions, and of its entries
/// ([`entry_spans`]) only those `keep` accepts, given each entry's name and
/// text.
///
/// ```
/// let ptx = ".version 8.0\n.target sm_80\n.visible .entry a(\n)\n{\nret;\n}\n.visible .entry b(\n)\n{\n{\ncp.async.commit_group;\n}\nret;\n}\n";
/// let b = ptx_builder::entries_where(ptx, |name, _| name == "b");
/// assert_eq!(b, ".version 8.0\n.target sm_80\n.visible .entry b(\n)\n{\n{\ncp.async.commit_group;\n}\nret;\n}\n");
/// assert_eq!(ptx_builder::newer_entries(ptx), b);
/// ```
pub fn entries_where(ptx: &str, mut keep: impl FnMut(&str, &str) -> bool) -> String {
    let (names, spans): (Vec<&str>, Vec<std::ops::Range<usize>>) = entry_spans(ptx).into_iter().unzip();
    keep_entries(ptx, &spans, |i| keep(names[i], &ptx[spans[i].clone()]))
}

/// `ptx` with its header, declarations and functions, and of the entries
/// at `spans` (those of [`entry_spans`], in file order) only those whose
/// place among them `keep` accepts: for a caller that found the spans once
/// and cuts many modules from the same text.
///
/// ```
/// let ptx = ".version 8.0\n.visible .entry a(\n)\n{\n}\n.visible .entry b(\n)\n{\n}\n";
/// let spans: Vec<_> = ptx_builder::entry_spans(ptx).into_iter().map(|(_, span)| span).collect();
/// assert_eq!(ptx_builder::keep_entries(ptx, &spans, |i| i == 1), ".version 8.0\n.visible .entry b(\n)\n{\n}\n");
/// ```
pub fn keep_entries(ptx: &str, spans: &[std::ops::Range<usize>], mut keep: impl FnMut(usize) -> bool) -> String {
    let mut out = String::new();
    let mut at = 0; // where the text not yet copied starts
    for (i, span) in spans.iter().enumerate() {
        out.push_str(&ptx[at..span.start]);
        if keep(i) {
            out.push_str(&ptx[span.clone()]);
        }
        at = span.end;
    }
    out.push_str(&ptx[at..]);
    out
}

/// What sm_75 lacks that a [`NEWER_ARCH`] build's entries use: `cp.async`
/// (global memory copied straight into shared memory) and the half types'
/// packed `min.NaN`/`max.NaN` (two lanes an instruction).
pub const NEWER_INSTRUCTIONS: [&str; 3] = ["cp.async", "min.NaN.", "max.NaN."];

/// The entries of a [`NEWER_ARCH`] build that use an instruction sm_75
/// lacks ([`NEWER_INSTRUCTIONS`]), with the module's header and
/// declarations: the PTX a library ships beside its sm_75 build for cards
/// of sm_80 and later.
pub fn newer_entries(ptx: &str) -> String {
    entries_where(ptx, |_, text| NEWER_INSTRUCTIONS.iter().any(|i| text.contains(i)))
}

/// [`compress`]'s LZMA preset (also in the names of [`compress_file`]'s cache).
const PRESET: u32 = 6;

/// PTX text compressed as a library embeds it: LZMA (the `.lzma` format,
/// header included) at preset 6 with a dictionary as large as the text, so
/// that every entry can refer back to the first one like it (deflate's
/// 32 KiB window sees only its neighbours: 3.7 times the size for the
/// library's kernels). The same text always gives the same bytes.
///
/// ```
/// let packed = ptx_builder::compress(b".version 8.0\n.target sm_75\n").unwrap();
/// assert_eq!(packed, ptx_builder::compress(b".version 8.0\n.target sm_75\n").unwrap());
/// ```
pub fn compress(text: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Write;
    let mut options = lzma_rust2::LzmaOptions::with_preset(PRESET);
    options.dict_size = u32::try_from(text.len()).unwrap_or(u32::MAX).next_power_of_two().clamp(1 << 20, 1 << 28);
    let mut w = lzma_rust2::LzmaWriter::new_use_header(Vec::new(), &options, Some(text.len() as u64))
        .map_err(|e| format!("LZMA: {e}"))?;
    w.write_all(text).map_err(|e| format!("LZMA: {e}"))?;
    w.finish().map_err(|e| format!("LZMA: {e}"))
}

/// `ptx` compressed ([`compress`]) into `<ptx>.lzma` beside it, through a
/// cache in `cache_dir`: the bytes are kept under the text's length and
/// hash, so a build script that runs again on the same text (another
/// profile, `cargo doc`, `cargo clippy`, a project that uses the crate by
/// path) copies them instead of compressing again, which takes about a
/// minute for the library's kernels. Older entries of the same file name
/// are removed. Returns the `.lzma` file's path.
pub fn compress_file(ptx: &Path, cache_dir: &Path) -> Result<PathBuf, String> {
    let text = std::fs::read(ptx).map_err(|e| format!("cannot read {}: {e}", ptx.display()))?;
    let out = ptx.with_extension("ptx.lzma");
    let name = ptx.file_name().ok_or(format!("{}: no file name", ptx.display()))?.to_string_lossy();
    let prefix = format!("{name}-");
    let cached = cache_dir.join(format!("{prefix}{}-{:016x}.lzma{PRESET}", text.len(), fnv1a(&text)));
    if !cached.is_file() {
        let packed = compress(&text).map_err(|e| format!("{}: {e}", ptx.display()))?;
        std::fs::create_dir_all(cache_dir).map_err(|e| format!("cannot create {}: {e}", cache_dir.display()))?;
        // written whole, then renamed: a build beside this one never reads half a file
        let partial = cached.with_extension(format!("partial-{}", std::process::id()));
        std::fs::write(&partial, &packed).map_err(|e| format!("cannot write {}: {e}", partial.display()))?;
        std::fs::rename(&partial, &cached).map_err(|e| format!("cannot write {}: {e}", cached.display()))?;
        if let Ok(dir) = std::fs::read_dir(cache_dir) {
            for old in dir.flatten().map(|e| e.path()) {
                let stale = old.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&prefix));
                if stale && old != cached && old.extension().is_some_and(|e| e.to_string_lossy().starts_with("lzma")) {
                    let _ = std::fs::remove_file(old); // only a cache: what is left costs disk space alone
                }
            }
        }
    }
    std::fs::copy(&cached, &out).map_err(|e| format!("cannot copy {} to {}: {e}", cached.display(), out.display()))?;
    Ok(out)
}

/// FNV-1a, 64 bits: with the text's length and the preset, the name of its
/// bytes in [`compress_file`]'s cache.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compresses_once_per_text() {
        let dir = std::env::temp_dir().join(format!("ptx-builder-cache-{}", std::process::id()));
        let (cache, ptx) = (dir.join("cache"), dir.join("k.ptx"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&ptx, ".version 8.0\n.target sm_75\n").unwrap();
        let out = compress_file(&ptx, &cache).unwrap();
        assert_eq!(out, dir.join("k.ptx.lzma"));
        assert_eq!(std::fs::read(&out).unwrap(), compress(&std::fs::read(&ptx).unwrap()).unwrap());
        let entries = || std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().path()).collect::<Vec<_>>();
        let [entry] = &entries()[..] else { panic!("one entry: {:?}", entries()) };
        // the same text again: the cache's bytes, not a new compression
        std::fs::write(entry, b"cached").unwrap();
        compress_file(&ptx, &cache).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"cached");
        // another text: compressed, and the older entry removed
        std::fs::write(&ptx, ".version 8.0\n.target sm_80\n").unwrap();
        compress_file(&ptx, &cache).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), compress(&std::fs::read(&ptx).unwrap()).unwrap());
        assert!(entries().len() == 1 && !entry.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn finds_the_asm_beside_the_rmeta() {
        let json = r#"{"reason":"compiler-artifact","package_id":"path+file:///w/gpu#reduction-kernels@0.1.0","target":{"kind":["rlib"],"name":"gpu"},"filenames":["/w/t/release/libgpu.rlib","/w/t/release/deps/libgpu-27655a10fd983a3d.rmeta"],"fresh":true}"#;
        let want = Some(PathBuf::from("/w/t/release/deps/gpu-27655a10fd983a3d.s"));
        assert_eq!(asm_path(json, "reduction-kernels"), want);
        let same_name =
            json.replace("/w/gpu#reduction-kernels@0.1.0", "/w/gpu#0.1.0").replace("/w/gpu", "/w/reduction-kernels");
        assert_eq!(asm_path(&same_name, "reduction-kernels"), want); // a package named as its folder
        assert_eq!(asm_path(json, "other"), None);
    }

    #[test]
    fn no_artifact_no_path() {
        assert_eq!(asm_path(r#"{"reason":"build-finished","success":true}"#, "gpu"), None);
    }

    #[test]
    fn config_dir_names_arch_and_features() {
        let mut b = PtxBuild::new("/w/gpu", "gpu", "/w/target/ptx");
        assert_eq!(b.config_dir(), PathBuf::from("/w/target/ptx/sm_75"));
        b.features.push("broken-sync-warp".into());
        assert_eq!(b.config_dir(), PathBuf::from("/w/target/ptx/sm_75-broken-sync-warp"));
    }

    #[test]
    fn the_kernels_name_a_nightly() {
        let gpu = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpu");
        let tc = PtxBuild::new(gpu, "gpu", "/unused").toolchain().unwrap();
        assert!(tc.starts_with("nightly-"), "{tc}");
    }
}
