//! The kernels' PTX: the copy embedded at build time, or a file the user names.
//!
//! The embedded PTX holds hundreds of entries (every kernel × block size ×
//! operator × type). Loading it whole would make the driver JIT-compile all
//! of them before the first launch, seconds of work. Instead each entry is
//! loaded as its own small module when it is first used: [`Ptx::module_for`]
//! keeps the module's header and declarations and drops every other entry.

use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};

/// The PTX that `build.rs` made with `ptx_builder` (the default arch,
/// sm_75), compressed (LZMA): the kernels' share of a binary that links the library.
const EMBEDDED_LZMA: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/gpu.ptx.lzma"));

/// The embedded PTX, decompressed once per process on first use (about a
/// tenth of a second; `docs/src/guide/operations.md` has the first call's
/// cost). A blob that does not decompress (it cannot: `build.rs` wrote it)
/// gives no entries, and every launch a typed `MissingEntry`, not a panic.
fn embedded_text() -> Arc<str> {
    static TEXT: OnceLock<Arc<str>> = OnceLock::new();
    TEXT.get_or_init(|| String::from_utf8(decompress(EMBEDDED_LZMA).unwrap_or_default()).unwrap_or_default().into())
        .clone()
}

/// The bytes an LZMA stream (with its `.lzma` header, as
/// `ptx_builder::compress` writes it) holds.
fn decompress(packed: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut text = Vec::new();
    lzma_rust2::LzmaReader::new_mem_limit(packed, u32::MAX, None)?.read_to_end(&mut text)?;
    Ok(text)
}

/// PTX text and where it came from.
///
/// ```
/// use reduction::Ptx;
/// let ptx = Ptx::from_text(".version 8.0\n.target sm_90\n.visible .entry k(\n)\n{\n}\n", "inline");
/// assert_eq!((ptx.origin(), ptx.target()), ("inline", Some("sm_90")));
/// assert_eq!(ptx.entries().collect::<Vec<_>>(), ["k"]);
/// ```
#[derive(Clone, Debug)]
pub struct Ptx {
    text: Arc<str>,
    origin: String,
    /// More modules whose entries are looked up when this one lacks them
    /// ([`Ptx::with`]): a user's own kernels beside the library's.
    more: Vec<Ptx>,
}

impl Ptx {
    /// The PTX embedded in this library.
    ///
    /// ```
    /// let ptx = reduction::Ptx::embedded();
    /// assert_eq!(ptx.target(), Some("sm_75"));
    /// assert!(ptx.entries().any(|e| e == "reduce3_sum_i32"));
    /// ```
    pub fn embedded() -> Self {
        Ptx { text: embedded_text(), origin: "embedded".into(), more: Vec::new() }
    }

