// Statistics of scx_vrq, served over scx_stats (`--stats SECS`, `--monitor SECS`, or any scx_stats
// client on STATS_SOCKET). Each counter is the number of times one scheduling path ran
// during the interval; see enum vrq_stat in src/bpf/intf.h for where each is counted. `lat` holds
// the interval's wait and turn-length histograms per class of task (src/lat_hist.rs).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use anyhow::Result;
use log::info;
use scx_stats::prelude::*;
use scx_stats_derive::Stats;
use scx_stats_derive::stat_doc;
use serde::Deserialize;
use serde::Serialize;

use crate::Shutdown;
use crate::lat_hist;
use crate::lat_hist::LatClass;
use crate::lat_hist::human_us;

/// Where a running scx_vrq serves its statistics (scx_stats' default path for the root scheduler).
pub const STATS_SOCKET: &str = "/var/run/scx/root/stats";

/// What --help-stats prints before the field list.
pub const HELP: &str = "\
--stats/--monitor first print the running scheduler's build, its group accounting (what
--group-accounting auto chose at load) and knobs, then one line per interval:
  queued N (max M)   tasks waiting in all queues at the last dispatches (deepest any queue has been)
  dispatch N/s       tasks put on a CPU: from its own queue, another queue, handed to an idle CPU, kept
  preempt N/s        wake-up preemptions, by a kick or directly (preempt_kicks + preempt_direct)
  wake p50 p99       how long normal tasks waited from their wake-up until they ran
  schedidle N        SCHED_IDLE tasks run because they waited past --idle-bound-ms
  kthread N/s        kernel threads woken (queued before user tasks until they sleep or use up
                     their slice)
--stats-full prints every counter below instead, and per class of task (normal, batch, sched_idle,
kthread) the waits after a wake-up and after a deschedule while runnable (requeued), and the turns'
lengths (a turn: from running to stopping on a CPU).
Latencies come from per-CPU log2 histograms (bucket 0: < 1 us, bucket b: 2^(b-1) to 2^b us, the last
one 16.8 s and more, shown as 33.6 s): a percentile is the upper edge of the bucket it falls in (at
most this), max is the upper edge of the highest non-empty bucket. Counts are per interval.

";

/// Declares the counter fields once, in blocks by concern: the struct, its conversion from the BPF
/// counter array (indexed by enum vrq_stat), its interval delta and the --stats-full lines (each
/// block's name, then each counter's label and value) all come from this one list.
macro_rules! vrq_metrics {
    ($( $block:literal => { $( $field:ident = $idx:ident, $label:literal : $desc:literal ),* $(,)? } ),* $(,)?) => {
        #[stat_doc]
        #[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
        #[stat(top)]
        pub struct Metrics {
            #[stat(desc = "The running scheduler's build: version, git commit (-dirty: built from changed sources), target")]
            #[serde(default)]
            pub version: String,
            #[stat(desc = "Every knob as set, flag=value")]
            #[serde(default)]
            pub knobs: String,
            #[stat(desc = "Group accounting in effect (--group-accounting; auto names what it chose at load: cgroup or session)")]
            #[serde(default)]
            pub group_accounting: String,
            #[stat(desc = "Run-queue mode (global, llc or cpu)")]
            pub queue_mode: String,
            #[stat(desc = "Number of run queues")]
            pub nr_queues: u64,
            #[stat(desc = "Tasks waiting in all queues at the last dispatches")]
            pub nr_queued: u64,
            #[stat(desc = "Deepest any queue has been since load")]
            pub max_queued: u64,
            #[stat(desc = "cgroups known to --group-accounting cgroup now (created or found at load, not yet removed)")]
            pub cgroups: u64,
            $( $(
                #[stat(desc = $desc)]
                pub $field: u64,
            )* )*
            #[stat(desc = "Waits and turn lengths per class of task (normal, batch, sched_idle, kthread): log2 histograms and their percentiles")]
            pub lat: BTreeMap<String, LatClass>,
        }

        impl Metrics {
            pub fn from_counters(c: &[u64]) -> Self {
                Self {
                    $( $( $field: c[crate::bpf_intf::$idx as usize], )* )*
                    ..Default::default()
                }
            }

            /// Every counter by block, in the list's order: (block, [(label, value)]).
            fn counter_blocks(&self) -> Vec<(&'static str, Vec<(&'static str, u64)>)> {
                vec![ $( ($block, vec![ $( ($label, self.$field), )* ]), )* ]
            }

            /// Counters and histograms become per-interval deltas; gauges (queue depths, mode) stay
            /// as they are.
            fn delta(&self, prev: &Self) -> Self {
                Self {
                    $( $( $field: self.$field.wrapping_sub(prev.$field), )* )*
                    lat: lat_hist::delta(&self.lat, &prev.lat),
                    ..self.clone()
                }
            }
        }
    };
}

