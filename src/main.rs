// scx_vrq: loader of the BFS/VRQ virtual-deadline sched_ext scheduler.
//
// Checks the machine, turns the command line into the BPF scheduler's knobs and topology, loads and
// attaches it, serves its statistics, and restarts it when the kernel asks (CPU hotplug). Every
// scheduling decision is made in BPF (src/bpf/main.bpf.c, rules in src/bpf/policy.h).

mod bpf_skel;
pub use bpf_skel::*;
pub mod bpf_intf;

mod cli;
#[cfg(test)]
mod design_tables;
mod lat_hist;
mod stats;
mod verifier;

use std::collections::BTreeMap;
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::os::fd::AsRawFd;
use std::os::fd::FromRawFd;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::Condvar;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::time::Duration;

use anyhow::Context;
use anyhow::Result;
use anyhow::bail;
use cli::GroupMode;
use cli::Opts;
use cli::QueueMode;
use crossbeam::channel::Receiver;
use crossbeam::channel::Sender;
use libbpf_rs::MapCore;
use libbpf_rs::MapFlags;
use libbpf_rs::OpenObject;
use libbpf_rs::skel::Skel;
use log::info;
use log::warn;
use scx_stats::prelude::*;
use scx_utils::Topology;
use scx_utils::UserExitInfo;
use scx_utils::build_id;
use scx_utils::compat;
use scx_utils::scx_ops_attach;
use scx_utils::scx_ops_load;
use scx_utils::scx_ops_open;
use scx_utils::try_set_rlimit_infinity;
use scx_utils::uei_exited;
use scx_utils::uei_report;
use stats::Metrics;

const SCHEDULER_NAME: &str = "scx_vrq";
const SCX_SYSFS: &str = "/sys/kernel/sched_ext";
/// Where --group-accounting auto looks for the cgroup v2 hierarchy.
const MOUNTS: &str = "/proc/self/mounts";
const MAX_CPUS: usize = bpf_intf::vrq_consts_VRQ_MAX_CPUS as usize;
/// sched_ext's watchdog for this scheduler (ops.timeout_ms, defined in intf.h): a runnable task that
/// waits longer than this ejects the scheduler, so every wait bound must stay below it.
const WATCHDOG_MS: u64 = bpf_intf::vrq_consts_VRQ_WATCHDOG_MS as u64;

/// The build, as `--version` and the statistics give it: the crate's version, the git commit it was
/// built from and "-dirty" if its sources differed from that commit (build.rs), then the target --
/// the form of the sched_ext project's schedulers (scx_utils::build_id), e.g.
/// "0.1.0-g0123456789-dirty x86_64-unknown-linux-gnu". Outside a git checkout, the version alone.
pub fn build_version() -> String {
    let semver =
        version_with_commit(env!("CARGO_PKG_VERSION"), env!("VRQ_GIT_COMMIT"), !env!("VRQ_GIT_DIRTY").is_empty());
    build_id::full_version(&semver)
}

fn version_with_commit(semver: &str, commit: &str, dirty: bool) -> String {
    match (commit.is_empty(), dirty) {
        (true, _) => semver.to_string(),
        (false, false) => format!("{semver}-g{commit}"),
        (false, true) => format!("{semver}-g{commit}-dirty"),
    }
}

/// What the loader's waits wake on: SIGINT/SIGTERM (`shutdown`), statistics requests (counted by a
/// relay thread, start_stats_relay) and the Watcher's events (`looks`: the BPF scheduler's exit, a
/// change of the root cgroup's controllers). A std Mutex and Condvar -- a futex wait, woken by the
/// event itself -- rather than crossbeam's channel waits, whose backoff spins before it blocks (see
/// Scheduler::run).
#[derive(Default)]
struct Events {
    state: Mutex<EventState>,
    changed: Condvar,
}

#[derive(Default)]
struct EventState {
    shutdown: bool,
    requests: u64,
    looks: u64,
}

impl Events {
    fn lock(&self) -> MutexGuard<'_, EventState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn update(&self, f: impl FnOnce(&mut EventState)) {
        f(&mut self.lock());
        self.changed.notify_all();
    }
}

/// SIGINT and SIGTERM as every wait of the loader sees them: a wait ends at once when one arrives.
#[derive(Clone, Default)]
pub struct Shutdown {
    events: Arc<Events>,
}

impl Shutdown {
    /// A Shutdown fired by SIGINT and SIGTERM (ctrlc runs the handler in a thread of its own).
    fn on_signals() -> Result<Self> {
        let shutdown = Self::default();
        let fire = shutdown.clone();
        ctrlc::set_handler(move || fire.fire()).context("installing the SIGINT/SIGTERM handler")?;
        Ok(shutdown)
    }

    pub fn fire(&self) {
        self.events.update(|s| s.shutdown = true);
    }

    pub fn requested(&self) -> bool {
        self.events.lock().shutdown
    }

    /// Sleep up to `d`, ending at once on shutdown; true if not shut down.
    pub fn sleep(&self, d: Duration) -> bool {
        let guard = self.events.lock();
        let (guard, _) =
            self.events.changed.wait_timeout_while(guard, d, |s| !s.shutdown).unwrap_or_else(|e| e.into_inner());
        !guard.shutdown
    }
}

/// Carry the statistics server's requests (a crossbeam channel) into Events. The thread blocks in the
/// channel's recv with no timeout, so it runs only when a request comes; it ends when the server, and
/// with it the channel, is dropped.
fn start_stats_relay(requests: Receiver<()>, events: Arc<Events>) -> Result<()> {
    std::thread::Builder::new()
        .name("stats-relay".into())
        .spawn(move || {
            while requests.recv().is_ok() {
                events.update(|s| s.requests += 1);
            }
        })
        .context("starting the statistics relay thread")?;
    Ok(())
}

/// Answer statistics requests until `exited` or a shutdown. `exited` is looked at first, then after
/// each request and each Watcher event, told whether a Watcher event came since its last look (at the
/// first look: yes); in between the thread sleeps with no timeout, woken only by a request, a Watcher
/// event or a signal.
/// Requests counted before the call are answered: the server accepts connections from its launch, and
/// a client may ask as soon as it can connect.
fn serve_stats<M>(
    events: &Events,
    replies: &Sender<M>,
    mut exited: impl FnMut(bool) -> bool,
    mut metrics: impl FnMut() -> M,
) -> Result<()> {
    let mut watched = true;
    while !exited(watched) {
        let requests = {
            let guard = events.lock();
            let mut guard = events
                .changed
                .wait_while(guard, |s| !s.shutdown && s.requests == 0 && s.looks == 0)
                .unwrap_or_else(|e| e.into_inner());
            if guard.shutdown {
                break;
            }
            watched = std::mem::take(&mut guard.looks) > 0;
            std::mem::take(&mut guard.requests)
        };
        for _ in 0..requests {
            replies.send(metrics()).map_err(|_| anyhow::anyhow!("the statistics server stopped"))?;
        }
    }
    Ok(())
}

/// A source of Watcher events.
enum Watch {
    /// Readable once and for good: the BPF scheduler's exit (the ring buffer its ops.exit writes to,
    /// src/bpf/main.bpf.c). Reported once, then no longer polled.
    Once(OwnedFd),
    /// An inotify instance (non-blocking): readable at each change of the files it watches, drained
    /// at each.
    Inotify(OwnedFd),
}

