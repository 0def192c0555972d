// The command line of scx_vrq: every flag, its range and its help text.
//
// Kept apart from the loader so that the man page and shell completions can be generated from the
// same definition without linking the BPF scheduler.

use std::ffi::OsString;

use clap::ArgMatches;
use clap::CommandFactory;
use clap::FromArgMatches;
use clap::Parser;
use clap::ValueEnum;
use scx_utils::libbpf_clap_opts::LibbpfOpts;

// The --help sections. The first four hold the scheduling knobs: the startup log line, the README's
// knob table and the profiles are made from the flags under them, so a new knob under one of them
// appears in all three without being listed anywhere else.
pub const DEADLINES: &str = "BFS deadlines and queues";
pub const LATENCY: &str = "Wake-up latency (beyond BFS)";
pub const GROUPS: &str = "Groups";
pub const PLACEMENT: &str = "Placement: capacity, frequency, delayed migration, sticky tasks";
pub const STATISTICS: &str = "Statistics";
pub const KNOB_HEADINGS: [&str; 4] = [DEADLINES, LATENCY, GROUPS, PLACEMENT];

/// A named set of knob values, given before the command line's own flags (which win over it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Profile {
    /// The defaults as listed below.
    Default,
    /// BFS as it was: one queue for the machine and every mechanism beyond BFS off (--queue global
    /// --target-latency-ms 0 --round-target-ms 0 --short-run-us 0 --short-run-renew false
    /// --under-share-first false --wake-credit 0 --sync-handoff false --preempt-local false --handoff-slice false
    /// --vfork-handoff false --stay-behind-kthread false --group-accounting off
    /// --capacity-aware false). What stays
    /// is what sched_ext's watchdog needs: --max-round-ms, --min-slice-us, --idle-bound-ms.
    Bfs,
}

impl Profile {
    /// The flags a profile stands for; its help text above lists the same (a test checks it).
    pub fn flags(self) -> &'static [&'static str] {
        match self {
            Profile::Default => &[],
            Profile::Bfs => &[
                "--queue",
                "global",
                "--target-latency-ms",
                "0",
                "--round-target-ms",
                "0",
                "--short-run-us",
                "0",
                "--short-run-renew",
                "false",
                "--under-share-first",
                "false",
                "--wake-credit",
                "0",
                "--sync-handoff",
                "false",
                "--preempt-local",
                "false",
                "--handoff-slice",
                "false",
                "--vfork-handoff",
                "false",
                "--stay-behind-kthread",
                "false",
                "--group-accounting",
                "off",
                "--capacity-aware",
                "false",
            ],
        }
    }
}

/// Which tasks share one entity's CPU (BFS's group accounting).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GroupMode {
    /// cgroup where the cpu controller is enabled in the root cgroup's cgroup.subtree_control (so
    /// cgroups' cpu.weight can differ: systemd, containers), session elsewhere.
    Auto,
    /// Plain BFS: every task is its own entity.
    Off,
    /// The threads of one process share one task's CPU.
    Thread,
    /// The processes of one session (a terminal's jobs, a service) share one task's CPU.
    Session,
    /// cgroup v2's cpu.weight, along the tree (systemd's CPUWeight=, containers' weights), and cpu.idle.
    Cgroup,
}

/// Which CPUs share one run queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum QueueMode {
    /// One queue for all CPUs: BFS's global run queue.
    Global,
    /// One queue per last-level cache (VRQ/PDS-like); idle CPUs take from the others.
    Llc,
    /// One queue per CPU (MuQSS/PDS-like); idle CPUs take from the others.
    Cpu,
}

impl QueueMode {
    pub fn name(self) -> &'static str {
        match self {
            QueueMode::Global => "global",
            QueueMode::Llc => "llc",
            QueueMode::Cpu => "cpu",
        }
    }
}

