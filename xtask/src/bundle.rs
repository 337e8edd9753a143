//! `bundle`: the release test executables, the CLI, the examples and the
//! planted bugs' PTX, copied into one folder for a GPU machine without Rust.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{broken_ptx, build_reduce, cargo, options, run, workspace};

/// Copy an executable without its debug info (the bundle travels to the GPU
/// machine, whose uploads are size-limited).
pub(crate) fn copy_stripped(from: &Path, to: &Path) -> Result<(), String> {
    run(Command::new("objcopy").arg("--strip-debug").arg(from).arg(to)).map(drop)
}

/// Build everything a GPU machine without Rust needs and copy it into one
/// folder: the test executables, the CLI, and a script that runs the tests.
pub(crate) fn bundle(args: &[String]) -> Result<(), String> {
    let mut out = workspace().join(".gpu");
    for (_, value) in options(args, &["--out"])? {
        out = PathBuf::from(value);
    }
    let bin = out.join("bin");
    if bin.exists() {
        // no test executable of an earlier bundle may stay behind
        std::fs::remove_dir_all(&bin).map_err(|e| format!("cannot empty {}: {e}", bin.display()))?;
    }
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    let json = run(cargo().args([
        "test",
        "--package",
        "host",
        "--package",
        "reduce",
        "--release",
        "--no-run",
        "--message-format=json",
    ]))?;
    let reduce = build_reduce()?;
    let mut tests = Vec::new();
    // Integration tests only (`tests/*.rs`, attached to host and reduce): the
    // unit tests, the test kit's included, need no GPU.
    let test_artifacts = json.lines().filter(|l| l.contains("\"kind\":[\"test\"]") && l.contains("\"executable\":\""));
    for line in test_artifacts {
        let Some(exe) = line.split("\"executable\":\"").nth(1).and_then(|r| r.split('"').next()) else {
            continue;
        };
        let exe = PathBuf::from(exe);
        let name = exe.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        copy_stripped(&exe, &bin.join(&name))?;
        tests.push(name);
    }
    copy_stripped(&reduce, &bin.join("reduce"))?;
    run(cargo().args(["build", "--release", "--package", "xtask"]))?;
    copy_stripped(&workspace().join("target/release/xtask"), &bin.join("xtask"))?;
    // one process per GPU, bootstrapped through NCCL (host/examples)
    let example = ["build", "--release", "--package", "host", "--example", "one_process_per_gpu"];
    run(cargo().args(example))?;
    let built = workspace().join("target/release/examples/one_process_per_gpu");
    copy_stripped(&built, &bin.join("one_process_per_gpu"))?;
    // the stable downstream project, as a user builds it
    let downstream = workspace().join("examples/downstream");
    run(Command::new("cargo").current_dir(&downstream).args(["+stable", "build", "--release"]))?;
    copy_stripped(&downstream.join("target/release/downstream"), &bin.join("downstream"))?;
    // the user's own operator, built to PTX by its build script
    let custom = workspace().join("examples/custom-op");
    run(Command::new("cargo").current_dir(&custom).args(["+stable", "build", "--release"]))?;
    copy_stripped(&custom.join("target/release/custom-op"), &bin.join("custom-op"))?;
    broken_ptx(&out)?;
    tests.sort();
    let script = run_tests_script(&tests);
    let script_path = out.join("run-tests.sh");
    std::fs::write(&script_path, script).map_err(|e| format!("cannot write {}: {e}", script_path.display()))?;
    println!(
        "{} ({} test executables, reduce, xtask, one_process_per_gpu, downstream, custom-op)",
        out.display(),
        tests.len()
    );
    Ok(())
}

/// `run-tests.sh`: runs each test executable in `bin/` beside it, from the
/// bundle's parent folder, with `REDUCTION_REQUIRE_GPU=1`; works when called
/// by any path, relative or absolute, from any folder.
fn run_tests_script(tests: &[String]) -> String {
    let mut script = String::from(
        "#!/usr/bin/env bash\n# Written by `cargo xtask bundle`: runs every test executable of the workspace,\n\
         # on a GPU: a test that would skip for want of one fails instead.\n\
         here=\"$(cd \"$(dirname \"$0\")\" && pwd)\" || exit 1\n\
         cd \"$here/..\" || exit 1\n\
         export REDUCE_BIN=\"$here/bin/reduce\" REDUCTION_REQUIRE_GPU=1\nstatus=0\n",
    );
    for t in tests {
        script.push_str(&format!("echo \"== {t}\"; \"$here/bin/{t}\" \"$@\" || status=1\n"));
    }
    script.push_str("exit $status\n");
    script
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::run;

    /// `run-tests.sh` called by a relative path from another folder runs
    /// every test (it once changed folder first and then lost its own path),
    /// passes arguments on, requires the GPU, and fails when a test fails.
    #[test]
    fn run_tests_script_works_from_a_relative_path() {
        let root = std::env::temp_dir().join(format!("xtask-bundle-{}", std::process::id()));
        let bin = root.join("bundle/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let fake = |name: &str, body: &str| {
            let path = bin.join(name);
            std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
            run(Command::new("chmod").arg("+x").arg(&path)).unwrap();
        };
        fake("a", "echo \"a $1 $REDUCTION_REQUIRE_GPU $(basename \"$PWD\")\"");
        fake("b", "echo \"b $1\"");
        let tests = ["a".to_string(), "b".to_string()];
        std::fs::write(root.join("bundle/run-tests.sh"), run_tests_script(&tests)).unwrap();
        let out = Command::new("bash").arg("bundle/run-tests.sh").arg("--x").current_dir(&root).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let dir = root.file_name().unwrap().to_string_lossy();
        assert!(out.status.success(), "{text}");
        assert!(text.contains(&format!("a --x 1 {dir}")) && text.contains("b --x"), "{text}");
        fake("b", "exit 1");
        let out = Command::new("bash").arg("bundle/run-tests.sh").current_dir(&root).output().unwrap();
        assert!(!out.status.success());
        let _ = std::fs::remove_dir_all(&root);
    }
}