vrq_metrics! {
    "dsp" => {
        dispatch_local = vrq_stat_VRQ_STAT_DISPATCH_LOCAL, "local": "Tasks dispatched from the CPU's own queue",
        direct_idle = vrq_stat_VRQ_STAT_DIRECT_IDLE, "direct": "Woken tasks handed straight to the idle CPU chosen for them (by select_cpu; by enqueue when it is the CPU handling the wake-up or the only one the task may run on, --preempt-local)",
        dispatch_steal = vrq_stat_VRQ_STAT_DISPATCH_STEAL, "steal": "Tasks taken from another queue after a lockless peek",
        steal_fail = vrq_stat_VRQ_STAT_STEAL_FAIL, "fail": "Peeked tasks gone or unmovable when taken",
        peeks = vrq_stat_VRQ_STAT_PEEK, "peek": "Lockless reads of other queues' heads",
        keep_last = vrq_stat_VRQ_STAT_KEEP_LAST, "keep": "Tasks that just ran kept on their CPU: no queue head was earlier (dispatch, then enqueue with SCX_ENQ_LAST)",
        renewed_on_tick = vrq_stat_VRQ_STAT_RENEWED_ON_TICK, "ontick": "Tasks renewed in place on the tick, their slice used up with nothing waiting (no reschedule)",
    },
    "sel" => {
        sel_prev = vrq_stat_VRQ_STAT_SEL_PREV, "prev": "Wake-ups placed on the idle previous CPU",
        sel_smt = vrq_stat_VRQ_STAT_SEL_SMT, "smt": "Wake-ups placed on an idle SMT sibling",
        sel_llc = vrq_stat_VRQ_STAT_SEL_LLC, "llc": "Wake-ups placed on an idle CPU sharing the LLC",
        sel_pkg = vrq_stat_VRQ_STAT_SEL_PKG, "pkg": "Wake-ups placed on an idle CPU of the same package",
        sel_node = vrq_stat_VRQ_STAT_SEL_NODE, "node": "Wake-ups placed on an idle CPU of the same node",
        sel_any = vrq_stat_VRQ_STAT_SEL_ANY, "any": "Wake-ups placed on any other idle CPU",
        sel_busy = vrq_stat_VRQ_STAT_SEL_BUSY, "busy": "Wake-ups with no idle CPU allowed",
    },
    "" => {
        enqueues = vrq_stat_VRQ_STAT_ENQUEUE, "enq": "Tasks queued",
        renewals = vrq_stat_VRQ_STAT_RENEWAL, "renew": "Renewals: a new slice and a new deadline from now (slice used up, or woken with the deadline passed)",
        niffies_rebase = vrq_stat_VRQ_STAT_NIFFIES_REBASE, "rebase": "Deadlines carried over between queue clocks",
        kernel_wakeups = vrq_stat_VRQ_STAT_KERNEL_WAKEUP, "kthread": "Kernel threads woken, queued before user tasks until they sleep or use up their slice",
        yields = vrq_stat_VRQ_STAT_YIELD, "yield": "sched_yield() calls (what they do: --yield-type)",
        sched_idle_rescues = vrq_stat_VRQ_STAT_SCHED_IDLE_RESCUE, "schedidle": "SCHED_IDLE tasks run because they waited past the bound (--idle-bound-ms)",
    },
    "preempt" => {
        preempt_kicks = vrq_stat_VRQ_STAT_PREEMPT_KICK, "kick": "Wake-up preemptions by a kick (SCX_KICK_PREEMPT): of the CPU running the latest priodl (BFS), or of the CPU handling the wake-up (--preempt-local); the direct ones are not kicks",
        preempt_direct = vrq_stat_VRQ_STAT_PREEMPT_DIRECT, "direct": "Wake-up preemptions without a kick (--preempt-local): the woken task put straight on the CPU handling its wake-up, or on the only CPU it may run on, with SCX_ENQ_PREEMPT, as it would head its queue, so that CPU reschedules in the wake-up's own path. All wake-up preemptions: preempt_kicks + preempt_direct",
        preempt_local = vrq_stat_VRQ_STAT_PREEMPT_LOCAL, "local": "Wake-up preemptions of the CPU handling the wake-up (--preempt-local), by a kick or directly",
        no_preempt = vrq_stat_VRQ_STAT_NO_PREEMPT, "nopreempt": "Wake-ups that may not preempt (SCHED_BATCH, sync)",
        idle_kicks = vrq_stat_VRQ_STAT_IDLE_KICK, "idlekick": "Idle CPUs woken for a queued task",
        stayed_behind_kthread = vrq_stat_VRQ_STAT_STAYED_BEHIND_KTHREAD, "kthreadstay": "Tasks preempted by a kernel thread bound to their CPU, with nothing else waiting: put back on that CPU behind the kernel thread, so no other CPU takes them (--stay-behind-kthread)",
    },
    "goidle" => {
        goidle_idle = vrq_stat_VRQ_STAT_GOIDLE_IDLE, "idle": "CPU idle and nothing found: wasted wake-up (idle->idle)",
        goidle_blocked = vrq_stat_VRQ_STAT_GOIDLE_BLOCKED, "blocked": "CPU goes idle after the previous task blocked",
        goidle_needother = vrq_stat_VRQ_STAT_GOIDLE_NEEDOTHER, "needother": "CPU goes idle; previous task may not stay on it",
        idle_waits = vrq_stat_VRQ_STAT_IDLE_WAIT, "idlewait": "Waits that lasted past the time to wake a CPU while a CPU the task may run on sat idle: work not conserved (a task on one CPU's local queue that another could have run)",
        idle_wait_us = vrq_stat_VRQ_STAT_IDLE_WAIT_US, "idlewaitus": "The time those waits spent so beyond that bound, microseconds",
    },
    "slice" => {
        renewal_shrunk = vrq_stat_VRQ_STAT_RENEWAL_SHRUNK, "shrunk": "Renewals whose slice was shrunk because a queue is long (--max-round-ms)",
        floor_gave_way = vrq_stat_VRQ_STAT_FLOOR_GAVE_WAY, "floorgave": "Renewals whose slice went below --min-slice-us: the floor would have held a round past half the watchdog",
        round_over = vrq_stat_VRQ_STAT_ROUND_OVER, "roundover": "Renewals whose slice is the shortest the slice timer ends, with the round still past half the watchdog",
        remainder_cut = vrq_stat_VRQ_STAT_REMAINDER_CUT, "cut": "Deadlines kept whose slice left was longer than the queue allows now (a long queue, or the target latency's shorter turns): the remainder cut to it",
        turn_start_cut = vrq_stat_VRQ_STAT_TURN_START_CUT, "startcut": "Slices cut as their turn started, given while the queue was shorter: cut to what it allows now",
        slice_timer = vrq_stat_VRQ_STAT_SLICE_TIMER, "slicetimer": "Slices shorter than rr_interval ended by the slice timer before the next tick",
    },
    "latency" => {
        target_shortened = vrq_stat_VRQ_STAT_TARGET_SHORTENED, "target": "Renewals whose slice was shortened by the target latency: a turn of its faster clock (--target-latency-ms)",
        turn_ended = vrq_stat_VRQ_STAT_TURN_ENDED, "turnend": "Turns ended for a woken task that waits: they had lasted the turn the latency waiters set (--target-latency-ms)",
        turn_over_dispatch = vrq_stat_VRQ_STAT_TURN_OVER_DISPATCH, "turnover": "Turns over (--target-latency-ms) found when their task competed for its CPU again in dispatch, after a turn-end kick or a preemption: the slice renewed there, so the task competes with a new deadline rather than keep the CPU on its old one",
        short_run_waits = vrq_stat_VRQ_STAT_SHORT_RUN_WAIT, "shortrunwait": "Short runners (--short-run-us) queued again, not woken, that counted as latency waiters toward the target latency",
        short_run_renews = vrq_stat_VRQ_STAT_SHORT_RUN_RENEW, "shortrenew": "Short runners whose run ended with less slice left than their average run, the slice renewed so the next run is not cut off (--short-run-renew)",
        under_share = vrq_stat_VRQ_STAT_UNDER_SHARE, "undershare": "Wake-ups of tasks that had used less CPU than their share, placed first: a deadline two nice-0 offsets earlier than their own from now, one offset before now at nice 0 (--under-share-first)",
        handoff_slices = vrq_stat_VRQ_STAT_HANDOFF_SLICE, "handoff": "Long runners preempted by the task they woke whose place was kept and whose next run got a whole slice (--handoff-slice)",
        slice_repaid = vrq_stat_VRQ_STAT_SLICE_REPAID, "slicerepaid": "Renewals whose new slice was cut by the CPU time the task ran beyond the slices given (a slice's overrun to the tick, --handoff-slice's top-ups): every task gets exactly the slices its deadlines give it",
        wake_credit = vrq_stat_VRQ_STAT_WAKE_CREDIT, "wakecredit": "Wake-ups with the deadline passed given a backdated one (--wake-credit)",
        sync_handoff = vrq_stat_VRQ_STAT_SYNC_HANDOFF, "synchandoff": "Sync wake-ups run on the waker's CPU (--sync-handoff)",
        sync_handoff_ended = vrq_stat_VRQ_STAT_SYNC_HANDOFF_ENDED, "syncended": "Sync hand-offs whose waker still ran at the next tick: its slice ended there so that the wakee, which no other CPU could take, runs (--sync-handoff)",
        vfork_handoff = vrq_stat_VRQ_STAT_VFORK_HANDOFF, "vforkhandoff": "vfork children run on their parent's CPU, which the parent leaves until the child execs or exits (--vfork-handoff)",
        clock_miscount = vrq_stat_VRQ_STAT_CLOCK_MISCOUNT, "clockmiscount": "Target-latency clock updates that found the count of latency waiters below 0: a bookkeeping defect, always 0",
    },
    "group" => {
        group_stretched = vrq_stat_VRQ_STAT_GROUP_STRETCHED, "stretched": "Deadline offsets stretched 1.5x or more by group accounting (other groups competing)",
        depth_stretched = vrq_stat_VRQ_STAT_DEPTH_STRETCHED, "depth": "Deadline offsets stretched by the fork-depth penalty",
    },
    "freq" => {
        sel_scaled = vrq_stat_VRQ_STAT_SEL_SCALED, "scaled": "Wake-ups placed on a frequency-scaled idle CPU",
    },
    "cap" => {
        sel_cap_big = vrq_stat_VRQ_STAT_SEL_CAP_BIG, "big": "Heavy or latency-sensitive wake-ups placed on an idle big CPU, searched before the little ones at its distance (--capacity-aware)",
        sel_cap_little = vrq_stat_VRQ_STAT_SEL_CAP_LITTLE, "little": "Background wake-ups (nice above 0, SCHED_IDLE) placed on an idle little CPU, searched before the big ones at its distance (--capacity-aware)",
        sel_cap_other = vrq_stat_VRQ_STAT_SEL_CAP_OTHER, "other": "Wake-ups with a capacity preference placed on the other kind of idle CPU: none of theirs was idle at that distance (--capacity-aware)",
        cap_changed = vrq_stat_VRQ_STAT_CAP_CHANGED, "changed": "CPUs seen to change between big and little capacity after load (--capacity-aware)",
    },
    "delay" => {
        delay_placed = vrq_stat_VRQ_STAT_DELAY_PLACED, "placed": "Woken/forked tasks kept on the waker's fast CPU, not a scaled idle one",
        delay_ran_before = vrq_stat_VRQ_STAT_DELAY_RAN_BEFORE, "ran": "Delay-placed tasks that ran before the delay was up",
        delay_migrated = vrq_stat_VRQ_STAT_DELAY_MIGRATED, "migrated": "Delay-placed tasks still waiting when the delay ran out",
    },
    "sticky" => {
        sticky_set = vrq_stat_VRQ_STAT_STICKY_SET, "set": "Tasks descheduled while runnable, made sticky to their CPU",
        sticky_kept = vrq_stat_VRQ_STAT_STICKY_KEPT, "kept": "Sticky tasks that ran again on their CPU",
        sticky_passed = vrq_stat_VRQ_STAT_STICKY_PASSED, "passed": "Heads sticky to other CPUs passed over as later",
        sticky_stolen = vrq_stat_VRQ_STAT_STICKY_STOLEN, "stolen": "Sticky tasks that ran on another CPU",
    },
    "cgroup" => {
        cgroup_stretched = vrq_stat_VRQ_STAT_CGROUP_STRETCHED, "stretched": "Deadlines given a cgroup stretch of more than one nice-0 offset: their cgroup has more runnable tasks than its cpu.weight share of the CPUs (--group-accounting cgroup)",
        cgroup_lagged = vrq_stat_VRQ_STAT_CGROUP_LAGGED, "lagged": "Deadlines brought earlier because their cgroup was behind the furthest one in virtual time (CPU used over its share)",
        cgroup_moves = vrq_stat_VRQ_STAT_CGROUP_MOVE, "moves": "Tasks moved between cgroups",
        cgroup_inits = vrq_stat_VRQ_STAT_CGROUP_INIT, "created": "cgroups created, or found when the scheduler loaded",
        cgroup_exits = vrq_stat_VRQ_STAT_CGROUP_EXIT, "removed": "cgroups removed",
        cgroup_untracked = vrq_stat_VRQ_STAT_CGROUP_UNTRACKED, "untracked": "cgroups beyond the table's 65,536 entries: their tasks compete as the root's",
        cgroup_idle_runs = vrq_stat_VRQ_STAT_CGROUP_IDLE_RUN, "idle": "Renewals of tasks in a cpu.idle cgroup, which compete as SCHED_IDLE tasks",
    },
    "release" => {
        cpu_released = vrq_stat_VRQ_STAT_CPU_RELEASED, "released": "A CPU taken by a higher scheduling class (real-time, deadline): its local queue handed back",
        cpu_reacquired = vrq_stat_VRQ_STAT_CPU_REACQUIRED, "reacquired": "... and given back to scx_vrq",
        reenqueued = vrq_stat_VRQ_STAT_REENQUEUED, "reenqueued": "Tasks handed back from a taken CPU's local queue and queued again to run elsewhere",
        keep_served = vrq_stat_VRQ_STAT_KEEP_SERVED, "kept": "Tasks kept on a CPU a higher class waits for, by their slice: the kernel's sched_ext deadline server runs them there",
    },
    "hotplug" => {
        cpu_online = vrq_stat_VRQ_STAT_CPU_ONLINE, "online": "CPUs that came on line while loaded, kept without a restart (CPU hotplug)",
        cpu_offline = vrq_stat_VRQ_STAT_CPU_OFFLINE, "offline": "CPUs that went off line while loaded, kept without a restart (CPU hotplug)",
    },
}

