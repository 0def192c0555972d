// Writes scx_vrq's man page and its bash, zsh and fish completions from the same clap definition the
// scheduler parses its command line with (src/cli.rs), so they cannot drift from --help.
//
// A separate binary rather than build.rs: the generators (clap_mangen, clap_complete) are optional
// dependencies behind the gen-docs feature, so neither the scheduler binary nor a plain `cargo build`
// or `cargo install` compiles them, and the files are written only when packaging asks for them.

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use clap::CommandFactory;
use clap_complete::Shell;

// The CLI is read here only to be described, never parsed into values.
#[allow(dead_code)]
#[path = "../cli.rs"]
mod cli;

const NAME: &str = "scx_vrq";
const USAGE: &str = "usage: scx_vrq-gen-docs OUTDIR | --readme README.md

Writes into OUTDIR (created if missing):
  scx_vrq.8                     the man page (section 8, roff)
  completions/scx_vrq.bash      bash completion
  completions/_scx_vrq          zsh completion
  completions/scx_vrq.fish      fish completion

--readme FILE rewrites the knob tables of FILE (the README) between its knob-tables markers from the
same definition (a Rust test fails while they differ).";

use cli::KNOB_TABLES_BEGIN as TABLES_BEGIN;
use cli::KNOB_TABLES_END as TABLES_END;

fn write_readme_tables(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let (Some(b), Some(e)) = (text.find(TABLES_BEGIN), text.find(TABLES_END)) else {
        return Err(format!("{} has no {} ... {} markers", path.display(), TABLES_BEGIN.trim(), TABLES_END));
    };
    let from = b + TABLES_BEGIN.len();
    if e < from {
        return Err(format!("{}: the knob-tables markers are out of order", path.display()));
    }
    let new = format!("{}{}{}", &text[..from], cli::knob_table_markdown(), &text[e..]);
    std::fs::write(path, new).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Sections clap does not know about: where the service reads its flags, what the exit statuses
/// mean, where the statistics are served. Plain roff appended after clap_mangen's sections.
const EXTRA_SECTIONS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
stopped on request (Ctrl\-C, SIGTERM); the kernel's scheduler has taken over again.
.TP
\fB1\fR
refused or failed: not root, no sched_ext in this kernel, another sched_ext scheduler loaded, or
the BPF scheduler was ejected (the reason is printed).
.TP
\fB2\fR
a bad flag (one line on stderr).
.SH FILES
.TP
\fI/etc/default/scx_vrq\fR
\fBSCX_VRQ_FLAGS\fR, the flags the \fBscx_vrq.service\fR systemd unit starts the scheduler with.
.TP
\fI/usr/lib/systemd/system/scx_vrq.service\fR
the systemd unit: \fBsystemctl enable \-\-now scx_vrq\fR.
.TP
\fI/var/run/scx/root/stats\fR
the statistics socket that \fB\-\-monitor\fR reads.
.TP
\fI/sys/kernel/sched_ext/state\fR, \fI/sys/kernel/sched_ext/root/ops\fR
whether a sched_ext scheduler is enabled, and which.
.SH NOTES
To run it through the sched_ext project's own \fBscx.service\fR instead, set
\fBSCX_SCHEDULER=scx_vrq\fR and \fBSCX_FLAGS=\fR\fIflags\fR in \fI/etc/default/scx\fR; run one
of the two units, not both: only one sched_ext scheduler can be loaded at a time.
.SH "SEE ALSO"
\fBsystemctl\fR(1), \fBsystemd.exec\fR(5)
"#;

fn write_man(cmd: clap::Command, dir: &Path) -> std::io::Result<PathBuf> {
    let man = clap_mangen::Man::new(cmd)
        .section("8")
        .source(format!("{NAME} {}", env!("CARGO_PKG_VERSION")))
        .manual("System Administration");
    let path = dir.join(format!("{NAME}.8"));
    let mut f = std::fs::File::create(&path)?;
    man.render(&mut f)?;
    f.write_all(EXTRA_SECTIONS.as_bytes())?;
    f.flush()?;
    Ok(path)
}

fn write_completions(cmd: &mut clap::Command, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (shell, file) in
        [(Shell::Bash, format!("{NAME}.bash")), (Shell::Zsh, format!("_{NAME}")), (Shell::Fish, format!("{NAME}.fish"))]
    {
        let path = dir.join(file);
        let mut f = std::fs::File::create(&path)?;
        clap_complete::generate(shell, cmd, NAME, &mut f);
        f.flush()?;
        written.push(path);
    }
    Ok(written)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = match args.as_slice() {
        [h] if h == "-h" || h == "--help" => {
            println!("{USAGE}");
            return;
        }
        [flag, readme] if flag == "--readme" => {
            if let Err(e) = write_readme_tables(Path::new(readme)) {
                eprintln!("scx_vrq-gen-docs: {e}");
                std::process::exit(1);
            }
            println!("{readme}");
            return;
        }
        [dir] if !dir.starts_with('-') => PathBuf::from(dir),
        _ => {
            eprintln!("scx_vrq-gen-docs: expected one argument, the output folder (see --help)");
            std::process::exit(2);
        }
    };
    let run = || -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(&out)?;
        // The NAME line is "scx_vrq - <about>": the about without its leading "scx_vrq: ".
        let mut cmd = cli::Opts::command().name(NAME);
        let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
        let about = about.strip_prefix("scx_vrq: ").unwrap_or(&about).trim_end_matches('.').to_string();
        cmd = cmd.about(about);
        let mut written = vec![write_man(cmd.clone(), &out)?];
        written.extend(write_completions(&mut cmd, &out.join("completions"))?);
        Ok(written)
    };
    match run() {
        Ok(written) => {
            for p in written {
                println!("{}", p.display());
            }
        }
        Err(e) => {
            eprintln!("scx_vrq-gen-docs: cannot write into {}: {e}", out.display());
            std::process::exit(1);
        }
    }
}
