// Builds the BPF scheduler (src/bpf/: main.bpf.c and one .bpf.c per concern, compiled each on its own
// and linked into one object, lavd's way) into a libbpf-rs skeleton, and generates Rust bindings for
// the definitions shared with it (src/bpf/intf.h). compile_link_gen names the skeleton "bpf" whatever
// the sources (BpfSkel, as before the split).
fn main() {
    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_intf("src/bpf/intf.h", "bpf_intf.rs")
        .enable_skel("src/bpf/main.bpf.c", "bpf")
        .add_source("src/bpf/deadline.bpf.c")
        .add_source("src/bpf/latency.bpf.c")
        .add_source("src/bpf/select.bpf.c")
        .add_source("src/bpf/preempt.bpf.c")
        .add_source("src/bpf/dispatch.bpf.c")
        .add_source("src/bpf/groups.bpf.c")
        .add_source("src/bpf/freq.bpf.c")
        .add_source("src/bpf/delay.bpf.c")
        .add_source("src/bpf/sticky.bpf.c")
        .add_source("src/bpf/stats.bpf.c")
        .add_source("src/bpf/slice_timer.bpf.c")
        .add_source("src/bpf/init.bpf.c")
        .add_source("src/bpf/hotplug.bpf.c")
        .add_source("src/bpf/cgroup.bpf.c")
        .add_source("src/bpf/cpu_release.bpf.c")
        .compile_link_gen()
        .unwrap();
    println!("cargo:rerun-if-changed=src/bpf/policy.h");
}