impl Metrics {
    /// One line per interval, the figures a user watches: queue depth, dispatches and wake-up
    /// preemptions per second, the wake-up wait of normal tasks, SCHED_IDLE tasks run by the bound,
    /// kernel-thread wake-ups.
    fn format_line<W: Write>(&self, w: &mut W, secs: f64) -> Result<()> {
        let rate = |n: u64| (n as f64 / secs.max(1e-3)).round() as u64;
        let normal = self.lat.get(lat_hist::CLASS_NAMES[0]).cloned().unwrap_or_default();
        writeln!(
            w,
            "[{}] queued {:>3} (max {}) | dispatch {:>6}/s preempt {:>5}/s | wake p50 {:>6} p99 {:>6} | schedidle {} kthread {}/s",
            crate::SCHEDULER_NAME,
            self.nr_queued,
            self.max_queued,
            rate(self.dispatch_local + self.dispatch_steal + self.direct_idle + self.keep_last),
            rate(self.preempt_kicks + self.preempt_direct),
            human_us(normal.wake_p50_us),
            human_us(normal.wake_p99_us),
            self.sched_idle_rescues,
            rate(self.kernel_wakeups),
        )?;
        Ok(())
    }

    /// Every counter, and the wait and turn-length percentiles of each class of task that ran.
    fn format_full<W: Write>(&self, w: &mut W) -> Result<()> {
        const WIDTH: usize = 110;
        const INDENT: &str = "          ";
        let mut line = format!(
            "[{}] {} q:{} queued:{}/{}",
            crate::SCHEDULER_NAME,
            self.queue_mode,
            self.nr_queues,
            self.nr_queued,
            self.max_queued
        );
        if self.cgroups > 0 {
            line.push_str(&format!(" cgroups:{}", self.cgroups));
        }
        // A block ("| name label:value ...") goes on the current line if it fits in WIDTH, else it
        // starts the next line, indented; only a block longer than a line is split.
        for (block, counters) in self.counter_blocks() {
            let tokens: Vec<String> = counters.iter().map(|(label, value)| format!("{label}:{value}")).collect();
            let head = if block.is_empty() { "|".to_string() } else { format!("| {block}") };
            let block_len = head.len() + tokens.iter().map(|t| t.len() + 1).sum::<usize>();
            if line.len() + 1 + block_len > WIDTH {
                writeln!(w, "{line}")?;
                line = format!("{INDENT}{}", head.trim_start_matches('|').trim_start());
            } else {
                line.push(' ');
                line.push_str(&head);
            }
            for token in tokens {
                if line.len() + 1 + token.len() > WIDTH {
                    writeln!(w, "{line}")?;
                    line = format!("{INDENT}  {token}");
                } else {
                    if !line.ends_with(' ') {
                        line.push(' ');
                    }
                    line.push_str(&token);
                }
            }
        }
        writeln!(w, "{line}")?;
        for (name, c) in &self.lat {
            if c.wake_n + c.requeue_n + c.turn_n == 0 {
                continue;
            }
            writeln!(
                w,
                "          {:<10} wake n:{} p50:{} p99:{} max:{} | requeued n:{} p50:{} p99:{} max:{} | turn n:{} p50:{} p99:{} max:{}",
                name,
                c.wake_n,
                human_us(c.wake_p50_us),
                human_us(c.wake_p99_us),
                human_us(c.wake_max_us),
                c.requeue_n,
                human_us(c.requeue_p50_us),
                human_us(c.requeue_p99_us),
                human_us(c.requeue_max_us),
                c.turn_n,
                human_us(c.turn_p50_us),
                human_us(c.turn_p99_us),
                human_us(c.turn_max_us),
            )?;
        }
        Ok(())
    }
}

