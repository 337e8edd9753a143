//! NCCL, loaded at run time through cudarc: whether it is there, where the
//! copy PyTorch ships lies, the unique id that bootstraps one process per
//! GPU, and NCCL's errors as the library's.
//!
//! cudarc asks the dynamic loader for `libnccl.so` (and a few names like
//! `libnccl.so.12`), never for `libnccl.so.2`, the only name the NCCL of a
//! PyTorch wheel (`nvidia/nccl/lib/libnccl.so.2`) or of NVIDIA's packages
//! has. A process cannot teach its own loader a new name once it runs, so
//! [`link_dir`] makes a folder holding `libnccl.so` → that file, for
//! `LD_LIBRARY_PATH` (`reduce nccl` prints it).

use std::path::{Path, PathBuf};

use cudarc::nccl::result::NcclError;

use crate::error::{Error, Result};

/// Whether cudarc can load NCCL in this process.
pub(crate) fn present() -> bool {
    // SAFETY: only tries to dlopen the candidate names; nothing is called.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

/// [`Error::NcclMissing`] unless NCCL can be loaded.
pub(crate) fn require() -> Result<()> {
    if present() {
        return Ok(());
    }
    Err(Error::NcclMissing { found: find_libnccl().map(|p| p.display().to_string()) })
}

/// The NCCL error `e` of `call`, with NCCL's own words for it.
pub(crate) fn nccl(call: &'static str) -> impl FnOnce(NcclError) -> Error {
    move |e| {
        // SAFETY: NCCL is loaded (an NcclError came from it); the returned
        // string is static inside NCCL, read once here.
        let text = unsafe {
            let s = cudarc::nccl::sys::ncclGetErrorString(e.0);
            if s.is_null() { String::new() } else { std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned() }
        };
        Error::Nccl { call, code: format!("{:?}", e.0), text }
    }
}

/// A copy of NCCL under its real name `libnccl.so.2`: `$REDUCTION_NCCL`
/// (the file, or its folder), else the first found in `LD_LIBRARY_PATH`, in
/// the usual system folders, or in a Python environment's
/// `site-packages/nvidia/nccl/lib` (where PyTorch's wheel puts it).
///
/// ```
/// // None on a machine without NCCL; the path of libnccl.so.2 otherwise.
/// let _ = reduction::multi::find_libnccl();
/// ```
pub fn find_libnccl() -> Option<PathBuf> {
    let file = |dir: &Path| Some(dir.join("libnccl.so.2")).filter(|p| p.is_file());
    if let Some(given) = std::env::var_os("REDUCTION_NCCL").map(PathBuf::from) {
        return if given.is_file() { Some(given) } else { file(&given) };
    }
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("LD_LIBRARY_PATH").map(|v| std::env::split_paths(&v).collect()).unwrap_or_default();
    dirs.extend(
        ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/lib", "/usr/local/cuda/lib64"].map(PathBuf::from),
    );
    // site-packages of system Pythons, user installs and virtual environments
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let venvs =
        [std::env::var_os("VIRTUAL_ENV").map(PathBuf::from), std::env::var_os("CONDA_PREFIX").map(PathBuf::from)];
    let mut prefixes: Vec<PathBuf> = ["/usr", "/usr/local", "/opt/conda"].map(PathBuf::from).into();
    prefixes.extend(venvs.into_iter().flatten());
    prefixes.push(home.join(".local"));
    prefixes.extend(subdirs(Path::new("/opt")).into_iter().flat_map(|d| [d.join(".venv"), d.join("venv"), d]));
    for prefix in prefixes {
        for lib in subdirs(&prefix.join("lib")).into_iter().filter(|d| d.to_string_lossy().contains("python3")) {
            for packages in ["site-packages", "dist-packages"] {
                dirs.push(lib.join(packages).join("nvidia/nccl/lib"));
            }
        }
    }
    dirs.iter().find_map(|d| file(d))
}

/// The folders inside `dir` (none if it cannot be read).
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect()
}

