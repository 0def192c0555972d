// Statistics of scx_vrq, served over scx_stats (`--stats SECS`, `--monitor SECS`, or any scx_stats
// client on /var/run/scx/root/stats). Each counter is the number of times one scheduling path ran
// during the interval; see enum vrq_stat in src/bpf/intf.h for where each is counted.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Result;
use scx_stats::prelude::*;
use scx_stats_derive::Stats;
use scx_stats_derive::stat_doc;
use serde::Deserialize;
use serde::Serialize;

/// Declares the counter fields once: the struct, its conversion from the BPF counter array (indexed
/// by enum vrq_stat) and its interval delta all come from this one list.
macro_rules! vrq_metrics {
    ($( $field:ident = $idx:ident : $desc:literal ),* $(,)?) => {
        #[stat_doc]
        #[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
        #[stat(top)]
        pub struct Metrics {
            #[stat(desc = "Run-queue mode (global, llc or cpu)")]
            pub queue_mode: String,
            #[stat(desc = "Number of run queues")]
            pub nr_queues: u64,
            #[stat(desc = "Tasks waiting in all queues at the last dispatches")]
            pub nr_queued: u64,
            #[stat(desc = "Deepest any queue has been since load")]
            pub max_queued: u64,
            $(
                #[stat(desc = $desc)]
                pub $field: u64,
            )*
        }

        impl Metrics {
            pub fn from_counters(c: &[u64]) -> Self {
                Self {
                    $( $field: c[crate::bpf_intf::$idx as usize], )*
                    ..Default::default()
                }
            }

            /// Counters become per-interval deltas; gauges (queue depths, mode) stay as they are.
            fn delta(&self, prev: &Self) -> Self {
                Self {
                    $( $field: self.$field.wrapping_sub(prev.$field), )*
                    ..self.clone()
                }
            }
        }
    };
}

vrq_metrics! {
    dispatch_local = vrq_stat_VRQ_STAT_DISPATCH_LOCAL: "Tasks dispatched from the CPU's own queue",
    dispatch_steal = vrq_stat_VRQ_STAT_DISPATCH_STEAL: "Tasks taken from another queue after a lockless peek",
    steal_fail = vrq_stat_VRQ_STAT_STEAL_FAIL: "Peeked tasks gone or unmovable when taken",
    peeks = vrq_stat_VRQ_STAT_PEEK: "Lockless reads of other queues' heads",
    keep_last = vrq_stat_VRQ_STAT_KEEP_LAST: "Only runnable task kept on its CPU with a new slice",
    slice_renewed = vrq_stat_VRQ_STAT_SLICE_RENEWED: "Slices renewed on the tick with nothing waiting (no reschedule)",
    direct_idle = vrq_stat_VRQ_STAT_DIRECT_IDLE: "Woken tasks handed straight to the idle CPU chosen for them",
    goidle_idle = vrq_stat_VRQ_STAT_GOIDLE_IDLE: "CPU idle and nothing found: wasted wake-up (idle->idle)",
    goidle_blocked = vrq_stat_VRQ_STAT_GOIDLE_BLOCKED: "CPU goes idle after the previous task blocked",
    goidle_needother = vrq_stat_VRQ_STAT_GOIDLE_NEEDOTHER: "CPU goes idle; previous task may not stay on it",
    sel_prev = vrq_stat_VRQ_STAT_SEL_PREV: "Wake-ups placed on the idle previous CPU",
    sel_smt = vrq_stat_VRQ_STAT_SEL_SMT: "Wake-ups placed on an idle SMT sibling",
    sel_llc = vrq_stat_VRQ_STAT_SEL_LLC: "Wake-ups placed on an idle CPU sharing the LLC",
    sel_pkg = vrq_stat_VRQ_STAT_SEL_PKG: "Wake-ups placed on an idle CPU of the same package",
    sel_node = vrq_stat_VRQ_STAT_SEL_NODE: "Wake-ups placed on an idle CPU of the same node",
    sel_any = vrq_stat_VRQ_STAT_SEL_ANY: "Wake-ups placed on any other idle CPU",
    sel_busy = vrq_stat_VRQ_STAT_SEL_BUSY: "Wake-ups with no idle CPU allowed",
    enqueues = vrq_stat_VRQ_STAT_ENQUEUE: "Tasks queued",
    new_deadlines = vrq_stat_VRQ_STAT_NEW_DEADLINE: "New deadlines (slice used up or deadline passed)",
    preempt_kicks = vrq_stat_VRQ_STAT_PREEMPT_KICK: "Wake-up preemptions of the CPU with the latest priodl",
    idle_kicks = vrq_stat_VRQ_STAT_IDLE_KICK: "Idle CPUs woken for a queued task",
    batch_no_preempt = vrq_stat_VRQ_STAT_BATCH_NO_PREEMPT: "Wake-ups that may not preempt (SCHED_BATCH, sync)",
    idle_bound = vrq_stat_VRQ_STAT_IDLE_BOUND: "SCHED_IDLE tasks run because they waited past the bound",
    slice_shrunk = vrq_stat_VRQ_STAT_SLICE_SHRUNK: "Slices shortened because a queue is long",
    slice_timer = vrq_stat_VRQ_STAT_SLICE_TIMER: "Shrunk slices ended by the slice timer before the next tick",
    floor_gave_way = vrq_stat_VRQ_STAT_FLOOR_GAVE_WAY: "Slices below --min-slice-us: the floor would have held a round past half the watchdog",
    round_over = vrq_stat_VRQ_STAT_ROUND_OVER: "Slices at the shortest the slice timer ends with the round still past half the watchdog",
    kernel_wakeups = vrq_stat_VRQ_STAT_KERNEL_WAKEUP: "Kernel threads woken, queued before user tasks for one run",
    niffies_rebase = vrq_stat_VRQ_STAT_NIFFIES_REBASE: "Deadlines carried over between queue clocks",
    yields = vrq_stat_VRQ_STAT_YIELD: "sched_yield() calls (what they do: --yield-type)",
    group_scaled = vrq_stat_VRQ_STAT_GROUP_SCALED: "Deadlines stretched by the group's runnable tasks",
    depth_scaled = vrq_stat_VRQ_STAT_DEPTH_SCALED: "Deadlines stretched by the fork-depth penalty",
    sel_scaled = vrq_stat_VRQ_STAT_SEL_SCALED: "Wake-ups placed on a frequency-scaled (cold) idle CPU",
    delay_placed = vrq_stat_VRQ_STAT_DELAY_PLACED: "Woken/forked tasks kept on the warm waker CPU, not a cold idle one",
    delay_ran_before = vrq_stat_VRQ_STAT_DELAY_RAN_BEFORE: "Delay-placed tasks that ran before the delay was up",
    delay_migrated = vrq_stat_VRQ_STAT_DELAY_MIGRATED: "Delay-placed tasks still waiting when the delay ran out",
    sticky_set = vrq_stat_VRQ_STAT_STICKY_SET: "Tasks descheduled while runnable, made sticky to their CPU",
    sticky_kept = vrq_stat_VRQ_STAT_STICKY_KEPT: "Sticky tasks that ran again on their CPU",
    sticky_passed = vrq_stat_VRQ_STAT_STICKY_PASSED: "Other queues' sticky heads passed over as later",
    sticky_stolen = vrq_stat_VRQ_STAT_STICKY_STOLEN: "Sticky tasks that ran on another CPU",
}