/// A thread blocked in poll(2) on the Watches, which counts a `look` in Events at each of their events,
/// so that the loader needs no periodic wake-up: it sleeps until something happens. Dropping the
/// Watcher ends the thread (the write end of its stop pipe closes) and closes the Watches.
struct Watcher {
    stop: Option<OwnedFd>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    fn start(watches: Vec<Watch>, events: Arc<Events>) -> Result<Self> {
        let mut ends = [0; 2];
        if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error()).context("creating the watcher's stop pipe");
        }
        let (stop_rx, stop) = unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
        let thread = std::thread::Builder::new()
            .name("watcher".into())
            .spawn(move || Self::watch(stop_rx, watches, &events))
            .context("starting the watcher thread")?;
        Ok(Self { stop: Some(stop), thread: Some(thread) })
    }

    fn watch(stop_rx: OwnedFd, mut watches: Vec<Watch>, events: &Events) {
        loop {
            let mut fds: Vec<libc::pollfd> = std::iter::once(stop_rx.as_raw_fd())
                .chain(watches.iter().map(|w| match w {
                    Watch::Once(fd) | Watch::Inotify(fd) => fd.as_raw_fd(),
                }))
                .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
                .collect();
            if unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) } < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                // Not expected of poll on these fds; without the watcher the loader would miss the
                // scheduler's exit, so it falls back to looking once a second.
                warn!("the watcher's poll failed ({e}): looking for the scheduler's exit once a second");
                while !events.lock().shutdown && !Self::stopped(&stop_rx) {
                    events.update(|s| s.looks += 1);
                    std::thread::sleep(Duration::from_secs(1));
                }
                return;
            }
            if fds[0].revents != 0 {
                return; // the Watcher was dropped
            }
            let mut fired = false;
            let mut i = 0;
            watches.retain(|w| {
                i += 1;
                if fds[i].revents == 0 {
                    return true;
                }
                fired = true;
                match w {
                    Watch::Once(_) => false,
                    // not expected of an inotify fd; polled again, it would spin
                    Watch::Inotify(_) if fds[i].revents & (libc::POLLERR | libc::POLLNVAL) != 0 => false,
                    Watch::Inotify(fd) => {
                        let mut buf = [0u8; 4096];
                        while unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
                        true
                    }
                }
            });
            if fired {
                events.update(|s| s.looks += 1);
            }
        }
    }

    /// The stop pipe's write end is closed (the Watcher dropped), without waiting.
    fn stopped(stop_rx: &OwnedFd) -> bool {
        let mut fd = libc::pollfd { fd: stop_rx.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        (unsafe { libc::poll(&mut fd, 1, 0) }) != 0
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A Watch::Inotify of changes written to `path`, or why not.
fn inotify_modify(path: &str) -> std::io::Result<Watch> {
    let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let c_path = std::ffi::CString::new(path).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    if unsafe { libc::inotify_add_watch(fd.as_raw_fd(), c_path.as_ptr(), libc::IN_MODIFY) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Watch::Inotify(fd))
}

impl GroupMode {
    /// The BPF scheduler's mode; `auto` is resolved first (GroupMode::at_load).
    fn bpf_value(self) -> u32 {
        match self {
            GroupMode::Auto => unreachable!("--group-accounting auto is resolved at load"),
            GroupMode::Off => bpf_intf::vrq_group_mode_VRQ_GROUP_OFF,
            GroupMode::Thread => bpf_intf::vrq_group_mode_VRQ_GROUP_THREAD,
            GroupMode::Session => bpf_intf::vrq_group_mode_VRQ_GROUP_SESSION,
            GroupMode::Cgroup => bpf_intf::vrq_group_mode_VRQ_GROUP_CGROUP,
        }
    }

    fn name(self) -> &'static str {
        match self {
            GroupMode::Auto => "auto",
            GroupMode::Off => "off",
            GroupMode::Thread => "thread",
            GroupMode::Session => "session",
            GroupMode::Cgroup => "cgroup",
        }
    }

    /// The mode this load runs in and why, `auto` resolved on this machine: cgroup where the cpu
    /// controller is enabled in the root cgroup's cgroup.subtree_control, session elsewhere.
    fn at_load(self) -> (GroupMode, String) {
        let mounts = std::fs::read_to_string(MOUNTS).unwrap_or_default();
        self.resolve(&mounts, |path| std::fs::read_to_string(path))
    }

    /// As at_load, from /proc/self/mounts' text and a reader of files. The cpu controller in the
    /// root's subtree_control is what lets any cgroup's cpu.weight differ from its siblings'; without
    /// it every task competes as if in one cgroup, which cgroup mode would account as group
    /// accounting off, so session stands in. Any cgroup2 mount shows the same root.
    fn resolve(self, mounts: &str, read: impl Fn(&str) -> std::io::Result<String>) -> (GroupMode, String) {
        if self != GroupMode::Auto {
            return (self, format!("set by --group-accounting {}", self.name()));
        }
        let Some(path) = root_subtree_control(mounts) else {
            return (GroupMode::Session, format!("auto: no cgroup v2 hierarchy in {MOUNTS}"));
        };
        match read(&path) {
            Ok(text) if text.split_whitespace().any(|c| c == "cpu") => {
                (GroupMode::Cgroup, format!("auto: the cpu controller is enabled in {path}"))
            }
            Ok(_) => (GroupMode::Session, format!("auto: the cpu controller is not enabled in {path}")),
            Err(e) => (GroupMode::Session, format!("auto: {path} unreadable ({e})")),
        }
    }
}

/// The root cgroup's cgroup.subtree_control, from /proc/self/mounts' text: under the first cgroup2
/// mount (any shows the same root).
fn root_subtree_control(mounts: &str) -> Option<String> {
    mounts
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() > 2 && f[2] == "cgroup2")
        .map(|f| format!("{}/cgroup.subtree_control", f[1]))
}

impl QueueMode {
    fn bpf_value(self) -> u32 {
        match self {
            QueueMode::Global => bpf_intf::vrq_queue_mode_VRQ_QUEUE_GLOBAL,
            QueueMode::Llc => bpf_intf::vrq_queue_mode_VRQ_QUEUE_LLC,
            QueueMode::Cpu => bpf_intf::vrq_queue_mode_VRQ_QUEUE_CPU,
        }
    }
}

/// The knobs in the BPF scheduler's units: one line per flag of cli.rs's knob sections, the one place a
/// flag meets the BPF side (--group-accounting as resolved at load). Each sets the `const volatile` in src/bpf/main.bpf.c named as its flag in
/// snake_case, a time in ns where the flag gives ms or µs (--rr-interval-ms: rr_interval_ns; a test
/// checks the names).
fn set_knobs(rodata: &mut types::rodata, opts: &Opts, group_accounting: GroupMode) {
    rodata.queue = opts.queue.bpf_value();
    rodata.rr_interval_ns = opts.rr_interval_ms * 1_000_000;
    rodata.min_slice_ns = (opts.min_slice_us * 1000).min(rodata.rr_interval_ns);
    rodata.max_round_ns = opts.max_round_ms * 1_000_000;
    rodata.target_latency_ns = opts.target_latency_ms * 1_000_000;
    rodata.round_target_ns = opts.round_target_ms * 1_000_000;
    rodata.target_floor_ns = opts.target_floor_us * 1000;
    rodata.hold_floor = opts.hold_floor;
    rodata.short_run_ns = opts.short_run_us * 1000;
    rodata.short_run_renew = opts.short_run_renew;
    rodata.under_share_first = opts.under_share_first;
    rodata.wake_credit = opts.wake_credit;
    rodata.sync_handoff = opts.sync_handoff;
    rodata.vfork_handoff = opts.vfork_handoff;
    rodata.preempt_local = opts.preempt_local;
    rodata.handoff_slice = opts.handoff_slice;
    rodata.idle_bound_ns = opts.idle_bound_ms * 1_000_000;
    rodata.yield_type = opts.yield_type;
    rodata.group_accounting = group_accounting.bpf_value();
    rodata.fork_depth_penalty = opts.fork_depth_penalty;
    rodata.freq_threshold = opts.freq_threshold;
    rodata.capacity_aware = opts.capacity_aware;
    rodata.migration_delay_ns = opts.migration_delay_us * 1000;
    rodata.sticky = opts.sticky;
    rodata.stay_behind_kthread = opts.stay_behind_kthread;
}