    /// PTX read from a file, e.g. one written by `cargo xtask build-ptx`.
    ///
    /// ```
    /// let err = reduction::Ptx::from_file("/no/such.ptx").unwrap_err();
    /// assert!(matches!(err, reduction::Error::PtxMissing { .. }));
    /// ```
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|source| Error::PtxMissing { path: path.display().to_string(), source })?;
        Ok(Ptx { text: text.into(), origin: path.display().to_string(), more: Vec::new() })
    }

    /// PTX given as text; `origin` names it in error messages.
    ///
    /// ```
    /// let ptx = reduction::Ptx::from_text(".version 7.0\n.target sm_80\n", "inline");
    /// assert_eq!(ptx.target(), Some("sm_80"));
    /// ```
    pub fn from_text(text: impl Into<Arc<str>>, origin: impl Into<String>) -> Self {
        Ptx { text: text.into(), origin: origin.into(), more: Vec::new() }
    }

    /// These kernels and those of `other` (each entry is loaded from the
    /// module that has it, this one first): how a crate of your own kernels
    /// joins the library's (`examples/custom-op`).
    ///
    /// ```
    /// use reduction::Ptx;
    /// let mine = Ptx::from_text(".version 8.0\n.target sm_75\n.visible .entry single_pass_b256_absmax_f32(\n)\n{\n}\n", "mine");
    /// let both = Ptx::embedded().with(mine);
    /// assert!(both.module_for("single_pass_b256_absmax_f32").is_ok());
    /// assert!(both.module_for("reduce3_sum_i32").is_ok());
    /// assert!(both.entries().any(|e| e == "single_pass_b256_absmax_f32"));
    /// ```
    pub fn with(mut self, other: Ptx) -> Ptx {
        self.more.push(other);
        self
    }

    /// Where this PTX came from: `embedded` or a path.
    ///
    /// ```
    /// assert_eq!(reduction::Ptx::embedded().origin(), "embedded");
    /// ```
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The `.target` architecture, e.g. `sm_75`.
    ///
    /// ```
    /// assert_eq!(reduction::Ptx::from_text(".target sm_90, debug", "x").target(), Some("sm_90"));
    /// ```
    pub fn target(&self) -> Option<&str> {
        let line = self.text.lines().find(|l| l.starts_with(".target "))?;
        line[".target ".len()..].split([',', ' ']).next()
    }

    /// The names of all `.entry` functions, in file order.
    ///
    /// ```
    /// let n = reduction::Ptx::embedded().entries().count();
    /// assert!(n > 500);
    /// ```
    pub fn entries(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        Box::new(self.text.lines().filter_map(entry_name).chain(self.more.iter().flat_map(|m| m.entries())))
    }

    /// The PTX types of `entry`'s parameters, in order (`.u64` for a
    /// pointer), or `None` if no module has the entry.
    ///
    /// ```
    /// let ptx = reduction::Ptx::embedded();
    /// assert_eq!(ptx.params("reduce3_sum_i32").unwrap(), [".u64", ".u64", ".u32"]);
    /// assert!(ptx.params("nope").is_none());
    /// ```
    pub fn params(&self, entry: &str) -> Option<Vec<String>> {
        let ptx = self.holder(entry)?;
        let mut lines = ptx.text.lines().skip_while(|l| entry_name(l) != Some(entry));
        lines.next();
        // `.param .u64 .ptr .global .align 4 name_param_0,` up to the `)`
        let types = lines
            .map(str::trim)
            .take_while(|l| !l.starts_with(')'))
            .filter_map(|l| l.strip_prefix(".param ")?.split_whitespace().next().map(str::to_string))
            .collect();
        Some(types)
    }

    /// The module that defines `entry`: this one, else the first of
    /// [`Ptx::with`]'s that does.
    fn holder(&self, entry: &str) -> Option<&Ptx> {
        if self.text.lines().any(|l| entry_name(l) == Some(entry)) {
            return Some(self);
        }
        self.more.iter().find_map(|m| m.holder(entry))
    }

    /// The text of a module that holds only `entry` (plus the header and all
    /// declarations), ready for the driver's JIT.
    ///
    /// ```
    /// let ptx = reduction::Ptx::embedded();
    /// let one = ptx.module_for("reduce3_sum_i32").unwrap();
    /// assert_eq!(reduction::Ptx::from_text(one.as_str(), "one").entries().collect::<Vec<_>>(), ["reduce3_sum_i32"]);
    /// assert!(matches!(ptx.module_for("nope"), Err(reduction::Error::MissingEntry { .. })));
    /// ```
    pub fn module_for(&self, entry: &str) -> Result<String> {
        let mut out = String::new();
        let mut found = false;
        let mut skipping = false;
        let mut depth = 0u32; // braces open: a body's own, and its inline assembly's scopes
        for line in self.text.lines() {
            if let Some(name) = entry_name(line).filter(|_| depth == 0) {
                skipping = name != entry;
                found |= !skipping;
            }
            if !skipping {
                out.push_str(line);
                out.push('\n');
            }
            let code = line.split("//").next().unwrap_or_default();
            depth = code.chars().fold(depth, |d, c| match c {
                '{' => d + 1,
                '}' => d.saturating_sub(1),
                _ => d,
            });
            if depth == 0 && code.contains('}') {
                skipping = false; // the end of a function body
            }
        }
        if !found {
            if let Some(m) = self.more.iter().find_map(|m| m.module_for(entry).ok()) {
                return Ok(m);
            }
            return Err(Error::MissingEntry { entry: entry.to_string(), ptx: self.origin.clone() });
        }
        Ok(out)
    }
}

