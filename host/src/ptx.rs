//! The kernels' PTX: the copy embedded at build time, or a file the user names.
//!
//! The embedded PTX holds hundreds of entries (every kernel × block size ×
//! operator × type). Loading it whole would make the driver JIT-compile all
//! of them before the first launch, seconds of work. Instead each entry is
//! loaded as its own small module when it is first used: [`Ptx::module_for`]
//! keeps the module's header and declarations and drops every other entry.
//! The entries are found once per text (a tenth of a second for the
//! embedded one), and each module is then cut from it directly.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use ptx_builder::entry_name;

/// The PTX that `build.rs` made with `ptx_builder` (the default arch,
/// sm_75), compressed (LZMA): the kernels' share of a binary that links the library.
const EMBEDDED_LZMA: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/gpu.ptx.lzma"));

/// The entries `build.rs` built again for sm_80 because they use what
/// sm_75 lacks (`ptx_builder::newer_entries`: the staged segments'
/// `cp.async`, the half types' extremes compared two lanes at a time),
/// compressed.
const EMBEDDED_SM80_LZMA: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/gpu-sm80.ptx.lzma"));

/// The embedded PTX, decompressed once per process on first use (a few
/// tenths of a second with finding its entries;
/// `docs/src/guide/operations.md` has the first call's cost). A blob that
/// does not decompress (it cannot: `build.rs` wrote it) gives no entries,
/// and every launch a typed `MissingEntry`, not a panic.
fn embedded_text() -> Arc<Text> {
    static TEXT: OnceLock<Arc<Text>> = OnceLock::new();
    TEXT.get_or_init(|| text_of(EMBEDDED_LZMA)).clone()
}

/// The embedded sm_80 entries, as [`embedded_text`].
fn embedded_sm80_text() -> Arc<Text> {
    static TEXT: OnceLock<Arc<Text>> = OnceLock::new();
    TEXT.get_or_init(|| text_of(EMBEDDED_SM80_LZMA)).clone()
}

/// The text of an embedded blob; none if it does not decompress.
fn text_of(packed: &[u8]) -> Arc<Text> {
    Text::new(String::from_utf8(decompress(packed).unwrap_or_default()).unwrap_or_default())
}

/// The bytes an LZMA stream (with its `.lzma` header, as
/// `ptx_builder::compress` writes it) holds.
fn decompress(packed: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut text = Vec::new();
    lzma_rust2::LzmaReader::new_mem_limit(packed, u32::MAX, None)?.read_to_end(&mut text)?;
    Ok(text)
}

/// A module's text and, once asked for, where each of its entries lies
/// ([`ptx_builder::entry_spans`]), shared by every clone of a [`Ptx`].
#[derive(Debug)]
struct Text {
    text: Arc<str>,
    entries: OnceLock<Entries>,
}

/// The entries of a [`Text`]: their names and spans in file order, and
/// each name's place among them.
#[derive(Debug)]
struct Entries {
    names: Vec<String>,
    spans: Vec<Range<usize>>,
    at: HashMap<String, usize>,
}

impl Text {
    fn new(text: impl Into<Arc<str>>) -> Arc<Text> {
        Arc::new(Text { text: text.into(), entries: OnceLock::new() })
    }

    fn entries(&self) -> &Entries {
        self.entries.get_or_init(|| {
            let (names, spans): (Vec<String>, Vec<Range<usize>>) =
                ptx_builder::entry_spans(&self.text).into_iter().map(|(name, span)| (name.to_string(), span)).unzip();
            let at = names.iter().enumerate().map(|(i, name)| (name.clone(), i)).collect();
            Entries { names, spans, at }
        })
    }

    /// The text of `entry`, if this module has it.
    fn entry(&self, entry: &str) -> Option<&str> {
        let e = self.entries();
        e.at.get(entry).map(|&i| &self.text[e.spans[i].clone()])
    }