/// A folder holding `libnccl.so`, a link to [`find_libnccl`]'s file, made
/// (or refreshed) under `$XDG_CACHE_HOME/reduction` (or `~/.cache/reduction`):
/// put it on `LD_LIBRARY_PATH` and cudarc finds NCCL.
///
/// ```no_run
/// let dir = reduction::multi::link_dir()?;
/// println!("export LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH", dir.display());
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn link_dir() -> Result<PathBuf> {
    let target = find_libnccl().ok_or(Error::NcclMissing { found: None })?;
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let dir = cache.join("reduction/nccl");
    let io = |e: std::io::Error| Error::Invalid(format!("cannot link NCCL in {}: {e}", dir.display()));
    std::fs::create_dir_all(&dir).map_err(io)?;
    let link = dir.join("libnccl.so");
    if std::fs::read_link(&link).is_ok_and(|t| t == target) {
        return Ok(dir);
    }
    let _ = std::fs::remove_file(&link); // a stale link to an older NCCL, if any
    std::os::unix::fs::symlink(&target, &link).map_err(io)?;
    Ok(dir)
}

/// The id that lets NCCL's ranks find each other (`ncclUniqueId`, 128
/// bytes): made by one process, handed to all others (a file, a pipe, the
/// job launcher's environment) as 256 hex digits.
///
/// ```
/// use reduction::multi::UniqueId;
/// let id: UniqueId = "ab".repeat(128).parse()?;
/// assert_eq!(id.to_string(), "ab".repeat(128));
/// assert!("abc".parse::<UniqueId>().is_err());
/// # Ok::<(), reduction::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UniqueId(pub(crate) [u8; 128]);

impl UniqueId {
    /// A new id (`ncclGetUniqueId`; it opens a socket the ranks bootstrap
    /// through). [`Error::NcclMissing`] without NCCL.
    pub fn new() -> Result<Self> {
        require()?;
        let id = cudarc::nccl::Id::new().map_err(nccl("ncclGetUniqueId"))?;
        Ok(UniqueId(id.internal().map(|c| c as u8)))
    }

    /// cudarc's form of it.
    pub(crate) fn to_nccl(self) -> cudarc::nccl::Id {
        cudarc::nccl::Id::uninit(self.0.map(|b| b as std::ffi::c_char))
    }
}

impl std::fmt::Display for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UniqueId({self})")
    }
}

impl std::str::FromStr for UniqueId {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        let bad = || Error::Invalid(format!("an NCCL unique id is 256 hex digits; got {} characters", s.len()));
        if s.len() != 256 || !s.is_ascii() {
            return Err(bad());
        }
        let mut id = [0u8; 128];
        for (byte, pair) in id.iter_mut().zip(s.as_bytes().chunks(2)) {
            let digits = std::str::from_utf8(pair).map_err(|_| bad())?;
            *byte = u8::from_str_radix(digits, 16).map_err(|_| bad())?;
        }
        Ok(UniqueId(id))
    }
}

/// Why NCCL cannot be used here ([`Error::NcclMissing`]'s line), or `None`:
/// the reason multi-GPU tests print after `SKIPPED:`.
///
/// ```
/// let _ = reduction::multi::no_nccl_reason();
/// ```
pub fn no_nccl_reason() -> Option<String> {
    require().err().map(|e| e.to_string())
}

/// The NCCL this process loaded: its version and file, e.g. `NCCL 2.28.9
/// (/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2)`;
/// `None` without NCCL.
///
/// ```
/// let _ = reduction::multi::loaded_nccl();
/// ```
pub fn loaded_nccl() -> Option<String> {
    if !present() {
        return None;
    }
    let code = cudarc::nccl::result::get_nccl_version().ok()?;
    let (major, minor, patch) = (code / 10000, code / 100 % 100, code % 100);
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let file = maps.lines().filter_map(|l| l.split_whitespace().nth(5)).find(|p| p.contains("libnccl"));
    Some(format!("NCCL {major}.{minor}.{patch} ({})", file.unwrap_or("file unknown")))
}