impl Metrics {
    fn format<W: Write>(&self, w: &mut W) -> Result<()> {
        writeln!(
            w,
            "[{}] {} q:{} queued:{}/{} | dsp local:{} direct:{} steal:{} fail:{} peek:{} keep:{} renew:{} \
             | sel prev:{} smt:{} llc:{} pkg:{} node:{} any:{} busy:{}",
            crate::SCHEDULER_NAME,
            self.queue_mode,
            self.nr_queues,
            self.nr_queued,
            self.max_queued,
            self.dispatch_local,
            self.direct_idle,
            self.dispatch_steal,
            self.steal_fail,
            self.peeks,
            self.keep_last,
            self.slice_renewed,
            self.sel_prev,
            self.sel_smt,
            self.sel_llc,
            self.sel_pkg,
            self.sel_node,
            self.sel_any,
            self.sel_busy,
        )?;
        writeln!(
            w,
            "          enq:{} newdl:{} preempt:{} idlekick:{} nopreempt:{} idlebound:{} shrunk:{} slicetimer:{} \
             floorgave:{} roundover:{} kthread:{} rebase:{} yield:{} group:{} depth:{} | goidle idle:{} blocked:{} needother:{}\n          \
             freq scaled:{} | delay placed:{} ran:{} migrated:{} | sticky set:{} kept:{} passed:{} stolen:{}",
            self.enqueues,
            self.new_deadlines,
            self.preempt_kicks,
            self.idle_kicks,
            self.batch_no_preempt,
            self.idle_bound,
            self.slice_shrunk,
            self.slice_timer,
            self.floor_gave_way,
            self.round_over,
            self.kernel_wakeups,
            self.niffies_rebase,
            self.yields,
            self.group_scaled,
            self.depth_scaled,
            self.goidle_idle,
            self.goidle_blocked,
            self.goidle_needother,
            self.sel_scaled,
            self.delay_placed,
            self.delay_ran_before,
            self.delay_migrated,
            self.sticky_set,
            self.sticky_kept,
            self.sticky_passed,
            self.sticky_stolen,
        )?;
        Ok(())
    }
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

    StatsServerData::new().add_meta(Metrics::meta()).add_ops("top", StatsOps { open, close: None })
}

pub fn monitor(intv: Duration, shutdown: Arc<AtomicBool>) -> Result<()> {
    scx_utils::monitor_stats::<Metrics>(
        &[],
        intv,
        || shutdown.load(Ordering::Relaxed),
        |metrics| metrics.format(&mut std::io::stdout()),
    )
}