/// scx_vrq: a BFS/VRQ-lineage virtual-deadline CPU scheduler for sched_ext.
///
/// Every task gets the same time slice (--rr-interval-ms); its virtual deadline is
/// now + prio_ratio(nice) * rr_interval, with prio_ratio growing 10% per nice level, and the earliest
/// deadline runs first. A waking task preempts the CPU running the latest deadline if its own is
/// earlier. SCHED_IDLE tasks run only when no normal task waits (bounded by --idle-bound-ms);
/// SCHED_BATCH tasks never preempt. Needs root and a kernel with sched_ext (CONFIG_SCHED_CLASS_EXT).
///
/// An on/off flag alone turns it on; `--flag=true|false` or `--flag true|false` sets it either way.
#[derive(Debug, Parser)]
#[command(version = None, disable_version_flag = true)]
pub struct Opts {
    /// Start from a named set of knob values: default, or bfs (every mechanism beyond BFS off). Flags
    /// given beside it win over the profile's.
    #[arg(long, value_name = "NAME", value_enum, default_value_t = Profile::Default)]
    pub profile: Profile,

    /// Which CPUs share one run queue: global (BFS), llc (one per last-level cache) or cpu.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = QueueMode::Llc, help_heading = DEADLINES)]
    pub queue: QueueMode,

    /// Time slice every task gets, in ms (BFS rr_interval, 1-1000). Nice changes only the deadline.
    #[arg(long, value_name = "MS", default_value_t = 6, value_parser = u64_in(1..=1000), help_heading = DEADLINES)]
    pub rr_interval_ms: u64,

    /// Longest round of one queue, in ms (10-5000): while queued tasks per CPU x rr_interval would
    /// exceed it, the slice shrinks to fit (never below --min-slice-us), so thousands of runnable
    /// tasks cannot hold one another past the sched_ext watchdog.
    #[arg(long, value_name = "MS", default_value_t = 1000, value_parser = u64_in(10..=5000), help_heading = DEADLINES)]
    pub max_round_ms: u64,

    /// Shortest slice when a queue is long, in µs (50-100000; at most rr_interval).
    #[arg(long, value_name = "US", default_value_t = 250, value_parser = u64_in(50..=100_000), help_heading = DEADLINES)]
    pub min_slice_us: u64,

    /// Target latency, in ms (0-1000; 0 turns it off): while latency waiters (woken tasks, and short
    /// runners queued again: --short-run-us) wait for a CPU and would take longer than this per CPU to
    /// each get rr_interval, the queues' clock runs faster, so a turn (rr_interval of that clock) lasts
    /// target / waiters-per-CPU of real time, never below --target-floor-us, and the longest turn under
    /// way ends once it has lasted that long. Past the most the floor can serve within the target
    /// (target / floor per CPU), turns grow back toward rr_interval: hundreds of latency waiters are the
    /// load itself, not tasks held up behind it. Other tasks queued again after their turn (CPU hogs) do
    /// not count here (--round-target-ms counts them). Deadline offsets stay rr_interval's in clock
    /// time, so nice keeps its share.
    #[arg(long, value_name = "MS", default_value_t = 2, value_parser = u64_in(0..=1000), help_heading = LATENCY)]
    pub target_latency_ms: u64,

    /// Round target, in ms (0-1000; 0 turns it off): while every task queued (not only latency waiters)
    /// would make one round of the queues -- runnable tasks per CPU x rr_interval -- longer than this,
    /// the queues' clock runs faster as for the target latency, so that every task's turn comes round
    /// within it: a request that needs several turns waits shorter rounds between them. At two
    /// rr_intervals (the default) two runnable tasks per CPU, a build of 1.5 jobs per CPU, keep BFS's
    /// turns. Turns never shorter than --target-floor-us, growing back past the floor's reach.
    #[arg(long, value_name = "MS", default_value_t = 12, value_parser = u64_in(0..=1000), help_heading = LATENCY)]
    pub round_target_ms: u64,

    /// Shortest turn the target latency and the round target give, in µs (50-100000; at most
    /// rr_interval): however many tasks wait, a turn is never cut shorter than this (CFS's
    /// min_granularity beside its latency target).
    #[arg(long, value_name = "US", default_value_t = 1000, value_parser = u64_in(50..=100_000), help_heading = LATENCY)]
    pub target_floor_us: u64,

    /// Hold latency waiters' turns at the floor (true or false; needs --target-latency-ms and a longer
    /// --round-target-ms): past the most latency waiters the floor serves within the target latency
    /// (target / floor per CPU), their turns stay at --target-floor-us until a round at the floor would
    /// pass the round target (round target / floor per CPU), and grow back only past that, as the
    /// round target's own turns do. Without it they grow back at once: a few request workers more per
    /// CPU than target / floor get turns as long as a whole request, and one handed its next request
    /// waits a round of the others' whole requests. Hundreds of latency waiters (hackbench) keep the
    /// turns they had either way.
    #[arg(long, value_name = "BOOL", default_value_t = false, action = clap::ArgAction::Set, help_heading = LATENCY)]
    pub hold_floor: bool,