/// One clear line for every way the machine can be unfit, before anything is touched.
fn preflight() -> Result<()> {
    if unsafe { libc::geteuid() } != 0 {
        bail!("must be run as root (loading a sched_ext scheduler needs CAP_SYS_ADMIN and CAP_BPF)");
    }
    let state_path = format!("{SCX_SYSFS}/state");
    let state = std::fs::read_to_string(&state_path).map_err(|_| {
        anyhow::anyhow!(
            "this kernel ({}) has no sched_ext: {state_path} is missing (needs CONFIG_SCHED_CLASS_EXT=y, Linux 6.12 or newer); the kernel's scheduler stays in charge",
            kernel_release()
        )
    })?;
    // libbpf reads the kernel's build configuration at load for the BPF side's CONFIG_HZ (cgroup.bpf.c),
    // from where it looks: without either file the load fails with a bare "Invalid argument".
    let release = kernel_release();
    let configs = [format!("/boot/config-{release}"), "/proc/config.gz".to_string()];
    if !configs.iter().any(|c| std::path::Path::new(c).exists()) {
        bail!(
            "the kernel's build configuration is not readable ({} or {}; the BPF loader needs it): install it with the kernel, or load the configs module for /proc/config.gz",
            configs[0],
            configs[1]
        );
    }
    let state = state.trim();
    if state != "disabled" {
        let ops = std::fs::read_to_string(format!("{SCX_SYSFS}/root/ops")).unwrap_or_default();
        let ops = ops.trim();
        bail!(
            "another sched_ext scheduler is {} ({}); stop it first",
            state,
            if ops.is_empty() { "unknown" } else { ops }
        );
    }
    Ok(())
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The BPF side keeps its per-CPU state in arrays of MAX_CPUS entries: a machine with a CPU id at or
/// above it is refused in one line rather than scheduled in part.
fn refuse_unsupported_cpus(ids: impl Iterator<Item = usize>) -> Result<()> {
    match ids.max() {
        Some(id) if id >= MAX_CPUS => {
            bail!("this machine has CPU {}; scx_vrq supports CPU ids 0-{}", id, MAX_CPUS - 1)
        }
        _ => Ok(()),
    }
}

/// Dense topology ids per CPU (core, LLC, package, node), as enum vrq_distance needs them.
fn cpu_topology(topo: &Topology) -> Result<Vec<(usize, bpf_intf::vrq_cpu_topo)>> {
    fn dense(map: &mut BTreeMap<(usize, usize), u32>, key: (usize, usize)) -> u32 {
        let next = map.len() as u32;
        *map.entry(key).or_insert(next)
    }
    let (mut cores, mut llcs, mut pkgs, mut nodes) =
        (BTreeMap::new(), BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    refuse_unsupported_cpus(topo.all_cpus.values().map(|cpu| cpu.id))?;
    let mut out = Vec::new();
    for cpu in topo.all_cpus.values() {
        out.push((
            cpu.id,
            bpf_intf::vrq_cpu_topo {
                core: dense(&mut cores, (cpu.package_id, cpu.core_id)),
                llc: dense(&mut llcs, (cpu.node_id, cpu.llc_id)),
                pkg: dense(&mut pkgs, (cpu.package_id, 0)),
                node: dense(&mut nodes, (cpu.node_id, 0)),
            },
        ));
    }
    Ok(out)
}

struct Scheduler<'a> {
    skel: BpfSkel<'a>,
    struct_ops: Option<libbpf_rs::Link>,
    opts: &'a Opts,
    /// --group-accounting as resolved at load (never auto).
    group_accounting: GroupMode,
    /// Set when run() ended because `auto` would now choose another mode (and why): reload.
    regroup: Option<(GroupMode, String)>,
    stats_server: StatsServer<(), Metrics>,
}

impl<'a> Scheduler<'a> {
    fn init(opts: &'a Opts, open_object: &'a mut MaybeUninit<OpenObject>, topo: &Topology) -> Result<Self> {
        try_set_rlimit_infinity();
        let cpus = cpu_topology(topo)?;
        let nr_cpus = cpus.iter().map(|(id, _)| id + 1).max().unwrap_or(1);

        let mut builder = BpfSkelBuilder::default();
        builder.obj_builder.debug(opts.verbose);
        let open_opts = opts.libbpf.clone().into_bpf_open_opts();
        let mut skel = scx_ops_open!(builder, open_object, vrq_ops, open_opts)?;

        skel.struct_ops.vrq_ops_mut().exit_dump_len = opts.exit_dump_len;
        // ENQ_LAST: a CPU's only runnable task comes back through enqueue when its slice ends, so it
        // gets a new deadline and slice like any other task (see vrq_dispatch).
        skel.struct_ops.vrq_ops_mut().flags = *compat::SCX_OPS_ENQ_LAST;

        let (group_accounting, why) = opts.group_accounting.at_load();
        let rodata = skel.maps.rodata_data.as_mut().unwrap();
        set_knobs(rodata, opts, group_accounting);
        rodata.nr_cpus = nr_cpus as u32;
        for (id, t) in &cpus {
            let slot = &mut rodata.cpu_topo[*id];
            (slot.core, slot.llc, slot.pkg, slot.node) = (t.core, t.llc, t.pkg, t.node);
            rodata.cpu_in_topology[*id] = 1;
        }

        info!(
            "{} {} on Linux {}: {}, {} CPUs",
            SCHEDULER_NAME,
            build_version(),
            kernel_release(),
            opts.knob_summary,
            cpus.len()
        );

        info!("group accounting: {} ({why})", group_accounting.name());

        info!(
            "topology (cpu:core/llc/pkg/node): {}",
            cpus.iter()
                .map(|(id, t)| format!("{id}:{}/{}/{}/{}", t.core, t.llc, t.pkg, t.node))
                .collect::<Vec<_>>()
                .join(" ")
        );

        let load_started = std::time::Instant::now();
        let (skel, struct_ops) = {
            let _urgent = LoaderPriority::raise();
            let mut skel = scx_ops_load!(skel, vrq_ops, uei)?;
            info!(
                "BPF programs loaded in {:.1} s: {}",
                load_started.elapsed().as_secs_f64(),
                verifier::summary(&verifier::verified_insns(skel.object()))
            );
            let struct_ops = Some(scx_ops_attach!(skel, vrq_ops)?);
            (skel, struct_ops)
        };
        let stats_server = stats::launch_server(std::path::Path::new(stats::STATS_SOCKET))?;
        info!("scheduler attached (sched_ext ops \"vrq\")");

        Ok(Self { skel, struct_ops, opts, group_accounting, regroup: None, stats_server })
    }

    fn metrics(&self) -> Metrics {
        let mut sums = vec![0u64; bpf_intf::vrq_stat_VRQ_NR_STATS as usize];
        let key = 0u32.to_ne_bytes();
        if let Ok(Some(per_cpu)) = self.skel.maps.stats.lookup_percpu(&key, MapFlags::ANY) {
            for slot in per_cpu {
                for (i, chunk) in slot.chunks_exact(8).enumerate().take(sums.len()) {
                    sums[i] = sums[i].wrapping_add(u64::from_ne_bytes(chunk.try_into().unwrap()));
                }
            }
        }
        let mut m = Metrics::from_counters(&sums);
        if let Ok(Some(per_cpu)) = self.skel.maps.lat_hists.lookup_percpu(&key, MapFlags::ANY) {
            m.lat = lat_hist::from_percpu(&per_cpu);
        }
        let bss = self.skel.maps.bss_data.as_ref().unwrap();
        let nr_queues = bss.nr_queues as usize;
        m.queue_mode = self.opts.queue.name().into();
        m.nr_queues = nr_queues as u64;
        for q in bss.queues.iter().take(nr_queues) {
            m.nr_queued += q.nr_queued;
            m.max_queued = m.max_queued.max(q.max_queued);
        }
        m.cgroups = bss.nr_cgroups.max(0) as u64;
        m.version = build_version();
        m.knobs = self.opts.knob_summary.clone();
        m.group_accounting = match self.opts.group_accounting {
            GroupMode::Auto => format!("{} (auto)", self.group_accounting.name()),
            _ => self.group_accounting.name().into(),
        };
        m
    }

    /// Serve statistics until the BPF scheduler exits or a shutdown is asked, then unregister it.
    ///
    /// The loader sleeps between events (serve_stats), with no periodic wake-up. sched_ext tells user
    /// space nothing when it ejects or unloads a scheduler: it records why in the exit info, in BPF
    /// memory (uei), and the struct_ops link stays attached (its registration ignores the link, so
    /// polling the link's fd never reports a hang-up) -- the sched_ext project's schedulers look at uei
    /// once a second. Here ops.exit also writes a record to a ring buffer whose fd the Watcher polls.
    ///
    /// The waits are a futex's, not crossbeam's channel waits with a timeout, which the loader once
    /// left for a 100 ms poll because they seemed to spin in the VM. They block, but their backoff runs
    /// PAUSE instructions before it does, and single-threaded emulation takes a PAUSE as a cue to run
    /// the other vCPUs: on the instruction clock the waiting thread's vCPU is held, and the thread
    /// charged, for as long as a busy vCPU then runs.
    ///
    /// Under --group-accounting auto the Watcher also follows writes to the root cgroup's
    /// cgroup.subtree_control (inotify): at each, the loader looks whether the cpu controller was
    /// enabled or disabled there since the load (systemd enables it when the first unit with a
    /// CPUWeight= starts, which can be after this service at boot), and ends with `regroup` set when
    /// the choice would differ: the caller reloads.
    fn run(&mut self, shutdown: &Shutdown) -> Result<UserExitInfo> {
        let (res_ch, req_ch) = self.stats_server.channels();
        // Counts left by an earlier instance's server and watcher refer to them, not to this one;
        // this server's requests so far wait in its channel until the relay takes them.
        shutdown.events.update(|s| (s.requests, s.looks) = (0, 0));
        start_stats_relay(req_ch, shutdown.events.clone())?;
        let auto = self.opts.group_accounting == GroupMode::Auto;
        let mut watches = vec![Watch::Once(
            self.skel.maps.exit_notify.as_fd().try_clone_to_owned().context("duplicating the exit ring buffer's fd")?,
        )];
        if auto {
            let mounts = std::fs::read_to_string(MOUNTS).unwrap_or_default();
            if let Some(path) = root_subtree_control(&mounts) {
                match inotify_modify(&path) {
                    Ok(w) => watches.push(w),
                    Err(e) => warn!(
                        "cannot follow changes of {path} ({e}): --group-accounting auto keeps its choice until a reload"
                    ),
                }
            }
        }
        let _watcher = Watcher::start(watches, shutdown.events.clone())?;
        let mut regroup = None;
        serve_stats(
            &shutdown.events,
            &res_ch,
            |watched| {
                if uei_exited!(&self.skel, uei) {
                    return true;
                }
                // the controllers change only with a write the Watcher reports: a statistics request
                // alone reads no file
                if auto && watched {
                    let (now, why) = GroupMode::Auto.at_load();
                    if now != self.group_accounting {
                        regroup = Some((now, why));
                        return true;
                    }
                }
                false
            },
            || self.metrics(),
        )?;
        self.regroup = regroup;
        let _ = self.struct_ops.take();
        uei_report!(&self.skel, uei)
    }
}

impl Drop for Scheduler<'_> {
    fn drop(&mut self) {
        info!("unregistered {SCHEDULER_NAME}; the kernel's scheduler is in charge");
    }
}

