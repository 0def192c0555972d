// Writes scx_vrq's man page and its bash, zsh and fish completions from the same clap definition the
// scheduler parses its command line with (src/cli.rs), so they cannot drift from --help; and the
// README's knob tables from it, with where each knob's default was measured (docs/knob-evidence.md).
//
// A separate binary rather than build.rs: the generators (clap_mangen, clap_complete) are optional
// dependencies behind the gen-docs feature, so neither the scheduler binary nor a plain `cargo build`
// or `cargo install` compiles them, and the files are written only when packaging asks for them.

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use clap_complete::Shell;

// The CLI is read here only to be described, never parsed into values.
#[allow(dead_code)]
#[path = "../cli.rs"]
mod cli;

const NAME: &str = "scx_vrq";
const USAGE: &str = "usage: scx_vrq-gen-docs OUTDIR | --readme README.md | --check-readme README.md

Writes into OUTDIR (created if missing):
  scx_vrq.8                     the man page (section 8, roff)
  completions/scx_vrq.bash      bash completion
  completions/_scx_vrq          zsh completion
  completions/scx_vrq.fish      fish completion

--readme FILE rewrites the knob tables of FILE (the README) between its knob-tables markers from the
same definition; --check-readme FILE exits 1 while they differ (tests/package_test.sh runs it).";

/// The README's markers around its knob tables.
const TABLES_BEGIN: &str = "<!-- knob-tables:begin -->\n";
const TABLES_END: &str = "<!-- knob-tables:end -->";

/// Where each knob's default was measured (docs/knob-evidence.md): (flag's long name, markdown in
/// which `<docs/results/NAME/FILE>` stands for a link to that report). The evidence lives in the docs,
/// beside the reports, not in the source: this binary only renders it.
const EVIDENCE: &str = include_str!("../../docs/knob-evidence.md");

/// EVIDENCE's sections: each `## flag` heading and the text under it, its lines joined.
fn measured() -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for line in EVIDENCE.lines() {
        if let Some(flag) = line.strip_prefix("## ") {
            out.push((flag.trim(), String::new()));
        } else if let Some((_, text)) = out.last_mut() {
            if !line.trim().is_empty() {
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(line.trim());
            }
        }
    }
    out
}

/// `<docs/results/NAME/FILE>` as the markdown link [NAME](docs/results/NAME/FILE).
fn report_links(s: &str) -> String {
    const OPEN: &str = "<docs/results/";
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(OPEN) {
        let Some(len) = rest[i..].find('>') else { break };
        let path = &rest[i + 1..i + len];
        let name = path.trim_start_matches("docs/results/").split('/').next().unwrap_or(path);
        out.push_str(&rest[..i]);
        out.push_str(&format!("[{name}]({path})"));
        rest = &rest[i + len + 1..];
    }
    out.push_str(rest);
    out
}