    /// Short runners, in µs (0-1000000; 0 turns it off): with a target latency, a task queued again
    /// after a preemption or the end of its turn counts as a latency waiter, as a woken task does, while
    /// it runs less than this between sleeps (on average, and in the run under way). A run also ends when a task it
    /// woke preempts it: a request queue's worker, handed its next request, waits as one held up, and
    /// turns shorten for it. CPU hogs (a build's compilers) pass it in their first turn and never count.
    #[arg(long, value_name = "US", default_value_t = 6000, value_parser = u64_in(0..=1_000_000), help_heading = LATENCY)]
    pub short_run_us: u64,

    /// Renew a short runner's slice (true or false; needs --short-run-us): when a short runner's run
    /// ends (it sleeps, or the task it woke preempts it) with less of its slice left than its average
    /// run, the slice counts as used up and it gets its new deadline now: its next run is not cut off a
    /// few microseconds before its work is done, an extra switch each time. It takes the renewal early,
    /// so it gains no CPU share by it.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, help_heading = LATENCY)]
    pub short_run_renew: bool,

    /// Under-share wake-ups first (true or false): a task that wakes having used less CPU than its
    /// share -- its average run times the tasks per CPU it competes with below its average sleep --
    /// gets its deadline moved two nice-0 offsets earlier (at nice 0 alone in its group: one offset
    /// before now), so it runs before every task still within its offset (preempting by BFS's rule)
    /// instead of behind every CPU hog that waited its round; nice and group accounting keep their
    /// order. It keeps the slice it had: its place moves, not its CPU time. A CPU hog never sleeps and
    /// never qualifies.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, help_heading = LATENCY)]
    pub under_share_first: bool,

    /// Wake-up credit, in % of the deadline offset (0-100; 0 is BFS, and the default): a task that
    /// wakes with its deadline passed and slice left gets its new deadline from now less this share of
    /// the offset, so a task that sleeps often runs ahead of the CPU hogs queued since they renewed
    /// their slices, instead of waiting for their slices to end. It keeps the rest of its slice, so
    /// the credit lasts one slice of CPU per deadline offset: CPU shares by nice do not change. Off by
    /// default: it places the same wake-ups as --under-share-first, and beside it gained nothing on
    /// the loads measured while costing a little pipe throughput.
    #[arg(long, value_name = "PCT", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100), help_heading = LATENCY)]
    pub wake_credit: u32,

    /// Sync hand-off (true or false): a sync wake-up (the waker is about to sleep: a pipe write, a
    /// futex hand-off) runs the wakee on the waker's CPU when nothing else waits for that CPU, instead
    /// of waking an idle one: no IPI, warm caches.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, help_heading = LATENCY)]
    pub sync_handoff: bool,

    /// vfork hand-off (true or false): a child started with vfork (its parent sleeps until the child
    /// execs or exits) runs on its parent's CPU under the sync hand-off's conditions, instead of on an
    /// idle one, and the parent's wake-up at the child's exec preempts nobody (the parent takes the next
    /// CPU free). make and gcc start every compile and assembly so: without it each child went to the
    /// idle CPU, or was preempted there by its parent at its exec and sent to the other, and at its exit
    /// the sync hand-off pulled its parent after it, so that successive compiles alternated CPUs.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, help_heading = LATENCY)]
    pub vfork_handoff: bool,

    /// Preempt locally (true or false): a waking task that may preempt does so on the CPU handling its
    /// wake-up when it beats the task running there too, instead of on the CPU running the latest
    /// deadline (BFS): the CPU reschedules at once instead of after an IPI. When the task would head
    /// its queue it goes straight onto this CPU, which reschedules in the wake-up's own path; so does
    /// a task that may run on one CPU only, onto that CPU, when it preempts there or the CPU is idle.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, help_heading = LATENCY)]
    pub preempt_local: bool,

