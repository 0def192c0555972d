// What the kernel's BPF verifier checked when the scheduler was loaded: the instructions it walked in each
// program (the kernel's per-program fdinfo field `verified_insns`, since Linux 5.16).
//
// Why the loader reports it: verification time grows with this count, and a reload after CPU hotplug
// verifies everything again while the kernel's scheduler shares the CPUs with whatever runs. A static
// helper with many callers is walked again for every state it is called in, so one added branch can
// multiply the count, and with it the time a reload leaves the machine on the kernel's scheduler. The
// count is logged at every load and the scheduler suite holds it under a budget.

use std::os::fd::AsFd;
use std::os::fd::AsRawFd;

use libbpf_rs::Object;

/// The verified-instruction count of each loaded program, by name; programs whose count the kernel
/// does not report are left out.
pub fn verified_insns(obj: &Object) -> Vec<(String, u64)> {
    obj.progs()
        .filter_map(|prog| {
            let fd = prog.as_fd().as_raw_fd();
            let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).ok()?;
            Some((prog.name().to_string_lossy().into_owned(), parse_verified_insns(&info)?))
        })
        .collect()
}

/// The `verified_insns:` field of a BPF program's fdinfo text.
fn parse_verified_insns(fdinfo: &str) -> Option<u64> {
    fdinfo.lines().find_map(|line| line.strip_prefix("verified_insns:")).and_then(|v| v.trim().parse().ok())
}

/// One log line: the total, then each program, largest first.
pub fn summary(counts: &[(String, u64)]) -> String {
    let mut sorted: Vec<_> = counts.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let total: u64 = counts.iter().map(|(_, n)| n).sum();
    let each: Vec<String> = sorted.iter().map(|(name, n)| format!("{name}={n}")).collect();
    format!("verified_insns={total} ({})", each.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fdinfo_field() {
        let info = "pos:\t0\nflags:\t02000002\nprog_type:\t27\nprog_jited:\t1\nverified_insns:\t52247\n";
        assert_eq!(parse_verified_insns(info), Some(52247));
        assert_eq!(parse_verified_insns("prog_type:\t27\n"), None);
    }

    #[test]
    fn summary_totals_and_orders_largest_first() {
        let counts = vec![("vrq_tick".to_string(), 7), ("vrq_select_cpu".to_string(), 50), ("vrq_exit".to_string(), 7)];
        assert_eq!(summary(&counts), "verified_insns=64 (vrq_select_cpu=50 vrq_exit=7 vrq_tick=7)");
    }
}
