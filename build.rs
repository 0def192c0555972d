// Builds the BPF scheduler (src/bpf/main.bpf.c) into a libbpf-rs skeleton and generates Rust bindings
// for the definitions shared with it (src/bpf/intf.h). Through compile_link_gen, lavd's way (each
// source compiled on its own, then linked into one object): ready for one .bpf.c file per concern,
// each added with add_source(). With main.bpf.c alone the verifier walks exactly what it walked when
// the skeleton was built from it directly (167,704 instructions with --queue llc, 2026-11-26). The
// skeleton is named "bpf" (BpfSkel) either way.
fn main() {
    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_intf("src/bpf/intf.h", "bpf_intf.rs")
        .enable_skel("src/bpf/main.bpf.c", "bpf")
        .compile_link_gen()
        .unwrap();
    println!("cargo:rerun-if-changed=src/bpf/policy.h");
}