/// The loader at nice -20 while it loads and attaches the scheduler, its nice as it was afterwards.
/// The kernel verifies the BPF programs and initialises every task in the loader's own system calls,
/// under the kernel's scheduler: beside N CPU hogs on the CPUs left after a hotplug, at nice 0 it gets
/// 1/(N+1) of a CPU and the load takes N+1 times as long. At -20 its weight is 86 times a nice-0
/// task's, so it keeps most of a CPU beside a few hogs. Needs CAP_SYS_NICE, which root has; a refusal
/// only leaves the load slower (one warning).
struct LoaderPriority {
    was: Option<i32>,
}

impl LoaderPriority {
    const URGENT: i32 = -20;

    fn raise() -> Self {
        // getpriority can return -1 as a value: errno tells an error apart.
        unsafe { *libc::__errno_location() = 0 };
        let was = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        if unsafe { *libc::__errno_location() } != 0 || was <= Self::URGENT {
            return Self { was: None };
        }
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, Self::URGENT) } != 0 {
            warn!(
                "could not raise the loader's priority for the load ({}): it may be slow on a busy machine",
                std::io::Error::last_os_error()
            );
            return Self { was: None };
        }
        Self { was: Some(was) }
    }
}

impl Drop for LoaderPriority {
    fn drop(&mut self) {
        if let Some(was) = self.was {
            unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, was) };
        }
    }
}

/// Restarts asked by the kernel (CPU hotplug), and those of --group-accounting auto when the cpu
/// controller is enabled or disabled at the root, are always honoured -- giving up would leave the
/// machine on the kernel's scheduler for good over a burst of hotplug -- but their rate is bounded:
/// past MAX within WINDOW, the next reload waits until the oldest one leaves the window (meanwhile
/// the kernel's scheduler runs everything).
#[derive(Default)]
struct RestartBudget {
    recent: std::collections::VecDeque<std::time::Instant>,
}

impl RestartBudget {
    const MAX: usize = 20;
    const WINDOW: Duration = Duration::from_secs(60);

    /// How long to wait before a restart at `now` fits the budget (zero: at once).
    fn wait_before(&mut self, now: std::time::Instant) -> Duration {
        while self.recent.front().is_some_and(|t| now.duration_since(*t) > Self::WINDOW) {
            self.recent.pop_front();
        }
        if self.recent.len() < Self::MAX {
            return Duration::ZERO;
        }
        (self.recent[0] + Self::WINDOW + Duration::from_millis(1)).saturating_duration_since(now)
    }

    fn record(&mut self, at: std::time::Instant) {
        self.recent.push_back(at);
    }
}

/// A reload right after a hotplug event can race the CPU going away (its topology files vanish
/// while they are read), and a burst of hotplug can go on for a while: keep trying, once a second,
/// for up to two minutes before giving up (the kernel's scheduler runs everything meanwhile).
const RELOAD_ATTEMPTS: u32 = 120;