/// `module` (from [`Ptx::module_for`]) with its one entry declaring that
/// blocks of `block` threads run it (`.maxntid`, CUDA's
/// `__launch_bounds__`), and with `blocks`, that an SM holds at least that
/// many of them (`.minnctapersm`): the JIT then fits its registers to such
/// blocks (at most 64 a thread for one block of 1024, or four of 256). For
/// an entry that would otherwise take more than its own block allows (the
/// declaration makes the JIT use up to that many registers everywhere, and
/// fewer blocks an SM for kernels that fit two), and for those whose
/// launch bounds are part of their design (`gpu::names::launch_bounds`).
pub(crate) fn with_block_bound(module: &str, block: u32, blocks: Option<u32>) -> String {
    let mut out = String::with_capacity(module.len() + 32);
    let mut params = false; // within the entry's parameter list
    for line in module.lines() {
        out.push_str(line);
        out.push('\n');
        if entry_name(line).is_some() {
            params = true;
        } else if params && line.starts_with(')') {
            out.push_str(&format!(".maxntid {block}, 1, 1\n"));
            if let Some(blocks) = blocks {
                out.push_str(&format!(".minnctapersm {blocks}\n"));
            }
            params = false;
        }
    }
    out
}

/// `reduce3_sum_i32` from `.visible .entry reduce3_sum_i32(`.
fn entry_name(line: &str) -> Option<&str> {
    let rest = line.strip_prefix(".visible .entry ").or_else(|| line.strip_prefix(".entry "))?;
    rest.split('(').next().map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_of_one_block_declares_it_where_its_parameters_end() {
        let one = Ptx::embedded().module_for("single_pass_b1024_sum_f32").unwrap();
        let bounded = with_block_bound(&one, 1024, None);
        assert!(bounded.contains("\n)\n.maxntid 1024, 1, 1\n{"), "{}", &bounded[..bounded.len().min(2000)]);
        assert_eq!(bounded.matches(".maxntid").count(), 1);
        assert_eq!(bounded.len(), one.len() + ".maxntid 1024, 1, 1\n".len());
    }

    /// An entry left out ends where its braces balance, not at the first
    /// line `}` (inline assembly opens scopes of its own, at the line's start).
    #[test]
    fn a_module_holds_its_entry_alone_whatever_braces_the_others_hold() {
        let text = ".version 7.0\n.target sm_75\n.address_size 64\n\n\
                    .visible .entry a(\n.param .u64 p\n)\n{\n\t// begin inline asm\n{\n.reg .f64 r;\n}\n\t// end inline asm\nret;\n}\n\n\
                    .func f()\n{\nret;\n}\n\n\
                    .visible .entry b(\n.param .u64 p\n)\n{\n\t{ // callseq 0\n\tcall f;\n\t} // callseq 0\nret;\n}\n";
        let ptx = Ptx::from_text(text, "test");
        let b = ptx.module_for("b").unwrap();
        assert!(
            !b.contains(".reg .f64 r")
                && !b.contains("end inline asm")
                && !b.contains("entry a")
                && b.contains(".func f()")
                && b.contains("call f"),
            "{b}"
        );
        assert_eq!(Ptx::from_text(b.as_str(), "b").entries().collect::<Vec<_>>(), ["b"]);
        let a = ptx.module_for("a").unwrap();
        assert!(a.contains(".reg .f64 r") && !a.contains("entry b") && !a.contains("call f"), "{a}");
    }

    #[test]
    fn every_declared_launch_bound_names_an_entry() {
        let ptx = Ptx::embedded();
        for (name, _) in gpu::names::DECLARED_BOUNDS {
            assert!(ptx.entries().any(|entry| gpu::names::declares(name, entry)), "{name} names no entry");
        }
        assert!(
            !ptx.entries().any(|entry| gpu::names::declares("accurate_sum_f3", entry)),
            "a misspelled name matched"
        );
    }

    #[test]
    fn the_staged_segments_declare_four_blocks_an_sm() {
        let entry = "segments_staged_sum_f32";
        let (block, blocks) = gpu::names::launch_bounds(entry).unwrap();
        let bounded = with_block_bound(&Ptx::embedded().module_for(entry).unwrap(), block, Some(blocks));
        assert!(bounded.contains("\n)\n.maxntid 256, 1, 1\n.minnctapersm 4\n{"));
        assert_eq!(bounded.matches(".minnctapersm").count(), 1);
    }
}