    /// A hand-off keeps the turn (true or false): a long runner (runs between sleeps of --short-run-us
    /// or more) preempted on its CPU by the task it woke keeps its place in its queue -- its turn is
    /// not counted over for the latency waiters' sake, since its wakee was the waiter -- and its next
    /// run starts on a whole slice. A request worker that posts a result and is handed the next one
    /// starts it at once, on a whole turn, instead of a round later on what its last request left. What
    /// hand-offs add is owed and comes out of its next slices; it keeps the turn only while it owes at
    /// most four slices. Short runners are left to the latency waiters' rules (--short-run-us).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, help_heading = LATENCY)]
    pub handoff_slice: bool,

    /// Longest a SCHED_IDLE task waits behind normal tasks before it runs once anyway, in ms
    /// (100-5000; stays well below the 10 s sched_ext watchdog).
    #[arg(long, value_name = "MS", default_value_t = 2000, value_parser = u64_in(100..=5000), help_heading = DEADLINES)]
    pub idle_bound_ms: u64,

    /// What sched_yield() does (BFS yield_type): 0 nothing; 1 give up the CPU only to a task with an
    /// earlier deadline; 2 expire the slice (new deadline from now, behind the waiting tasks).
    #[arg(long, value_name = "TYPE", default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=2), help_heading = DEADLINES)]
    pub yield_type: u32,

    /// Group accounting (BFS's group-accounting experiment): auto (cgroup where the cpu controller is
    /// enabled in the root cgroup's cgroup.subtree_control, as systemd enables it for CPUWeight= and
    /// container runtimes for their weights; session elsewhere: chosen at load, and again by a reload
    /// when the root's controllers change; named in the log and in the statistics' first line); off
    /// (every task on its own, plain BFS);
    /// thread (a process's threads count as one task); session (a session's processes count as one
    /// task: `make -j64` in one terminal gets about one task's CPU beside a CPU hog in another). While
    /// another group has runnable tasks, each task's deadline offset is multiplied by the runnable
    /// tasks in its group (averaged over about one rr_interval, so that a group's own tasks keep their
    /// order); a group alone is ordered as without accounting. As BFS warned: make itself then runs
    /// like a niced task beside other work. cgroup: the CPU is divided by cgroup v2's cpu.weight along
    /// the tree, as the kernel's own scheduler divides it (systemd's CPUWeight=, a container's
    /// weight); each cgroup's tasks share its part in BFS's order; a cpu.idle cgroup's tasks run as
    /// SCHED_IDLE (kernels from 6.19); cpu.max is not enforced.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = GroupMode::Auto, help_heading = GROUPS)]
    pub group_accounting: GroupMode,

    /// Fork-depth penalty (true or false; from BFS's group-accounting experiment): a task's deadline
    /// offset is multiplied by how many forks it is below init, so deep process trees (a build's
    /// compilers) yield to shallow ones.
    #[arg(long, value_name = "BOOL", default_value_t = false, action = clap::ArgAction::Set, help_heading = GROUPS)]
    pub fork_depth_penalty: bool,

    /// Frequency-aware CPU selection (VRQ's best_mask_cpu order): a CPU running below PCT% of its maximum performance
    /// (scx_bpf_cpuperf_cur) counts as scaled, and a waking task prefers non-scaled idle CPUs at each
    /// distance (same CPU, SMT, LLC before scaled ones; then package, node). 0-100; 0 turns it off.
    #[arg(long, value_name = "PCT", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100), help_heading = PLACEMENT)]
    pub freq_threshold: u32,

    /// Capacity-aware placement (true or false): on a machine whose CPUs differ in capacity (a hybrid
    /// CPU's performance and efficiency cores, as the kernel reports them), a waking task takes, among
    /// the idle CPUs at one distance from its previous CPU, a big one if it is heavy (average run of
    /// --rr-interval-ms or more) or latency-sensitive (woken, sleeping more than it runs), and a
    /// little one if it is background work (nice above 0, SCHED_IDLE), so the big CPUs stay free for
    /// the work that gains most from them. It only orders idle CPUs: an idle CPU of the other kind is
    /// still taken before a task would wait. With every CPU of one capacity it does nothing.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, help_heading = PLACEMENT)]
    pub capacity_aware: bool,