/// Serve the statistics at `path`: scx_stats' server, with the socket and its folder root's alone
/// whatever the umask -- they tell what runs on the machine, and the server itself sets no mode.
/// Folders missing on the way are made 0700; the socket's own folder (this scheduler's: an earlier
/// run, under another umask, may have left it) is set to 0700 before the socket is bound in it, and
/// the socket to 0600 once bound. A folder above it that exists already keeps its mode (/run/scx is
/// shared by the sched_ext project's schedulers; the unit's RuntimeDirectoryMode sets it).
pub fn launch_server(path: &Path) -> Result<StatsServer<(), Metrics>> {
    use std::os::unix::fs::DirBuilderExt;
    use std::os::unix::fs::PermissionsExt;
    let private = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("setting the mode of {} to {mode:o}", p.display()))
    };
    let dir = path.parent().context("the statistics socket's path has no folder")?;
    let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).collect();
    for d in missing.iter().rev() {
        std::fs::DirBuilder::new().mode(0o700).create(d).with_context(|| format!("creating {}", d.display()))?;
        private(d, 0o700)?;
    }
    private(dir, 0o700)?;
    let server = StatsServer::new(server_data()).set_path(path).launch()?;
    private(path, 0o600)?;
    Ok(server)
}

pub fn server_data() -> StatsServerData<(), Metrics> {
    let open: Box<dyn StatsOpener<(), Metrics>> = Box::new(move |(req_ch, res_ch)| {
        req_ch.send(())?;
        let mut prev = res_ch.recv()?;

        let read: Box<dyn StatsReader<(), Metrics>> = Box::new(move |_args, (req_ch, res_ch)| {
            req_ch.send(())?;
            let cur = res_ch.recv()?;
            let delta = cur.delta(&prev);
            prev = cur;
            delta.to_json()
        });

        Ok(read)
    });

    StatsServerData::new()
        .add_meta(LatClass::meta())
        .add_meta(Metrics::meta())
        .add_ops("top", StatsOps { open, close: None })
}

