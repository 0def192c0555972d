// Builds the BPF scheduler (src/bpf/: main.bpf.c and one .bpf.c per concern, compiled each on its own
// and linked into one object, lavd's way) into a libbpf-rs skeleton, and generates Rust bindings for
// the definitions shared with it (src/bpf/intf.h). compile_link_gen names the skeleton "bpf" whatever
// the sources (BpfSkel, as before the split).
//
// It also stamps the build with its git commit (VRQ_GIT_COMMIT, VRQ_GIT_DIRTY: see git_stamp), so
// `--version` and the statistics name the build a bug report is about. For the dirty mark to be right
// this script reruns whenever a source file changes, Rust ones included; the BPF compile, the slow
// part, is skipped when none of its inputs changed (bpf_unchanged).

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

const BPF_DIR: &str = "src/bpf";
const BPF_SOURCES: [&str; 16] = [
    "deadline",
    "latency",
    "select",
    "capacity",
    "preempt",
    "dispatch",
    "groups",
    "freq",
    "delay",
    "sticky",
    "stats",
    "slice_timer",
    "init",
    "hotplug",
    "cgroup",
    "cpu_release",
];
// What scx_cargo's compile reads from the environment (it prints the same rerun-if-env-changed lines).
const BPF_ENV: [&str; 10] = [
    "TARGET",
    "BINDGEN_EXTRA_CLANG_ARGS",
    "BINDGEN_EXTRA_CLANG_ARGS_x86_64-unknown-linux-gnu",
    "BINDGEN_EXTRA_CLANG_ARGS_x86_64_unknown_linux_gnu",
    "BPF_CLANG",
    "SCX_ALLOW_OLD_CLANG",
    "BPF_CFLAGS",
    "BPF_BASE_CFLAGS",
    "BPF_EXTRA_CFLAGS_PRE_INCL",
    "BPF_EXTRA_CFLAGS_POST_INCL",
];
// The files the skeleton build leaves in OUT_DIR for src/main.rs to include.
const BPF_OUTPUTS: [&str; 3] = ["bpf_skel.rs", "bpf_intf.rs", "bpf.bpf.o"];

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    git_stamp(&root);

    let stamp_path = out.join("bpf-inputs.stamp");
    let stamp = bpf_inputs_hash(&root).to_string();
    if bpf_unchanged(&out, &stamp_path, &stamp) {
        // Nothing the BPF build reads changed: keep its outputs, and watch what it watches.
        println!("cargo:rerun-if-changed={BPF_DIR}");
        for var in BPF_ENV {
            println!("cargo:rerun-if-env-changed={var}");
        }
    } else {
        let _ = std::fs::remove_file(&stamp_path);
        let mut builder = scx_cargo::BpfBuilder::new().unwrap();
        builder.enable_intf("src/bpf/intf.h", "bpf_intf.rs").enable_skel("src/bpf/main.bpf.c", "bpf");
        for name in BPF_SOURCES {
            builder.add_source(&format!("{BPF_DIR}/{name}.bpf.c"));
        }
        builder.compile_link_gen().unwrap();
        println!("cargo:rerun-if-changed={BPF_DIR}");
        std::fs::write(&stamp_path, &stamp).unwrap();
    }
}

/// The BPF build's outputs are there and were made from the inputs hashed in `stamp`.
fn bpf_unchanged(out: &Path, stamp_path: &Path, stamp: &str) -> bool {
    BPF_OUTPUTS.iter().all(|f| out.join(f).is_file()) && std::fs::read_to_string(stamp_path).is_ok_and(|s| s == stamp)
}

/// A hash of everything the BPF build reads: every file under src/bpf/, this script, the lock file
/// (scx_cargo's and scx_utils' versions, whose BPF headers it compiles with), the build profile and
/// the environment it reads.
fn bpf_inputs_hash(root: &Path) -> u64 {
    fn files(dir: &Path, into: &mut Vec<PathBuf>) {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() { files(&p, into) } else { into.push(p) }
            }
        }
    }
    let mut paths = Vec::new();
    files(&root.join(BPF_DIR), &mut paths);
    paths.sort();
    paths.push(root.join("Cargo.lock"));
    let mut h = DefaultHasher::new();
    h.write(include_bytes!("build.rs"));
    for p in &paths {
        h.write(p.to_string_lossy().as_bytes());
        h.write(&std::fs::read(p).unwrap_or_default());
    }
    for var in BPF_ENV.iter().chain(&["PROFILE", "OPT_LEVEL", "DEBUG", "CARGO_CFG_TARGET_ARCH"]) {
        h.write(var.as_bytes());
        h.write(std::env::var(var).unwrap_or_default().as_bytes());
    }
    h.finish()
}

/// VRQ_GIT_COMMIT: the abbreviated commit the sources were checked out at; VRQ_GIT_DIRTY: "1" when a
/// file the binary is built from (src/, build.rs, Cargo.toml, Cargo.lock) differs from that commit or
/// is not in git. Both empty outside a git checkout of this project (a crate unpacked from a tarball).
fn git_stamp(root: &Path) {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    // Only the project's own checkout: `cargo package` verifies a copy under target/package/, inside
    // this checkout but not of it.
    let toplevel = git(&["rev-parse", "--show-toplevel"]).map(PathBuf::from);
    let ours = toplevel.as_deref().and_then(|t| t.canonicalize().ok()) == root.canonicalize().ok();
    let commit = if ours { git(&["rev-parse", "--short=12", "HEAD"]) } else { None };
    let (commit, dirty) = match commit {
        Some(c) => {
            let status = git(&[
                "status",
                "--porcelain",
                "--untracked-files=all",
                "--",
                "src",
                "build.rs",
                "Cargo.toml",
                "Cargo.lock",
            ]);
            // a failed status counts as dirty: the build cannot vouch for its sources
            (c, status.is_none_or(|s| !s.is_empty()))
        }
        None => (String::new(), false),
    };
    println!("cargo:rustc-env=VRQ_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=VRQ_GIT_DIRTY={}", if dirty { "1" } else { "" });
    if ours {
        // A commit moves HEAD or the branch it points to; an edit changes a source file.
        for p in ["HEAD", "packed-refs"] {
            if let Some(path) = git(&["rev-parse", "--git-path", p]) {
                println!("cargo:rerun-if-changed={}", root.join(path).display());
            }
        }
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            if let Some(path) = git(&["rev-parse", "--git-path", &branch]) {
                let path = root.join(path);
                if path.exists() {
                    println!("cargo:rerun-if-changed={}", path.display());
                }
            }
        }
        for p in ["src", "build.rs", "Cargo.toml", "Cargo.lock"] {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
