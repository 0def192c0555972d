// The scheduler's latency histograms (struct vrq_lat_hists in src/bpf/intf.h, the `lat_hists` per-CPU
// map): how long tasks waited until they ran and how long each turn on a CPU lasted, per class of
// task, in log2 buckets of microseconds. Here they are summed over CPUs, turned into per-interval
// deltas and summarised as percentiles for the statistics.

use std::collections::BTreeMap;

use scx_stats_derive::Stats;
use scx_stats_derive::stat_doc;
use serde::Deserialize;
use serde::Serialize;

use crate::bpf_intf;

pub const BUCKETS: usize = bpf_intf::vrq_lat_consts_VRQ_HIST_BUCKETS as usize;
const CLASSES: usize = bpf_intf::vrq_lat_class_VRQ_NR_LAT_CLASSES as usize;
/// Histograms per class in struct vrq_lat_hists, in its order: wake, requeue, turn.
const KINDS: usize = 3;

/// The classes in enum vrq_lat_class order, by the names the statistics use.
pub const CLASS_NAMES: [&str; CLASSES] = ["normal", "batch", "sched_idle", "kthread"];

/// Upper edge of bucket `b` in µs: bucket 0 is below 1 µs, bucket b is [2^(b-1), 2^b) µs. The last
/// bucket holds everything from 2^24 µs (16.8 s) on; its edge is given as 2^25 µs.
pub fn bucket_upper_us(b: usize) -> u64 {
    1u64 << b.min(BUCKETS - 1)
}

/// The upper edge of the bucket holding the `pct`-th percentile (nearest rank), 0 when empty.
pub fn percentile_us(hist: &[u64], pct: f64) -> u64 {
    let n: u64 = hist.iter().sum();
    if n == 0 {
        return 0;
    }
    let rank = ((pct / 100.0) * n as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (b, &c) in hist.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return bucket_upper_us(b);
        }
    }
    bucket_upper_us(hist.len() - 1)
}

/// The upper edge of the highest non-empty bucket, 0 when empty: the longest is at most this.
pub fn max_us(hist: &[u64]) -> u64 {
    hist.iter().rposition(|&c| c > 0).map_or(0, bucket_upper_us)
}

/// One class of tasks over one interval.
#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
pub struct LatClass {
    #[stat(desc = "Waits after a wake-up (runnable -> running) that ended in the interval")]
    pub wake_n: u64,
    #[stat(desc = "Wake-up wait, median, µs (upper edge of its log2 bucket: at most this)")]
    pub wake_p50_us: u64,
    #[stat(desc = "Wake-up wait, 99th percentile, µs (upper edge of its log2 bucket)")]
    pub wake_p99_us: u64,
    #[stat(desc = "Wake-up wait, longest, µs (upper edge of the highest non-empty bucket)")]
    pub wake_max_us: u64,
    #[stat(desc = "Waits after being descheduled still runnable (preempted, slice used up) -> running")]
    pub requeue_n: u64,
    #[stat(desc = "Requeued wait, median, µs (upper edge of its log2 bucket)")]
    pub requeue_p50_us: u64,
    #[stat(desc = "Requeued wait, 99th percentile, µs (upper edge of its log2 bucket)")]
    pub requeue_p99_us: u64,
    #[stat(desc = "Requeued wait, longest, µs (upper edge of the highest non-empty bucket)")]
    pub requeue_max_us: u64,
    #[stat(desc = "Turns (running -> stopping) that ended in the interval")]
    pub turn_n: u64,
    #[stat(desc = "Turn length, median, µs (upper edge of its log2 bucket)")]
    pub turn_p50_us: u64,
    #[stat(desc = "Turn length, 99th percentile, µs (upper edge of its log2 bucket)")]
    pub turn_p99_us: u64,
    #[stat(desc = "Turn length, longest, µs (upper edge of the highest non-empty bucket)")]
    pub turn_max_us: u64,
    #[stat(desc = "Wake-up waits per log2 bucket: [0] < 1 µs, [b] 2^(b-1) to 2^b µs, the last >= 16.8 s")]
    pub wake_hist: Vec<u64>,
    #[stat(desc = "Requeued waits per log2 bucket (as wake_hist)")]
    pub requeue_hist: Vec<u64>,
    #[stat(desc = "Turn lengths per log2 bucket (as wake_hist)")]
    pub turn_hist: Vec<u64>,
}

impl LatClass {
    fn from_hists(wake: Vec<u64>, requeue: Vec<u64>, turn: Vec<u64>) -> Self {
        let summary = |h: &[u64]| (h.iter().sum(), percentile_us(h, 50.0), percentile_us(h, 99.0), max_us(h));
        let (wake_n, wake_p50_us, wake_p99_us, wake_max_us) = summary(&wake);
        let (requeue_n, requeue_p50_us, requeue_p99_us, requeue_max_us) = summary(&requeue);
        let (turn_n, turn_p50_us, turn_p99_us, turn_max_us) = summary(&turn);
        Self {
            wake_n,
            wake_p50_us,
            wake_p99_us,
            wake_max_us,
            requeue_n,
            requeue_p50_us,
            requeue_p99_us,
            requeue_max_us,
            turn_n,
            turn_p50_us,
            turn_p99_us,
            turn_max_us,
            wake_hist: wake,
            requeue_hist: requeue,
            turn_hist: turn,
        }
    }
}