    /// The module of `entry` alone: this text without its other entries
    /// (`ptx_builder::entries_where`'s output, without reading the text again).
    fn module(&self, entry: &str) -> Option<String> {
        let e = self.entries();
        let keep = *e.at.get(entry)?;
        Some(ptx_builder::keep_entries(&self.text, &e.spans, |i| i == keep))
    }
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
    text: Arc<Text>,
    origin: String,
    /// More modules whose entries are looked up when this one lacks them
    /// ([`Ptx::with`]): a user's own kernels beside the library's.
    more: Vec<Ptx>,
    /// Entries of this module built again for sm_80 (the embedded PTX's:
    /// those that use what sm_75 lacks, `ptx_builder::NEWER_INSTRUCTIONS`),
    /// which cards of sm_80 and later load instead; empty for PTX from a
    /// file or text.
    sm80: Arc<Text>,
}

/// The compute capability from which a card loads [`Ptx`]'s sm_80 entries.
const SM80: (i32, i32) = (8, 0);

impl Ptx {
    /// The PTX embedded in this library.
    ///
    /// ```
    /// let ptx = reduction::Ptx::embedded();
    /// assert_eq!(ptx.target(), Some("sm_75"));
    /// assert!(ptx.entries().any(|e| e == "reduce3_sum_i32"));
    /// ```
    ///
    /// A card of sm_80 or later loads the entries that use what sm_75
    /// lacks (the staged segments copy with `cp.async`; the half types'
    /// extremes compare two lanes an instruction) from a second, smaller
    /// module built for sm_80, embedded beside this one; they have the same
    /// names and compute the same results.
    pub fn embedded() -> Self {
        Ptx { text: embedded_text(), origin: "embedded".into(), more: Vec::new(), sm80: embedded_sm80_text() }
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
        Ok(Ptx::from_text(text, path.display().to_string()))
    }

    /// PTX given as text; `origin` names it in error messages.
    ///
    /// ```
    /// let ptx = reduction::Ptx::from_text(".version 7.0\n.target sm_80\n", "inline");
    /// assert_eq!(ptx.target(), Some("sm_80"));
    /// ```
    pub fn from_text(text: impl Into<Arc<str>>, origin: impl Into<String>) -> Self {
        Ptx { text: Text::new(text), origin: origin.into(), more: Vec::new(), sm80: Text::new("") }
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
        let line = self.text.text.lines().find(|l| l.starts_with(".target "))?;
        line[".target ".len()..].split([',', ' ']).next()
    }