fn markdown_cell(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// The README's knob tables, one per --help section of knobs, made from the flags' definitions: flag,
/// default, what --help says, and where it was measured (docs/knob-evidence.md).
fn knob_table_markdown() -> String {
    let args = cli::knob_args();
    let bool_parser = clap::builder::ValueParser::bool().type_id();
    let evidence = measured();
    let mut out = String::new();
    for heading in cli::KNOB_HEADINGS {
        out.push_str(&format!(
            "**{heading}**\n\n| flag | default | what it does (`--help`) | measured |\n|---|---|---|---|\n"
        ));
        for a in args.iter().filter(|a| a.get_help_heading() == Some(heading)) {
            let long = a.get_long().unwrap_or_default();
            let takes_value = a.get_num_args().is_some_and(|n| n.takes_values());
            let on_off = a.get_value_parser().type_id() == bool_parser;
            let flag = match a.get_value_names() {
                _ if on_off => format!("`--{long}[=BOOL]`"),
                Some(names) if takes_value => format!("`--{long} {}`", names[0]),
                _ if takes_value => format!("`--{long} {}`", a.get_id().as_str().to_uppercase()),
                _ => format!("`--{long}`"),
            };
            let default =
                a.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect::<Vec<_>>().join(",");
            let default = if takes_value { format!("`{default}`") } else { "off".into() };
            let mut help = a.get_long_help().or(a.get_help()).map(|h| h.to_string()).unwrap_or_default();
            let values: Vec<_> = a.get_possible_values().into_iter().filter(|v| !v.is_hide_set()).collect();
            if !values.is_empty() && !on_off {
                let each = values
                    .iter()
                    .map(|v| match v.get_help() {
                        Some(h) => format!("`{}`: {}", v.get_name(), h),
                        None => format!("`{}`", v.get_name()),
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                help = format!("{help}. Values: {each}");
            }
            let measured = evidence.iter().find(|(f, _)| *f == long).map(|(_, m)| report_links(m)).unwrap_or_default();
            out.push_str(&format!("| {flag} | {default} | {} | {measured} |\n", markdown_cell(&help)));
        }
        out.push('\n');
    }
    out
}

/// The evidence's flags that are not knobs (renamed or removed): each one an error.
fn measured_unknown() -> Vec<&'static str> {
    let knobs = cli::knob_args();
    measured().into_iter().map(|(f, _)| f).filter(|f| !knobs.iter().any(|a| a.get_long() == Some(*f))).collect()
}

/// FILE with its knob tables (between the markers) replaced by the generated ones, and whether that
/// changes it.
fn readme_with_tables(path: &Path) -> Result<(String, bool), String> {
    let unknown = measured_unknown();
    if !unknown.is_empty() {
        return Err(format!("docs/knob-evidence.md names flags that are not knobs: {}", unknown.join(", ")));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let (Some(b), Some(e)) = (text.find(TABLES_BEGIN), text.find(TABLES_END)) else {
        return Err(format!("{} has no {} ... {} markers", path.display(), TABLES_BEGIN.trim(), TABLES_END));
    };
    let from = b + TABLES_BEGIN.len();
    if e < from {
        return Err(format!("{}: the knob-tables markers are out of order", path.display()));
    }
    let new = format!("{}{}{}", &text[..from], knob_table_markdown(), &text[e..]);
    let changed = new != text;
    Ok((new, changed))
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
the BPF scheduler was ejected (the reason is printed); with \fB\-\-monitor\fR, the statistics
could not be read (not root, for one). While no scx_vrq serves them yet, \fB\-\-monitor\fR waits.
.TP
\fB2\fR
a bad flag: what is wrong, the valid values or the nearest flag's name, and the usage, on stderr.
.SH FILES
.TP
\fI/etc/default/scx_vrq\fR
\fBSCX_VRQ_FLAGS\fR, the flags the \fBscx_vrq.service\fR systemd unit starts the scheduler with.
.TP
\fI/usr/lib/systemd/system/scx_vrq.service\fR
the systemd unit: \fBsystemctl enable \-\-now scx_vrq\fR.
.TP
\fI/var/run/scx/root/stats\fR
the statistics socket that \fB\-\-monitor\fR reads; only root can: the loader makes the socket 0600
and its folder 0700 whatever the umask (and \fBscx_vrq.service\fR sets \fBUMask=0077\fR, \fI/run/scx\fR
mode 0700).
.TP
\fI/sys/kernel/sched_ext/state\fR, \fI/sys/kernel/sched_ext/root/ops\fR
whether a sched_ext scheduler is enabled, and which.
.SH NOTES
To run it through the sched_ext project's own \fBscx.service\fR instead, set
\fBSCX_SCHEDULER=scx_vrq\fR and \fBSCX_FLAGS=\fR\fIflags\fR in \fI/etc/default/scx\fR; run one
of them only: one sched_ext scheduler can be loaded at a time, so starting \fBscx_vrq.service\fR
stops \fBscx.service\fR and \fBscx_loader.service\fR.
.PP
\fB\-\-version\fR names the build: the version, the git commit it was built from
(\fB\-dirty\fR when its sources differed from that commit) and the target; the statistics'
first line gives the running scheduler's.
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
            let written = readme_with_tables(Path::new(readme))
                .and_then(|(new, _)| std::fs::write(readme, new).map_err(|e| format!("cannot write {readme}: {e}")));
            if let Err(e) = written {
                eprintln!("scx_vrq-gen-docs: {e}");
                std::process::exit(1);
            }
            println!("{readme}");
            return;
        }
        [flag, readme] if flag == "--check-readme" => match readme_with_tables(Path::new(readme)) {
            Ok((_, false)) => return,
            Ok((_, true)) => {
                eprintln!(
                    "scx_vrq-gen-docs: {readme}'s knob tables differ from src/cli.rs: rewrite them with `cargo run --release --features gen-docs --bin scx_vrq-gen-docs -- --readme {readme}`"
                );
                std::process::exit(1);
            }
            Err(e) => {
                eprintln!("scx_vrq-gen-docs: {e}");
                std::process::exit(1);
            }
        },
        [dir] if !dir.starts_with('-') => PathBuf::from(dir),
        _ => {
            eprintln!("scx_vrq-gen-docs: expected one argument, the output folder (see --help)");
            std::process::exit(2);
        }
    };
    let run = || -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(&out)?;
        // The NAME line is "scx_vrq - <about>": the about without its leading "scx_vrq: ".
        let mut cmd = cli::command().name(NAME);
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
