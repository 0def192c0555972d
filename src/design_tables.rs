// A test that docs/design.md's state tables name every field of the BPF scheduler's per-task and
// per-CPU state (struct task_ctx, struct cpu_ctx), so that a field added in the BPF without its row
// fails `cargo test`. Test-only: nothing here is in the scheduler binary.

use std::path::Path;

const STRUCTS: [&str; 2] = ["task_ctx", "cpu_ctx"];
const STATE_HEADING: &str = "### State";

/// The C sources of the BPF scheduler, concatenated, comments removed.
fn bpf_sources(root: &Path) -> String {
    let mut paths: Vec<_> = std::fs::read_dir(root.join("src/bpf"))
        .expect("src/bpf")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c" || x == "h"))
        .collect();
    paths.sort();
    let text: String = paths.iter().map(|p| std::fs::read_to_string(p).unwrap() + "\n").collect();
    strip_comments(&text)
}

fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map(|i| &r[i + 2..]).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map(|i| &r[i..]).unwrap_or("");
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The members of `struct NAME { ... };` as (type, name); None if it is not defined.
fn members(src: &str, name: &str) -> Option<Vec<(String, String)>> {
    let start = src.find(&format!("struct {name} {{"))?;
    let body_from = start + src[start..].find('{')? + 1;
    let body_to = body_from + src[body_from..].find("\n};")?;
    let mut out = Vec::new();
    for decl in src[body_from..body_to].split(';') {
        let decl = decl.split('[').next().unwrap().trim();
        if decl.is_empty() {
            continue;
        }
        let words: Vec<&str> = decl.split_whitespace().collect();
        let field = words.last().unwrap().trim_start_matches('*').to_string();
        out.push((words[..words.len() - 1].join(" "), field));
    }
    Some(out)
}

/// Every name a design table must show for @name: a plain field as `field`; a field that is itself a
/// struct by each of its members, `field.member`.
fn documented_names(src: &str, name: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (ty, field) in members(src, name).unwrap_or_else(|| panic!("struct {name} not found in src/bpf")) {
        let inner = ty.strip_prefix("struct ").filter(|t| !t.contains("bpf_cpumask"));
        match inner.and_then(|t| members(src, t.split_whitespace().next().unwrap())) {
            Some(sub) => names.extend(sub.into_iter().map(|(_, m)| format!("{field}.{m}"))),
            None => names.push(field),
        }
    }
    names
}

#[test]
fn design_state_tables_name_every_field() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = bpf_sources(root);
    let design = std::fs::read_to_string(root.join("docs/design.md")).unwrap();
    let from = design.find(STATE_HEADING).expect("docs/design.md has no State section");
    let to =
        design[from + STATE_HEADING.len()..].find("\n## ").map_or(design.len(), |i| from + STATE_HEADING.len() + i);
    let state = &design[from..to];
    let mut missing = Vec::new();
    for s in STRUCTS {
        for name in documented_names(&src, s) {
            // `field.member` in a table, or the member listed under its struct's own row
            let (whole, member) = (format!("`{name}`"), name.rsplit('.').next().unwrap().to_string());
            let parent = name.split('.').next().unwrap();
            let listed = state.contains(&whole)
                || (name.contains('.')
                    && state.contains(&format!("`{parent}`"))
                    && state.contains(&format!("`{member}`")));
            if !listed {
                missing.push(format!("{s}.{name}"));
            }
        }
    }
    assert!(missing.is_empty(), "docs/design.md's State tables lack: {}", missing.join(", "));
}

#[test]
fn the_struct_reader_reads_nested_members() {
    let src = strip_comments(
        "struct inner {\n\tu8 a; /* x; y */\n\tu64 b[4];\n};\nstruct outer {\n\tu64 d; // e;\n\tstruct inner in;\n\tstruct bpf_cpumask __kptr *m;\n};\n",
    );
    assert_eq!(documented_names(&src, "outer"), ["d", "in.a", "in.b", "m"]);
}