fn init_log(verbose: bool) -> Result<()> {
    let mut cfg = simplelog::ConfigBuilder::new();
    let _ = cfg.set_time_offset_to_local();
    cfg.set_time_level(simplelog::LevelFilter::Error)
        .set_location_level(simplelog::LevelFilter::Off)
        .set_target_level(simplelog::LevelFilter::Off)
        .set_thread_level(simplelog::LevelFilter::Off);
    simplelog::TermLogger::init(
        if verbose { simplelog::LevelFilter::Debug } else { simplelog::LevelFilter::Info },
        cfg.build(),
        simplelog::TerminalMode::Stderr,
        simplelog::ColorChoice::Auto,
    )?;
    Ok(())
}

/// Parse the command line. A bad flag: clap's whole message on stderr (what is wrong, the valid
/// values or the nearest flag's name, the usage), each line after "scx_vrq: ", and exit status 2.
fn parse_opts() -> Opts {
    match cli::parse_from(std::env::args_os()) {
        Ok(o) => o,
        Err(e) => match e.kind() {
            clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => e.exit(),
            _ => {
                eprint!("{}", parse_error_message(&e));
                std::process::exit(2);
            }
        },
    }
}

/// clap's message for a bad command line, its first line naming the problem after "scx_vrq: ", then
/// for `--no-FLAG` how to turn FLAG off (cli::parse_error_hint).
fn parse_error_message(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let body = rendered.trim_start_matches(|c: char| c.is_whitespace());
    let body = body.strip_prefix("error: ").unwrap_or(body).trim_end();
    match cli::parse_error_hint(e) {
        Some(hint) => format!("{SCHEDULER_NAME}: {body}\n\n{SCHEDULER_NAME}: {hint}\n"),
        None => format!("{SCHEDULER_NAME}: {body}\n"),
    }
}

fn run(opts: &Opts) -> Result<()> {
    let shutdown = Shutdown::on_signals()?;

    if let Some(intv) = opts.monitor {
        // Only the statistics of a running scx_vrq: a failure to read them is this run's failure.
        return stats::monitor(Duration::from_secs_f64(intv), opts.stats_full, &shutdown);
    }
    if let Some(intv) = opts.stats {
        let shutdown = shutdown.clone();
        let stats_full = opts.stats_full;
        std::thread::spawn(move || {
            if let Err(e) = stats::monitor(Duration::from_secs_f64(intv), stats_full, &shutdown) {
                warn!("statistics stopped: {e:#}");
            }
        });
    }

    preflight()?;
    let mut open_object = MaybeUninit::uninit();
    let mut restarts = RestartBudget::default();
    let mut reloading = false;
    loop {
        // After a kernel-asked restart (hotplug) the CPU going away may still be half-visible in
        // sysfs and its topology files vanish while they are read: try a few times.
        let mut attempt = 1;
        let topo = loop {
            match Topology::new() {
                Ok(t) => break t,
                Err(e) if reloading && attempt < RELOAD_ATTEMPTS => {
                    if attempt == 1 || attempt % 10 == 0 {
                        warn!(
                            "reading the CPU topology for the reload failed (attempt {attempt} of {RELOAD_ATTEMPTS}, once a second): {e:#}"
                        );
                    }
                    if !shutdown.sleep(Duration::from_secs(1)) {
                        return Ok(());
                    }
                    attempt += 1;
                }
                Err(e) => return Err(e.context("reading the CPU topology")),
            }
        };
        let mut sched = Scheduler::init(opts, &mut open_object, &topo)?;
        let exit = sched.run(&shutdown)?;
        let regroup = sched.regroup.take();
        drop(sched);
        if (exit.should_restart() || regroup.is_some()) && !shutdown.requested() {
            let wait = restarts.wait_before(std::time::Instant::now());
            if !wait.is_zero() {
                warn!(
                    "more than {} restarts within {} s: reloading in {:.1} s (the kernel's scheduler runs meanwhile)",
                    RestartBudget::MAX,
                    RestartBudget::WINDOW.as_secs(),
                    wait.as_secs_f64()
                );
                if !shutdown.sleep(wait) {
                    break;
                }
            }
            restarts.record(std::time::Instant::now());
            match regroup {
                Some((mode, why)) => {
                    info!("group accounting auto would now choose {} ({why}); reloading", mode.name())
                }
                // The EXIT line above says why: a CPU hotplug event during the load, or a CPU come on
                // line that was off line when the topology was read (src/bpf/hotplug.bpf.c).
                None => info!("the kernel asked for a restart (CPU hotplug); reloading"),
            }
            reloading = true;
            continue;
        }
        break;
    }
    Ok(())
}