    /// Delayed migration (against frequency inversion): a woken or forked task whose idle CPU would be
    /// a frequency-scaled one is placed on the waker's fast CPU, and an idle CPU is woken for it only
    /// if it has not run within US µs, checked on the waker's scheduler tick (so in effect at least one tick).
    /// 0-10000; 0 turns it off; needs --freq-threshold (50 is the original proposal's default).
    #[arg(long, value_name = "US", default_value_t = 0, value_parser = u64_in(0..=10_000), help_heading = PLACEMENT)]
    pub migration_delay_us: u64,

    /// Sticky tasks (true or false; BFS): a task descheduled while still runnable (preempted, or out of slice) is
    /// sticky to its CPU, unless it is a short runner (--short-run-us). To CPUs of other queues its
    /// deadline counts as later by the nice-19 offset, so they take it only when they have nothing
    /// better or it evens out the queues; to the other CPUs of its own queue, later by one
    /// --rr-interval-ms, so a task stopped mid-work goes on where it started unless it would wait a
    /// slice longer. Woken tasks are never sticky.
    #[arg(long, value_name = "BOOL", default_value_t = false, action = clap::ArgAction::Set, help_heading = PLACEMENT)]
    pub sticky: bool,

    /// Stay behind a kernel thread (true or false): a task preempted by a kernel thread bound to its
    /// CPU (a kworker, RCU's thread, ksoftirqd, which run first and briefly), with nothing else waiting
    /// in its queue, resumes on that CPU right after the kernel thread, as EEVDF leaves a preempted task
    /// on its run queue; queued, an idle CPU would take it at once, and a compile would change CPU in
    /// mid-run, its caches cold there. With others waiting it competes by its deadline as ever.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, help_heading = PLACEMENT)]
    pub stay_behind_kthread: bool,

    /// Print statistics every SECS seconds while the scheduler runs.
    #[arg(long, value_name = "SECS", value_parser = parse_interval, help_heading = STATISTICS)]
    pub stats: Option<f64>,

    /// Only print the statistics of a running scx_vrq every SECS seconds (does not load): its build
    /// and knobs first. Waits while none serves them yet; exits 1 if they cannot be read (they are
    /// root's).
    #[arg(long, value_name = "SECS", value_parser = parse_interval, help_heading = STATISTICS)]
    pub monitor: Option<f64>,

    /// With --stats or --monitor: print every counter and the wait and turn-length percentiles of
    /// each class of task, not the one line per interval (queue depth, dispatches and wake-up
    /// preemptions per second, wake-up wait p50/p99 of normal tasks, SCHED_IDLE tasks run by the
    /// bound, kernel-thread wake-ups).
    #[arg(long, value_name = "BOOL", default_value_t = false, action = clap::ArgAction::Set, help_heading = STATISTICS)]
    pub stats_full: bool,

    /// Size of the debug dump printed when the scheduler exits with an error (0 = kernel default).
    #[arg(long, default_value_t = 0)]
    pub exit_dump_len: u32,

    /// Verbose output, libbpf's included.
    #[arg(short = 'v', long, value_name = "BOOL", default_value_t = false, action = clap::ArgAction::Set)]
    pub verbose: bool,

    /// Print the version and exit.
    #[arg(short = 'V', long)]
    pub version: bool,

    /// Describe every statistic and exit.
    #[arg(long)]
    pub help_stats: bool,

    #[command(flatten, next_help_heading = "Libbpf Options")]
    pub libbpf: LibbpfOpts,

    /// Every knob as it was set, "flag=value ...", for the startup log (filled by parse_from).
    #[arg(skip)]
    pub knob_summary: String,
}

/// Parse a command line, the profile's flags applied first (the command line's own flags win).
pub fn parse_from<I, T>(args: I) -> Result<Opts, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cmd = command();
    let mut matches = cmd.clone().try_get_matches_from(&args)?;
    let profile = Opts::from_arg_matches(&matches)?.profile;
    // The profile's flags that the command line does not give itself go before its own: a flag given
    // twice stays an error, as without a profile.
    let mut from_profile = Vec::new();
    for pair in profile.flags().chunks(2) {
        let long = pair[0].trim_start_matches("--");
        let arg = cmd.get_arguments().find(|a| a.get_long() == Some(long)).expect("a profile names a flag");
        if matches.value_source(arg.get_id().as_str()) != Some(clap::parser::ValueSource::CommandLine) {
            from_profile.extend(pair.iter().map(OsString::from));
        }
    }
    if !from_profile.is_empty() {
        let mut with_profile = args[..1].to_vec();
        with_profile.extend(from_profile);
        with_profile.extend_from_slice(&args[1..]);
        matches = cmd.try_get_matches_from(&with_profile)?;
    }
    let mut opts = Opts::from_arg_matches(&matches)?;
    opts.knob_summary =
        knob_values(&matches).iter().map(|(flag, value)| format!("{flag}={value}")).collect::<Vec<_>>().join(" ");
    Ok(opts)
}

