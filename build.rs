// Builds the BPF scheduler (src/bpf/main.bpf.c) into a libbpf-rs skeleton and generates Rust bindings
// for the definitions shared with it (src/bpf/intf.h).
fn main() {
    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_intf("src/bpf/intf.h", "bpf_intf.rs")
        .enable_skel("src/bpf/main.bpf.c", "bpf")
        .build()
        .unwrap();
    println!("cargo:rerun-if-changed=src/bpf/policy.h");
}