fn main() {
    let opts = parse_opts();
    if opts.version {
        println!("{} {}", SCHEDULER_NAME, build_version());
        return;
    }
    if opts.help_stats {
        print!("{}", stats::HELP);
        let _ = stats::server_data().describe_meta(&mut std::io::stdout(), None);
        return;
    }
    for (flag, us) in [("--min-slice-us", opts.min_slice_us), ("--target-floor-us", opts.target_floor_us)] {
        if us > opts.rr_interval_ms * 1000 {
            eprintln!(
                "{SCHEDULER_NAME}: {flag} {us} is longer than --rr-interval-ms {} (see --help)",
                opts.rr_interval_ms
            );
            std::process::exit(2);
        }
    }
    if opts.stats_full && opts.stats.is_none() && opts.monitor.is_none() {
        eprintln!("{SCHEDULER_NAME}: --stats-full needs --stats SECS or --monitor SECS (see --help)");
        std::process::exit(2);
    }
    if opts.migration_delay_us > 0 && opts.freq_threshold == 0 {
        eprintln!(
            "{SCHEDULER_NAME}: --migration-delay-us needs --freq-threshold: without it no CPU counts as scaled (see --help)"
        );
        std::process::exit(2);
    }
    debug_assert!(opts.idle_bound_ms < WATCHDOG_MS && opts.max_round_ms < WATCHDOG_MS);
    if let Err(e) = init_log(opts.verbose) {
        eprintln!("{SCHEDULER_NAME}: cannot set up logging: {e}");
    }
    if let Err(e) = run(&opts) {
        eprintln!("{SCHEDULER_NAME}: error: {:#}", e);
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Opts, clap::Error> {
        cli::parse_from(std::iter::once("scx_vrq").chain(args.iter().copied()))
    }

    /// Every knob by name: adding a knob, or changing a default, changes this list on purpose. The list is
    /// knob-defaults.txt, the default knob values, whose git history is the history of the defaults that
    /// the README's results generator reads (bench/vrqbench/builds.py).
    const DEFAULTS: &str = include_str!("knob-defaults.txt");

    fn sorted(summary: &str) -> Vec<&str> {
        let mut v: Vec<&str> = summary.split_whitespace().collect();
        v.sort();
        v
    }

    #[test]
    fn defaults_by_name() {
        let o = parse(&[]).unwrap();
        assert_eq!(sorted(&o.knob_summary), sorted(DEFAULTS), "the default knob set changed");
        assert_eq!(o.rr_interval_ms, 6, "BFS rr_interval default");
        assert_eq!(o.yield_type, 1, "BFS yield_type default");
        assert!(o.idle_bound_ms < WATCHDOG_MS && o.max_round_ms < WATCHDOG_MS);
    }

    #[test]
    fn the_bfs_profile_turns_every_mechanism_beyond_bfs_off() {
        let o = parse(&["--profile", "bfs"]).unwrap();
        let expect = DEFAULTS
            .replace("queue=llc", "queue=global")
            .replace("target-latency-ms=2", "target-latency-ms=0")
            .replace("round-target-ms=12", "round-target-ms=0")
            .replace("short-run-us=6000", "short-run-us=0")
            .replace("short-run-renew=true", "short-run-renew=false")
            .replace("under-share-first=true", "under-share-first=false")
            .replace("sync-handoff=true", "sync-handoff=false")
            .replace("vfork-handoff=true", "vfork-handoff=false")
            .replace("preempt-local=true", "preempt-local=false")
            .replace("handoff-slice=true", "handoff-slice=false")
            .replace("stay-behind-kthread=true", "stay-behind-kthread=false")
            .replace("group-accounting=auto", "group-accounting=off")
            .replace("capacity-aware=true", "capacity-aware=false");
        assert_eq!(sorted(&o.knob_summary), sorted(&expect));
        assert_eq!(o.queue, QueueMode::Global);
        assert_eq!(o.group_accounting, GroupMode::Off);
        // the command line's own flags win over the profile's, wherever they stand
        let o = parse(&["--queue", "cpu", "--profile", "bfs", "--wake-credit", "25"]).unwrap();
        assert_eq!((o.queue, o.wake_credit, o.target_latency_ms), (QueueMode::Cpu, 25, 0));
    }

    #[test]
    fn each_profile_says_what_it_sets() {
        use clap::ValueEnum;
        for p in cli::Profile::value_variants() {
            let pv = p.to_possible_value().unwrap();
            let help = pv
                .get_help()
                .map(|h| h.to_string())
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            for pair in p.flags().chunks(2) {
                let said = format!("{} {}", pair[0], pair[1]);
                assert!(help.contains(&said), "profile {} sets {said} but its help does not say so", pv.get_name());
            }
        }
    }

    /// Every on/off flag -- the knobs and the others -- takes the three forms, and refuses anything but
    /// true and false; no other flag is a bare switch but the commands --version and --help-stats.
    #[test]
    fn on_off_flags_take_one_style() {
        let cmd = cli::command();
        let on_off: Vec<(String, String)> = cmd
            .get_arguments()
            .filter(|a| cli::is_on_off(a))
            .map(|a| (a.get_id().to_string(), a.get_long().unwrap().to_string()))
            .collect();
        for flag in [
            "sticky",
            "fork-depth-penalty",
            "short-run-renew",
            "stay-behind-kthread",
            "stats-full",
            "verbose",
            "relaxed-maps",
        ] {
            assert!(on_off.iter().any(|(_, f)| f == flag), "--{flag} is not an on/off flag");
        }
        let switches: Vec<&str> = cmd
            .get_arguments()
            .filter(|a| matches!(a.get_action(), clap::ArgAction::SetTrue | clap::ArgAction::SetFalse))
            .filter_map(|a| a.get_long())
            .collect();
        assert_eq!(switches, ["version", "help-stats"], "bare switches that are not commands");
        for (id, flag) in &on_off {
            let f = format!("--{flag}");
            let value = |argv: &[&str]| {
                let m = cmd.clone().try_get_matches_from(std::iter::once("scx_vrq").chain(argv.iter().copied()));
                m.map(|m| m.get_one::<bool>(id).copied())
            };
            for (args, want) in [
                (vec![f.clone()], true),
                (vec![format!("{f}=true")], true),
                (vec![format!("{f}=false")], false),
                (vec![f.clone(), "true".into()], true),
                (vec![f.clone(), "false".into()], false),
                // alone before another flag: true, and the next flag is still a flag
                (vec![f.clone(), "--queue".into(), "cpu".into()], true),
            ] {
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                assert!(parse(&argv).is_ok(), "{argv:?} refused");
                let got = value(&argv).unwrap_or_else(|e| panic!("{argv:?} refused: {e}"));
                assert_eq!(got, Some(want), "{argv:?}");
            }
            for bad in ["yes", "1", "on", ""] {
                let arg = format!("{f}={bad}");
                assert!(parse(&[&arg]).is_err(), "{arg} was accepted");
            }
            assert!(parse(&[&f, "maybe"]).is_err(), "{f} maybe was accepted");
            // --no-FLAG: refused, the message saying how to turn it off
            let no = format!("--no-{flag}");
            let msg = parse_error_message(&parse(&[&no]).expect_err(&format!("{no} was accepted")));
            assert!(msg.starts_with(&format!("scx_vrq: unexpected argument '{no}'")), "{msg}");
            assert!(msg.ends_with(&format!("\nscx_vrq: to turn {f} off: {f}=false\n")), "{msg}");
        }
        // the hint is for on/off flags only
        let msg = parse_error_message(&parse(&["--no-queue"]).unwrap_err());
        assert!(!msg.contains("to turn"), "{msg}");
    }

    /// A negative number is refused by the flag's range, naming the flag, not taken for a flag.
    #[test]
    fn negative_numbers_are_refused_by_their_range() {
        for a in cli::knob_args().iter().chain(
            cli::command()
                .get_arguments()
                .filter(|a| ["stats", "monitor", "exit-dump-len"].contains(&a.get_long().unwrap_or_default())),
        ) {
            let takes_number = a.get_value_parser().type_id() != clap::builder::ValueParser::bool().type_id()
                && a.get_possible_values().is_empty();
            if !takes_number {
                continue;
            }
            let flag = format!("--{}", a.get_long().unwrap());
            for argv in [vec![flag.clone(), "-1".to_string()], vec![format!("{flag}=-1")]] {
                let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                let e = parse(&argv).expect_err(&format!("{argv:?} accepted"));
                let msg = parse_error_message(&e);
                let first = msg.lines().next().unwrap();
                assert!(first.contains(&flag) && first.contains("-1"), "{argv:?}: {msg}");
                assert!(first.contains("is not in") || first.contains("is outside"), "{argv:?}: {msg}");
                assert!(!msg.contains("unexpected argument") && !msg.contains("invalid digit"), "{argv:?}: {msg}");
            }
        }
    }

    /// A bad command line gets clap's whole message: what is wrong, then what is valid or near.
    #[test]
    fn parse_errors_keep_clap_s_whole_message() {
        let msg = |args: &[&str]| parse_error_message(&parse(args).expect_err("accepted"));
        let m = msg(&["--queue", "node"]);
        assert!(m.starts_with("scx_vrq: invalid value 'node' for '--queue <MODE>'"), "{m}");
        assert!(m.contains("[possible values: global, llc, cpu]"), "{m}");
        let m = msg(&["--stat", "1"]);
        assert!(m.starts_with("scx_vrq: unexpected argument '--stat'"), "{m}");
        assert!(m.contains("similar argument exists: '--stats'"), "{m}");
        assert!(m.contains("Usage: scx_vrq"), "{m}");
        let m = msg(&["--group-accounting", "process"]);
        assert!(m.contains("[possible values: auto, off, thread, session, cgroup]"), "{m}");
        assert!(m.lines().count() > 1 && m.ends_with('\n') && !m.ends_with("\n\n"), "{m:?}");
    }

    #[test]
    fn the_version_names_the_commit() {
        assert_eq!(version_with_commit("0.1.0", "", false), "0.1.0");
        assert_eq!(version_with_commit("0.1.0", "", true), "0.1.0");
        assert_eq!(version_with_commit("0.1.0", "0123456789", false), "0.1.0-g0123456789");
        assert_eq!(version_with_commit("0.1.0", "0123456789", true), "0.1.0-g0123456789-dirty");
        let v = build_version();
        assert!(v.starts_with(env!("CARGO_PKG_VERSION")), "{v}");
        // Built in this checkout: the commit checked out now (build.rs reruns when HEAD moves).
        let head = std::process::Command::new("git")
            .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        if let Some(head) = head {
            let commit = env!("VRQ_GIT_COMMIT");
            assert!(commit.len() >= 7 && head.starts_with(commit), "built at {commit}, HEAD is {head}");
            assert!(v.contains(&format!("-g{commit}")), "{v}");
        }
    }

    /// Idle, the loader does not wake at all; a request is answered and a shutdown ends the wait as
    /// they come.
    #[test]
    fn the_stats_loop_sleeps_until_something_happens() {
        let shutdown = Shutdown::default();
        let (req_tx, req_rx) = crossbeam::channel::unbounded::<()>();
        let (res_tx, res_rx) = crossbeam::channel::unbounded::<u32>();
        start_stats_relay(req_rx, shutdown.events.clone()).unwrap();
        let checks = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let watched_looks = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (events, c, w) = (shutdown.events.clone(), checks.clone(), watched_looks.clone());
        let server = std::thread::spawn(move || {
            let before = thread_usage();
            let exited = |watched: bool| {
                w.fetch_add(watched as u64, std::sync::atomic::Ordering::SeqCst);
                c.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == u64::MAX
            };
            serve_stats(&events, &res_tx, exited, || 7).unwrap();
            let after = thread_usage();
            (after.0 - before.0, after.1 - before.1)
        });
        std::thread::sleep(Duration::from_millis(300));
        let t = std::time::Instant::now();
        req_tx.send(()).unwrap();
        assert_eq!(res_rx.recv_timeout(Duration::from_secs(5)), Ok(7));
        assert!(t.elapsed() < Duration::from_secs(1), "a request waited {:?}", t.elapsed());
        std::thread::sleep(Duration::from_millis(1500));
        let t = std::time::Instant::now();
        shutdown.fire();
        let (cpu, wakeups) = server.join().unwrap();
        assert!(t.elapsed() < Duration::from_secs(1), "the shutdown waited {:?}", t.elapsed());
        // one look for the exit at the start, one after the request: none while idle
        assert_eq!(checks.load(std::sync::atomic::Ordering::SeqCst), 2, "exit looks in 1.8 s");
        // a request is no Watcher event: only the first look re-reads what the Watcher follows
        assert_eq!(watched_looks.load(std::sync::atomic::Ordering::SeqCst), 1, "looks told of an event");
        assert!(wakeups <= 4, "the loop woke {wakeups} times in 1.8 s");
        assert!(cpu < Duration::from_millis(50), "the loop used {cpu:?} of CPU in 1.8 s");
    }

    /// A request made before the loop starts -- the server accepts from its launch, before the
    /// scheduler is attached -- is answered, not lost.
    #[test]
    fn a_request_before_the_loop_starts_is_answered() {
        let shutdown = Shutdown::default();
        let (req_tx, req_rx) = crossbeam::channel::unbounded::<()>();
        let (res_tx, res_rx) = crossbeam::channel::unbounded::<u32>();
        req_tx.send(()).unwrap();
        start_stats_relay(req_rx, shutdown.events.clone()).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let events = shutdown.events.clone();
        let server = std::thread::spawn(move || serve_stats(&events, &res_tx, |_| false, || 7).unwrap());
        assert_eq!(res_rx.recv_timeout(Duration::from_secs(5)), Ok(7), "the early request was dropped");
        shutdown.fire();
        server.join().unwrap();
    }

    /// The Watcher wakes the loop once when a Once source turns readable, and stops polling it (it stays
    /// readable: polled again, the thread would spin); at each write to a file followed by inotify; and
    /// not at all in between.
    #[test]
    fn the_watcher_wakes_the_loop_at_each_event_only() {
        let events = Arc::new(Events::default());
        let mut ends = [0; 2];
        assert_eq!(unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        let (exit_rx, exit_tx) = unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
        let dir = std::env::temp_dir().join(format!("vrq-watch-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("cgroup.subtree_control");
        std::fs::write(&file, "memory\n").unwrap();
        let watches = vec![Watch::Once(exit_rx), inotify_modify(file.to_str().unwrap()).unwrap()];
        let watcher = Watcher::start(watches, events.clone()).unwrap();
        let looks = || events.lock().looks;
        // one write(2), as systemd writes "+cpu" (std::fs::write would truncate first: a second event)
        let write = |text: &str| {
            use std::io::Write;
            std::fs::OpenOptions::new().write(true).open(&file).unwrap().write_all(text.as_bytes()).unwrap()
        };
        let wait_for = |n: u64| {
            let guard = events.lock();
            let (guard, _) = events.changed.wait_timeout_while(guard, Duration::from_secs(5), |s| s.looks < n).unwrap();
            guard.looks
        };
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(looks(), 0, "a look with nothing changed");
        write("+cpu\n");
        assert_eq!(wait_for(1), 1, "a write to the watched file");
        assert_eq!(unsafe { libc::write(exit_tx.as_raw_fd(), b"x".as_ptr().cast(), 1) }, 1);
        assert_eq!(wait_for(2), 2, "the exit");
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(looks(), 2, "the exit, still readable, reported again");
        write("-cpu\n");
        assert_eq!(wait_for(3), 3, "a second write");
        let t = std::time::Instant::now();
        drop(watcher);
        assert!(t.elapsed() < Duration::from_secs(1), "the watcher took {:?} to stop", t.elapsed());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The loop looks for the exit at each Watcher event, and ends when it finds it.
    #[test]
    fn the_loop_looks_at_each_watcher_event() {
        let shutdown = Shutdown::default();
        let (res_tx, _res_rx) = crossbeam::channel::unbounded::<u32>();
        let events = shutdown.events.clone();
        std::thread::spawn(move || {
            for _ in 0..5 {
                std::thread::sleep(Duration::from_millis(20));
                events.update(|s| s.looks += 1);
            }
        });
        let (mut checks, mut watched_looks) = (0, 0);
        serve_stats(
            &shutdown.events,
            &res_tx,
            |watched| {
                checks += 1;
                watched_looks += watched as u32;
                checks > 5
            },
            || 0,
        )
        .unwrap();
        assert_eq!(checks, 6, "one look at the start, one per event");
        assert_eq!(watched_looks, 6, "each look but told of its event");
    }

    #[test]
    fn a_shutdown_ends_a_sleep_at_once() {
        let shutdown = Shutdown::default();
        assert!(shutdown.sleep(Duration::from_millis(10)), "no shutdown yet");
        let fire = shutdown.clone();
        let t = std::time::Instant::now();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            fire.fire();
        });
        assert!(!shutdown.sleep(Duration::from_secs(3600)));
        assert!(t.elapsed() < Duration::from_secs(5));
        assert!(shutdown.requested() && !shutdown.sleep(Duration::from_secs(3600)));
    }

    /// This thread's CPU time and context switches so far (getrusage RUSAGE_THREAD).
    fn thread_usage() -> (Duration, i64) {
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) }, 0);
        let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
        (tv(ru.ru_utime) + tv(ru.ru_stime), ru.ru_nvcsw + ru.ru_nivcsw)
    }

    #[test]
    fn flags_out_of_range_are_refused() {
        for bad in [
            &["--rr-interval-ms", "0"][..],
            &["--rr-interval-ms", "1001"],
            &["--queue", "node"],
            &["--max-round-ms", "9"],
            &["--min-slice-us", "49"],
            &["--idle-bound-ms", "5001"],
            &["--stats", "0.01"],
            &["--monitor", "x"],
            &["--yield-type", "3"],
            &["--freq-threshold", "101"],
            &["--freq-threshold", "-1"],
            &["--migration-delay-us", "10001"],
            &["--sticky", "yes"],
            &["--sticky=1"],
            &["--fork-depth-penalty=yes"],
            &["--stats-full=yes"],
            &["-v", "2"],
            &["--rr-interval-ms", "-1"],
            &["--exit-dump-len", "-1"],
            &["--profile", "server"],
            &["--queue", "cpu", "--queue", "llc"],
            &["--profile", "bfs", "--wake-credit", "10", "--wake-credit", "20"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
        for good in [
            &["--rr-interval-ms", "1"][..],
            &["--rr-interval-ms", "1000"],
            &["--queue", "cpu"],
            &["--freq-threshold", "100", "--migration-delay-us", "10000", "--sticky"],
            &["--sticky", "--fork-depth-penalty=true", "--short-run-renew", "false"],
            &["--stats", "1", "--stats-full"],
            &["--monitor", "1", "--stats-full"],
            &["--stats", "1", "--monitor", "2"],
        ] {
            assert!(parse(good).is_ok(), "{good:?} was refused");
        }
    }

    /// Each knob's `const volatile` in src/bpf/main.bpf.c: its flag in snake_case, with a time unit
    /// of ms or µs given in ns; and no other `const volatile` there but the loader's topology.
    #[test]
    fn bpf_knobs_are_named_as_their_flags() {
        let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/bpf/main.bpf.c")).unwrap();
        let mut bpf: Vec<String> = src
            .lines()
            .filter_map(|l| l.strip_prefix("const volatile "))
            .map(|l| {
                let decl = l.split(['=', ';', '[']).next().unwrap();
                decl.split_whitespace().last().unwrap().to_string()
            })
            .filter(|name| !["nr_cpus", "cpu_topo", "cpu_in_topology"].contains(&name.as_str()))
            .collect();
        let mut flags: Vec<String> = cli::knob_args()
            .iter()
            .map(|a| {
                let name = a.get_long().unwrap().replace('-', "_");
                match name.strip_suffix("_ms").or(name.strip_suffix("_us")) {
                    Some(stem) => format!("{stem}_ns"),
                    None => name,
                }
            })
            .collect();
        bpf.sort();
        flags.sort();
        assert_eq!(bpf, flags, "src/bpf/main.bpf.c's knobs against src/cli.rs's flags");
    }

    /// --group-accounting auto: cgroup exactly where the root's subtree_control enables cpu; an explicit
    /// mode stays as given.
    #[test]
    fn auto_group_accounting_follows_the_cpu_controller() {
        let mounts = "proc /proc proc rw 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n";
        let control = |text: &'static str| {
            move |path: &str| {
                assert_eq!(path, "/sys/fs/cgroup/cgroup.subtree_control");
                Ok(text.to_string())
            }
        };
        let pick = |mode: GroupMode, mounts: &str, text: &'static str| mode.resolve(mounts, control(text)).0;
        assert_eq!(pick(GroupMode::Auto, mounts, "cpuset cpu io memory pids\n"), GroupMode::Cgroup);
        assert_eq!(pick(GroupMode::Auto, mounts, "cpuset io memory pids\n"), GroupMode::Session);
        assert_eq!(pick(GroupMode::Auto, mounts, ""), GroupMode::Session);
        assert_eq!(pick(GroupMode::Auto, "proc /proc proc rw 0 0\n", "cpu"), GroupMode::Session, "no cgroup2");
        let unreadable = GroupMode::Auto.resolve(mounts, |_| Err(std::io::Error::from(std::io::ErrorKind::NotFound)));
        assert_eq!(unreadable.0, GroupMode::Session);
        assert!(unreadable.1.contains("unreadable"), "{}", unreadable.1);
        let (mode, why) = GroupMode::Auto.resolve(mounts, control("cpu"));
        assert_eq!(
            (mode, why.as_str()),
            (GroupMode::Cgroup, "auto: the cpu controller is enabled in /sys/fs/cgroup/cgroup.subtree_control")
        );
        // a mount elsewhere (cgroup v1's hybrid layout puts v2 at .../unified)
        let hybrid = "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";
        let (mode, why) = GroupMode::Auto.resolve(hybrid, |p: &str| {
            Ok(if p.starts_with("/sys/fs/cgroup/unified/") { "cpu".into() } else { String::new() })
        });
        assert_eq!(mode, GroupMode::Cgroup, "{why}");
        for m in [GroupMode::Off, GroupMode::Thread, GroupMode::Session, GroupMode::Cgroup] {
            assert_eq!(pick(m, "", ""), m);
            assert_eq!(pick(m, mounts, "cpu"), m);
        }
        assert_eq!(parse(&[]).unwrap().group_accounting, GroupMode::Auto, "the default");
    }

    #[test]
    fn cpu_ids_past_the_bpf_arrays_are_refused() {
        assert!(refuse_unsupported_cpus(0..MAX_CPUS).is_ok());
        assert!(refuse_unsupported_cpus([3, 0, 7].into_iter()).is_ok());
        let err = refuse_unsupported_cpus([0, MAX_CPUS].into_iter()).unwrap_err().to_string();
        assert!(err.contains(&format!("CPU {MAX_CPUS}")) && err.contains(&format!("0-{}", MAX_CPUS - 1)), "{err}");
        assert!(refuse_unsupported_cpus(std::iter::empty()).is_ok());
    }

    #[test]
    fn queue_modes_match_the_bpf_enum() {
        assert_eq!(QueueMode::Global.bpf_value(), bpf_intf::vrq_queue_mode_VRQ_QUEUE_GLOBAL);
        assert_eq!(QueueMode::Llc.bpf_value(), bpf_intf::vrq_queue_mode_VRQ_QUEUE_LLC);
        assert_eq!(QueueMode::Cpu.bpf_value(), bpf_intf::vrq_queue_mode_VRQ_QUEUE_CPU);
    }

    #[test]
    fn restart_storms_are_rate_bounded() {
        let mut b = RestartBudget::default();
        let t0 = std::time::Instant::now();
        for i in 0..RestartBudget::MAX {
            let at = t0 + Duration::from_millis(i as u64);
            assert!(b.wait_before(at).is_zero(), "restart {i} delayed");
            b.record(at);
        }
        let wait = b.wait_before(t0 + Duration::from_secs(1));
        assert!(
            wait > Duration::from_secs(58) && wait <= RestartBudget::WINDOW,
            "restart past the budget not delayed until the window frees: {wait:?}"
        );
        assert!(b.wait_before(t0 + RestartBudget::WINDOW + Duration::from_secs(2)).is_zero(), "budget never refills");
    }

    #[test]
    fn counters_land_in_their_fields() {
        let n = bpf_intf::vrq_stat_VRQ_NR_STATS as usize;
        let counters: Vec<u64> = (0..n as u64).map(|i| 1000 + i).collect();
        let m = Metrics::from_counters(&counters);
        assert_eq!(m.dispatch_local, 1000 + bpf_intf::vrq_stat_VRQ_STAT_DISPATCH_LOCAL as u64);
        assert_eq!(m.sel_node, 1000 + bpf_intf::vrq_stat_VRQ_STAT_SEL_NODE as u64);
        assert_eq!(m.niffies_rebase, 1000 + bpf_intf::vrq_stat_VRQ_STAT_NIFFIES_REBASE as u64);
    }
}