/// The command line as scx_vrq parses it, and as its man page, completions and README tables show it:
/// the derived definition with the conventions every flag of a kind shares applied here, once, so a
/// knob added later follows them too.
/// - On/off flags (bool, `ArgAction::Set`: the knobs, --stats-full, --verbose, libbpf's
///   --relaxed-maps) take `--sticky`, `--sticky=false` and `--sticky false`. The sched_ext project's
///   schedulers turn a feature on by the flag alone (`--local-kthreads`) and one that is on by default
///   off by a flag of its own (`--no-preemption`), and scx_layered's on/off options that can go either
///   way take `--flag[=true|false]` (`num_args = 0..=1`, true when no value is given); here every
///   on/off flag takes the flag alone and `=true|false`, and the value as a separate word stays
///   accepted for the scripts and unit files that pass it so. `--no-sticky` is refused, its message
///   naming `--sticky=false` (parse_error_hint). --version and --help-stats are commands, not
///   settings: the flag alone.
/// - Negative numbers reach the value parsers, which refuse them by their range (u64_in), instead of
///   being taken for unknown flags.
pub fn command() -> clap::Command {
    Opts::command()
        .allow_negative_numbers(true)
        .mut_args(|a| if is_on_off(&a) { a.num_args(0..=1).default_missing_value("true") } else { a })
}

/// An on/off flag: one bool value, set by the command line (not a command such as --version).
pub fn is_on_off(a: &clap::Arg) -> bool {
    matches!(a.get_action(), clap::ArgAction::Set)
        && a.get_value_parser().type_id() == clap::builder::ValueParser::bool().type_id()
}

/// For `--no-FLAG`, FLAG an on/off flag: the line that says how to turn it off, which clap's message
/// (the nearest flag's name) does not.
pub fn parse_error_hint(e: &clap::Error) -> Option<String> {
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        return None;
    }
    let Some(clap::error::ContextValue::String(given)) = e.get(clap::error::ContextKind::InvalidArg) else {
        return None;
    };
    let flag = given.split('=').next()?.strip_prefix("--no-")?;
    command().get_arguments().find(|a| a.get_long() == Some(flag) && is_on_off(a))?;
    Some(format!("to turn --{flag} off: --{flag}=false"))
}

/// A u64 flag's parser with its range: parsed as i64 first, so a negative number is refused by the
/// range ("-1 is not in 1..=1000") rather than as "invalid digit".
pub fn u64_in(range: std::ops::RangeInclusive<i64>) -> clap::builder::RangedI64ValueParser<u64> {
    clap::builder::RangedI64ValueParser::new().range(range)
}

/// The scheduling knobs (the flags under KNOB_HEADINGS), in --help's order.
pub fn knob_args() -> Vec<clap::Arg> {
    let mut cmd = command();
    cmd.build(); // settles what the derive left implicit (how many values each flag takes)
    cmd.get_arguments().filter(|a| a.get_help_heading().is_some_and(|h| KNOB_HEADINGS.contains(&h))).cloned().collect()
}

/// Each knob's long flag name (without "--") and its value as given or defaulted.
pub fn knob_values(m: &ArgMatches) -> Vec<(String, String)> {
    knob_args()
        .iter()
        .map(|a| {
            let id = a.get_id().as_str();
            let value = match m.get_raw(id) {
                Some(raw) => raw.map(|v| v.to_string_lossy().into_owned()).collect::<Vec<_>>().join(","),
                None => String::new(),
            };
            (a.get_long().unwrap_or(id).to_string(), value)
        })
        .collect()
}

pub fn parse_interval(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(0.1..=3600.0).contains(&v) {
        return Err(format!("{v} is outside 0.1-3600 seconds"));
    }
    Ok(v)
}