    /// The names of all `.entry` functions, in file order.
    ///
    /// ```
    /// let n = reduction::Ptx::embedded().entries().count();
    /// assert!(n > 500);
    /// ```
    pub fn entries(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        let mine = self.text.entries().names.iter().map(String::as_str);
        Box::new(mine.chain(self.more.iter().flat_map(|m| m.entries())))
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
        let text = self.holder(entry)?.text.entry(entry)?;
        let mut lines = text.lines();
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
        if self.text.entry(entry).is_some() {
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
        self.module_for_card(entry, (7, 5))
    }

    /// [`Ptx::module_for`] for a card of `compute_capability`: from the
    /// sm_80 entries if the card runs them and they have `entry`.
    pub(crate) fn module_for_card(&self, entry: &str, compute_capability: (i32, i32)) -> Result<String> {
        let newer = if compute_capability >= SM80 { self.sm80.module(entry) } else { None };
        if let Some(module) = newer.or_else(|| self.text.module(entry)) {
            return Ok(module);
        }
        if let Some(m) = self.more.iter().find_map(|m| m.module_for_card(entry, compute_capability).ok()) {
            return Ok(m);
        }
        Err(Error::MissingEntry { entry: entry.to_string(), ptx: self.origin.clone() })
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

    /// A module cut from the entries found once is the one the build's
    /// filter makes from the whole text.
    #[test]
    fn a_module_is_the_text_less_the_other_entries() {
        let ptx = Ptx::embedded();
        for entry in ["reduce3_sum_i32", "segments_staged_sum_f32", "columns_moments_bf16"] {
            let filtered = ptx_builder::entries_where(&ptx.text.text, |name, _| name == entry);
            assert_eq!(ptx.module_for(entry).unwrap(), filtered, "{entry}");
        }
        let first = ptx.entries().next().unwrap().to_string();
        assert_eq!(ptx.params(&first), Ptx::from_text(ptx.module_for(&first).unwrap(), "one").params(&first));
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

    /// The sm_80 module holds the staged segments of every operation and
    /// type (the entries that copy with `cp.async`; the paired ones where
    /// the operation has that form), the half types'
    /// extreme operations where they read 16-byte vectors (compared two
    /// lanes at a time; columns read lanes of their own) and their
    /// logsumexp where it folds rounds (a round's maximum two lanes at a
    /// time, and a column's group of rows; not short rows, whose lanes
    /// hold a vector each), and nothing else; a card of sm_80 or later loads them
    /// from it, an earlier one the sm_75 form.
    #[test]
    fn cards_of_sm80_load_the_entries_built_for_it() {
        let ptx = Ptx::embedded();
        let newer = Ptx::from_text(ptx.sm80.text.clone(), "sm80");
        assert_eq!(newer.target(), Some(ptx_builder::NEWER_ARCH));
        let packed = |e: &str| {
            let ops = ["_min_", "_max_", "_aminmax_", "_nanmin_", "_nanmax_", "_norm_inf_", "_norm_neg_inf_"];
            let half = e.ends_with("_bf16") || e.ends_with("_f16");
            let rounds = e.contains("_logsumexp_") && !e.starts_with("rows_short_");
            half && (!e.starts_with("columns_") && ops.iter().any(|op| e.contains(op)) || rounds)
        };
        // the paired entries of the operations without that form hold only a `trap`, the same for both
        let trap = gpu::names::paired_trap;
        let through_stage = |e: &str| {
            e.starts_with("segments_staged_")
                || e.starts_with("segments_scheduled_")
                || e.starts_with("segments_paired_") && !trap(e)
        };
        let staged: Vec<&str> = ptx.entries().filter(|e| through_stage(e)).collect();
        assert!(staged.len() > 20, "{}", staged.len());
        let wanted: Vec<&str> = ptx.entries().filter(|e| through_stage(e) || (packed(e) && !trap(e))).collect();
        assert!(wanted.len() > staged.len() + 20, "{}", wanted.len());
        assert_eq!(newer.entries().collect::<Vec<_>>(), wanted);
        for entry in [
            "segments_staged_sum_f32",
            "segments_staged_moments_bf16",
            "segments_staged_dot_f64",
            "segments_paired_sum_bf16",
            "segments_scheduled_moments_bf16",
        ] {
            let (old, new) = (ptx.module_for_card(entry, (7, 5)).unwrap(), ptx.module_for_card(entry, (9, 0)).unwrap());
            assert!(!old.contains("cp.async") && new.contains("cp.async") && new.contains(".target sm_80"), "{entry}");
        }
        for (entry, packed) in [
            ("single_pass_b1024_max_bf16", "max.NaN.bf16x2"),
            ("single_pass_b256_aminmax_f16", "min.NaN.f16x2"),
            ("single_pass_b512_logsumexp_bf16", "max.NaN.bf16x2"),
        ] {
            let (old, new) = (ptx.module_for_card(entry, (7, 5)).unwrap(), ptx.module_for_card(entry, (9, 0)).unwrap());
            assert!(!old.contains(".NaN.") && new.contains(packed) && new.contains(".target sm_80"), "{entry}");
        }
        let sum = ptx.module_for_card("single_pass_b256_sum_f32", (9, 0)).unwrap();
        assert!(sum.contains(".target sm_75"));
    }

    #[test]
    fn the_staged_segments_declare_four_blocks_an_sm() {
        for entry in ["segments_staged_sum_f32", "segments_paired_sum_f32", "segments_scheduled_sum_f32"] {
            let (block, blocks) = gpu::names::launch_bounds(entry).unwrap();
            let bounded = with_block_bound(&Ptx::embedded().module_for(entry).unwrap(), block, Some(blocks));
            assert!(bounded.contains("\n)\n.maxntid 256, 1, 1\n.minnctapersm 4\n{"), "{entry}");
            assert_eq!(bounded.matches(".minnctapersm").count(), 1, "{entry}");
        }
    }
}