/// Print the statistics of the running scx_vrq every `intv` until shutdown: first the scheduler's
/// build and knobs (again whenever they change: a restart), then one line per interval, or with
/// `full` every counter and the latency of each class of task.
pub fn monitor(intv: Duration, full: bool, shutdown: &Shutdown) -> Result<()> {
    monitor_at(Path::new(STATS_SOCKET), intv, full, shutdown, &mut std::io::stdout())
}

/// No scheduler serves statistics there yet (or it is restarting): worth waiting for. Anything else
/// -- no permission above all -- will not pass by waiting.
fn not_there_yet(e: &anyhow::Error) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|e| matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused))
}

/// The running scheduler's build (as `scx_vrq --version` gives it) and the group accounting in effect
/// (what --group-accounting auto chose), then its knobs, wrapped.
fn write_build<W: Write>(out: &mut W, version: &str, group: &str, knobs: &str) -> Result<()> {
    const WIDTH: usize = 110;
    const INDENT: &str = "          ";
    let version = if version.is_empty() { "(an scx_vrq that does not give its version)" } else { version };
    let group = if group.is_empty() { String::new() } else { format!(", group accounting {group}") };
    writeln!(out, "[{}] {} {}{}", crate::SCHEDULER_NAME, crate::SCHEDULER_NAME, version, group)?;
    let mut line = format!("{INDENT}knobs:");
    for knob in knobs.split_whitespace() {
        if line.len() + 1 + knob.len() > WIDTH {
            writeln!(out, "{line}")?;
            line = format!("{INDENT}  ");
        } else {
            line.push(' ');
        }
        line.push_str(knob);
    }
    if !knobs.is_empty() {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

pub fn monitor_at<W: Write>(path: &Path, intv: Duration, full: bool, shutdown: &Shutdown, out: &mut W) -> Result<()> {
    let mut said_waiting = false;
    let mut shown = None;
    while !shutdown.requested() {
        let mut client = match StatsClient::new().set_path(path).connect(None) {
            Ok(c) => c,
            Err(e) if not_there_yet(&e) => {
                if !said_waiting {
                    info!("no scx_vrq serves statistics at {} yet: waiting for one", path.display());
                    said_waiting = true;
                }
                shutdown.sleep(Duration::from_secs(1));
                continue;
            }
            Err(e) => {
                let hint = match e.downcast_ref::<std::io::Error>().map(|e| e.kind()) {
                    Some(std::io::ErrorKind::PermissionDenied) => " (the statistics are root's)",
                    _ => "",
                };
                return Err(e).with_context(|| format!("cannot read the statistics at {}{hint}", path.display()));
            }
        };
        said_waiting = false;
        loop {
            let metrics: Metrics = match client.request("stats", vec![]) {
                Ok(m) => m,
                Err(e) => {
                    info!("statistics connection lost ({e:#}); reconnecting");
                    break;
                }
            };
            let build = (metrics.version.clone(), metrics.group_accounting.clone(), metrics.knobs.clone());
            if shown.as_ref() != Some(&build) {
                write_build(out, &build.0, &build.1, &build.2)?;
                shown = Some(build);
            }
            if full {
                metrics.format_full(out)?;
            } else {
                metrics.format_line(out, intv.as_secs_f64())?;
            }
            out.flush()?;
            if !shutdown.sleep(intv) {
                return Ok(());
            }
        }
        shutdown.sleep(Duration::from_secs(1));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Metrics {
        let normal = LatClass { wake_n: 100, wake_p50_us: 64, wake_p99_us: 8192, ..Default::default() };
        Metrics {
            nr_queued: 7,
            max_queued: 12,
            dispatch_local: 1000,
            dispatch_steal: 200,
            direct_idle: 600,
            keep_last: 200,
            preempt_kicks: 60,
            preempt_direct: 20,
            sched_idle_rescues: 3,
            kernel_wakeups: 500,
            lat: [("normal".to_string(), normal)].into_iter().collect(),
            ..Default::default()
        }
    }

    #[test]
    fn one_line_per_interval_with_rates() {
        let mut out = Vec::new();
        sample().format_line(&mut out, 2.0).unwrap();
        let line = String::from_utf8(out).unwrap();
        assert_eq!(line.lines().count(), 1, "{line}");
        for want in [
            "queued   7 (max 12)",
            "dispatch   1000/s",
            "preempt    40/s",
            "wake p50   64us",
            "p99  8.2ms",
            "schedidle 3",
            "kthread 250/s",
        ] {
            assert!(line.contains(want), "{want:?} missing in {line:?}");
        }
    }

    #[test]
    fn full_breakdown_shows_every_counter_once() {
        let n = crate::bpf_intf::vrq_stat_VRQ_NR_STATS as usize;
        let counters: Vec<u64> = (0..n as u64).map(|i| 7000 + i).collect();
        let m = Metrics::from_counters(&counters);
        let mut out = Vec::new();
        m.format_full(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let blocks = m.counter_blocks();
        assert_eq!(blocks.iter().map(|(_, c)| c.len()).sum::<usize>(), n, "a BPF counter has no field, or two");
        for (_, counters) in blocks {
            for (label, value) in counters {
                assert_eq!(text.matches(&format!("{label}:{value}")).count(), 1, "{label}:{value} in {text}");
            }
        }
        assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
    }

    #[test]
    fn the_first_lines_name_the_build_and_its_knobs() {
        let knobs = (0..40).map(|i| format!("knob-number-{i}=value")).collect::<Vec<_>>().join(" ");
        let mut out = Vec::new();
        write_build(&mut out, "0.1.0-g0123456789-dirty x86_64-unknown-linux-gnu", "session (auto)", &knobs).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with(
                "[scx_vrq] scx_vrq 0.1.0-g0123456789-dirty x86_64-unknown-linux-gnu, group accounting session (auto)\n"
            ),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
        let shown: Vec<&str> =
            text.lines().skip(1).flat_map(|l| l.split_whitespace()).filter(|w| *w != "knobs:").collect();
        assert_eq!(shown.join(" "), knobs);
    }

    /// --monitor against a statistics server: the build first, then a line per interval; it waits
    /// while nothing serves there yet, and fails on anything else.
    #[test]
    fn monitor_reads_a_server_and_fails_when_it_cannot() {
        let dir = std::env::temp_dir().join(format!("vrq-stats-test-{}", std::process::id()));
        let path = dir.join("stats");
        let server = StatsServer::new(server_data()).set_path(&path).launch().unwrap();
        let (res_ch, req_ch) = server.channels();
        std::thread::spawn(move || {
            let mut n = 0;
            while req_ch.recv().is_ok() {
                n += 100;
                let m = Metrics {
                    version: "9.9.9-g0123456789".into(),
                    group_accounting: "cgroup (auto)".into(),
                    knobs: "queue=llc".into(),
                    enqueues: n,
                    ..sample()
                };
                if res_ch.send(m).is_err() {
                    break;
                }
            }
        });
        let shutdown = Shutdown::default();
        let fire = shutdown.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(800));
            fire.fire();
        });
        let mut out = Vec::new();
        monitor_at(&path, Duration::from_millis(200), false, &shutdown, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "[scx_vrq] scx_vrq 9.9.9-g0123456789, group accounting cgroup (auto)", "{text}");
        assert_eq!(lines[1].trim(), "knobs: queue=llc", "{text}");
        assert!(lines.len() >= 4 && lines[2..].iter().all(|l| l.starts_with("[scx_vrq] queued")), "{text}");
        drop(server);

        // nothing there yet: waits (quietly) until the shutdown
        let shutdown = Shutdown::default();
        let fire = shutdown.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            fire.fire();
        });
        let mut out = Vec::new();
        monitor_at(&dir.join("none"), Duration::from_millis(100), false, &shutdown, &mut out).unwrap();
        assert!(out.is_empty());
        let _ = std::fs::remove_dir_all(&dir);

        // a socket that cannot be reached, not for want of a server: an error at once
        let shutdown = Shutdown::default();
        let e = monitor_at(
            Path::new("/proc/self/stat/stats"),
            Duration::from_millis(100),
            false,
            &shutdown,
            &mut Vec::new(),
        )
        .expect_err("monitor went on without a socket it could read");
        assert!(format!("{e:#}").contains("cannot read the statistics at /proc/self/stat/stats"), "{e:#}");
        for (kind, wait) in [
            (std::io::ErrorKind::NotFound, true),
            (std::io::ErrorKind::ConnectionRefused, true),
            (std::io::ErrorKind::PermissionDenied, false),
        ] {
            assert_eq!(not_there_yet(&anyhow::Error::new(std::io::Error::from(kind))), wait, "{kind:?}");
        }
    }

    /// The socket 0600 in a folder 0700, made so or set so whatever was there; a folder above that
    /// existed keeps its mode.
    #[test]
    fn the_socket_and_its_folder_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let base = std::env::temp_dir().join(format!("vrq-socket-test-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        // nothing there yet: both folders made
        let path = base.join("scx/root/stats");
        let server = launch_server(&path).unwrap();
        assert_eq!(
            (mode(&base), mode(&base.join("scx")), mode(&base.join("scx/root")), mode(&path)),
            (0o755, 0o700, 0o700, 0o600)
        );
        drop(server);
        // a folder left open by an earlier run: closed again; the one above keeps its mode
        std::fs::set_permissions(base.join("scx"), std::fs::Permissions::from_mode(0o711)).unwrap();
        std::fs::set_permissions(base.join("scx/root"), std::fs::Permissions::from_mode(0o777)).unwrap();
        let server = launch_server(&path).unwrap();
        assert_eq!((mode(&base.join("scx")), mode(&base.join("scx/root")), mode(&path)), (0o711, 0o700, 0o600));
        drop(server);
        // a path whose folder cannot be made: an error, not a server elsewhere
        assert!(launch_server(Path::new("/proc/self/stat/root/stats")).is_err());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn full_breakdown_shows_the_classes_that_ran() {
        let mut out = Vec::new();
        sample().format_full(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("normal     wake n:100 p50:64us p99:8.2ms"), "{text}");
        assert!(!text.contains("batch"), "an empty class is left out: {text}");
    }
}