/// Sum the per-CPU copies of struct vrq_lat_hists (raw map values) into the classes, since load.
pub fn from_percpu(per_cpu: &[Vec<u8>]) -> BTreeMap<String, LatClass> {
    let mut sums = vec![0u64; KINDS * CLASSES * BUCKETS];
    for slot in per_cpu {
        for (i, chunk) in slot.chunks_exact(8).enumerate().take(sums.len()) {
            sums[i] = sums[i].wrapping_add(u64::from_ne_bytes(chunk.try_into().unwrap()));
        }
    }
    let hist = |kind: usize, class: usize| {
        let at = (kind * CLASSES + class) * BUCKETS;
        sums[at..at + BUCKETS].to_vec()
    };
    CLASS_NAMES
        .iter()
        .enumerate()
        .map(|(c, name)| (name.to_string(), LatClass::from_hists(hist(0, c), hist(1, c), hist(2, c))))
        .collect()
}

/// What happened between two readings: bucket counts subtracted, percentiles of the difference.
pub fn delta(cur: &BTreeMap<String, LatClass>, prev: &BTreeMap<String, LatClass>) -> BTreeMap<String, LatClass> {
    let sub = |a: &[u64], b: Option<&Vec<u64>>| -> Vec<u64> {
        a.iter().enumerate().map(|(i, x)| x.wrapping_sub(b.and_then(|b| b.get(i)).copied().unwrap_or(0))).collect()
    };
    cur.iter()
        .map(|(name, c)| {
            let p = prev.get(name);
            let d = LatClass::from_hists(
                sub(&c.wake_hist, p.map(|p| &p.wake_hist)),
                sub(&c.requeue_hist, p.map(|p| &p.requeue_hist)),
                sub(&c.turn_hist, p.map(|p| &p.turn_hist)),
            );
            (name.clone(), d)
        })
        .collect()
}

/// A duration in µs for people: 850us, 4.1ms, 12ms, 1.5s.
pub fn human_us(us: u64) -> String {
    match us {
        0..=999 => format!("{us}us"),
        1_000..=9_999 => format!("{:.1}ms", us as f64 / 1e3),
        10_000..=999_999 => format!("{}ms", us / 1_000),
        _ => format!("{:.1}s", us as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(entries: &[(usize, u64)]) -> Vec<u64> {
        let mut h = vec![0; BUCKETS];
        for &(b, c) in entries {
            h[b] = c;
        }
        h
    }

    #[test]
    fn layout_matches_the_bpf_struct() {
        assert_eq!(
            std::mem::size_of::<bpf_intf::vrq_lat_hists>(),
            KINDS * CLASSES * BUCKETS * 8,
            "struct vrq_lat_hists is wake, requeue, turn: [classes][buckets] of u64 each"
        );
        assert_eq!(CLASS_NAMES[bpf_intf::vrq_lat_class_VRQ_LAT_KTHREAD as usize], "kthread");
        assert_eq!(CLASS_NAMES[bpf_intf::vrq_lat_class_VRQ_LAT_BATCH as usize], "batch");
        assert_eq!(CLASS_NAMES[bpf_intf::vrq_lat_class_VRQ_LAT_SCHED_IDLE as usize], "sched_idle");
    }

    #[test]
    fn percentiles_are_bucket_upper_edges() {
        // 98 waits in [4, 8) µs, 1 in [1, 2) ms, 1 in [8, 16) ms
        let h = hist(&[(3, 98), (11, 1), (14, 1)]);
        assert_eq!(percentile_us(&h, 50.0), 8);
        assert_eq!(percentile_us(&h, 99.0), 2048);
        assert_eq!(percentile_us(&h, 100.0), 16384);
        assert_eq!(max_us(&h), 16384);
        assert_eq!(percentile_us(&hist(&[]), 99.0), 0);
        assert_eq!(max_us(&hist(&[])), 0);
        assert_eq!(percentile_us(&hist(&[(0, 5)]), 50.0), 1, "below 1 µs reads as at most 1 µs");
        assert_eq!(max_us(&hist(&[(BUCKETS - 1, 1)])), 1 << 25, "the open last bucket");
    }

    #[test]
    fn per_cpu_copies_are_summed_and_deltas_taken() {
        let cpu = |fill: u64| -> Vec<u8> {
            let mut v = vec![0u64; KINDS * CLASSES * BUCKETS];
            v[3] = fill; // wake, normal, bucket 3
            v[(CLASSES + 3) * BUCKETS + 5] = 2 * fill; // requeue, kthread, bucket 5
            v[2 * CLASSES * BUCKETS + 13] = fill; // turn, normal, bucket 13
            v.iter().flat_map(|x| x.to_ne_bytes()).collect()
        };
        let before = from_percpu(&[cpu(1), cpu(2)]);
        assert_eq!(before["normal"].wake_n, 3);
        assert_eq!(before["kthread"].requeue_n, 6);
        assert_eq!(before["normal"].turn_n, 3);
        assert_eq!(before["normal"].turn_p50_us, 8192);
        let after = from_percpu(&[cpu(5), cpu(2)]);
        let d = delta(&after, &before);
        assert_eq!(d["normal"].wake_n, 4);
        assert_eq!(d["normal"].wake_hist[3], 4);
        assert_eq!(d["kthread"].requeue_n, 8);
        assert_eq!(d["normal"].wake_p99_us, 8);
        assert_eq!(d["batch"].wake_n, 0);
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(human_us(850), "850us");
        assert_eq!(human_us(4096), "4.1ms");
        assert_eq!(human_us(16384), "16ms");
        assert_eq!(human_us(1 << 21), "2.1s");
    }
}
