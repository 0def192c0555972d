"""Statistics of repeated runs: each configuration run N times, the minimum and maximum dropped and
the rest averaged (VRQ's method), plus median and standard deviation; and the comparison with the
kernel's own scheduler (EEVDF) that the report's verdicts rest on.

The comparison (`compare`): the Hodges-Lehmann ratio -- the median of the m x n ratios of one of
the scheduler's runs to one of EEVDF's -- with the distribution-free confidence interval that goes
with it: the k-th smallest and k-th largest of those ratios, k from the exact null distribution of
the Mann-Whitney (Wilcoxon rank-sum) statistic. It assumes only that runs are independent draws and,
for the interval to cover the true ratio, that the scheduler changes the metric by a factor (a
shift of its logarithm); two schedulers that do not differ at all get a verdict at most 5% of the
time whatever the runs' distribution. "better" or "worse" only when the interval excludes 1, "level"
when it holds 1; with too few runs for a 95% interval to exclude 1 at all (3 of each: the smallest
two-sided p-value is 2 / C(6, 3) = 0.1) the widest interval the runs give is kept, with its own
confidence, and there is no verdict ("n/a"). Exact integer arithmetic, no randomness: the same runs
give the same report, byte for byte."""

import functools
import math
import statistics
from fractions import Fraction

CONFIDENCE = Fraction(95, 100)
NO_VERDICT = "n/a"  # too few runs for the interval to exclude 1 at CONFIDENCE
MIN_RUNS = 4  # of each, when both have as many: the fewest with which a verdict is possible
# the runs per scheduler bench/README.md asks of a figure it makes a claim of: a true 10% difference,
# with 10% run-to-run variation, gets its verdict in about 82% of boots (bench/tests/test_bench.py)
RECOMMENDED_RUNS = 20

METHOD = {
    "name": "hodges-lehmann ratio, mann-whitney interval",
    "estimate": "Hodges-Lehmann ratio: the median of the ratios of each of the scheduler's runs to each of "
                "EEVDF's (the geometric mean of the middle two when their number is even)",
    "interval": "distribution-free confidence interval, exact: the k-th smallest and k-th largest of those "
                "ratios, k from the null distribution of the Mann-Whitney (Wilcoxon rank-sum) statistic; "
                "closed, so tied runs make it wider, never narrower",
    "confidence": float(CONFIDENCE),
    "verdict": "better or worse only when the interval excludes 1, in the metric's direction; level when it "
               "holds 1; n/a when the runs are too few for a 95% interval to exclude 1 (C(m+n, m) < 40: 3 "
               "runs of each, or 2 with fewer than 8), shown with the widest interval the runs give (all "
               "pairwise ratios) and its confidence",
    "min_runs": MIN_RUNS,
}


def trimmed_mean(values):
    """Mean with the single min and max dropped (VRQ's method: 10 runs, drop max and min). With fewer
    than 3 values nothing can be dropped and the plain mean is returned."""
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    if len(vals) >= 3:
        vals = vals[1:-1]
    return sum(vals) / len(vals)


def summarize(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return {"n": 0, "mean": None, "median": None, "stdev": None, "min": None, "max": None}
    return {
        "n": len(vals),
        "mean": trimmed_mean(vals),
        "median": statistics.median(vals),
        "stdev": statistics.stdev(vals) if len(vals) >= 2 else 0.0,
        "min": min(vals),
        "max": max(vals),
    }


def ratio(value, baseline):
    """value / baseline, or None when either is missing or the baseline is zero."""
    if value is None or baseline is None or baseline == 0 or math.isnan(baseline):
        return None
    return value / baseline


@functools.lru_cache(maxsize=None)
def rank_sum_counts(m, n):
    """counts[u]: how many of the C(m+n, m) equally likely orderings of m runs of one scheduler among
    n of another (no difference between them) give the Mann-Whitney statistic U = u (the number of
    pairs in which the first scheduler's run is the smaller). The coefficients of the Gaussian
    binomial [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), in exact integers."""
    poly = [1]
    for i in range(1, m + 1):
        nxt = poly + [0] * (n + i)
        for j, c in enumerate(poly):  # times (1 - q^(n+i))
            nxt[j + n + i] -= c
        for j in range(i, len(nxt)):  # divided by (1 - q^i)
            nxt[j] += nxt[j - i]
        poly = nxt
    return tuple(poly[:m * n + 1])


@functools.lru_cache(maxsize=None)
def interval_rank(m, n, confidence=CONFIDENCE):
    """(k, coverage): the interval from the k-th smallest to the k-th largest of the m x n pairwise
    ratios covers the true ratio with probability `coverage` >= confidence, k the largest that does;
    k = 0 when even the range of all of them falls short (C(m+n, m) < 2 / (1 - confidence)), and then
    `coverage` is the range's (None with no pair)."""
    if m == 0 or n == 0:
        return 0, None
    counts = rank_sum_counts(m, n)
    total = math.comb(m + n, m)
    tail = (1 - Fraction(confidence)) / 2
    k = cum = 0
    while k < len(counts) and Fraction(cum + counts[k], total) <= tail:
        cum += counts[k]
        k += 1
    if k == 0:
        return 0, 1 - Fraction(2 * counts[0], total)
    return k, 1 - Fraction(2 * cum, total)


def can_judge(m, n, confidence=CONFIDENCE):
    """Whether m runs of EEVDF and n of a scheduler are enough for a verdict at `confidence`."""
    return interval_rank(m, n, confidence)[0] > 0


def _median_of_sorted(xs):
    """The middle one, or the geometric mean of the middle two (the median of their logarithms)."""
    mid = len(xs) // 2
    if len(xs) % 2:
        return xs[mid]
    return math.sqrt(xs[mid - 1] * xs[mid])


def compare(baseline_values, values, higher_is_better, confidence=CONFIDENCE):
    """A scheduler's runs of one metric against EEVDF's in the same boot: {"ratio": the Hodges-Lehmann
    ratio, "ci": [low, high] or None, "ci_level": the interval's confidence (exact, >= `confidence`
    when a verdict is possible) or None, "verdict": "better" | "worse" | "level" | "n/a" | None,
    "runs": [EEVDF's, the scheduler's]}. None in "ratio" and "verdict" when there is nothing to
    compare (no runs, or a baseline run that is not positive)."""
    x = [v for v in baseline_values if v is not None]
    y = [v for v in values if v is not None]
    out = {"ratio": None, "ci": None, "ci_level": None, "verdict": None, "runs": [len(x), len(y)]}
    if not x or not y or min(x) <= 0 or min(y) < 0:
        return out
    ratios = sorted(b / a for a in x for b in y)
    out["ratio"] = _median_of_sorted(ratios)
    k, coverage = interval_rank(len(x), len(y), confidence)
    if k == 0:
        if coverage:  # the widest interval these runs give: all the pairwise ratios
            out["ci"] = [ratios[0], ratios[-1]]
            out["ci_level"] = float(coverage)
        out["verdict"] = NO_VERDICT
        return out
    lo, hi = ratios[k - 1], ratios[len(ratios) - k]
    out["ci"] = [lo, hi]
    out["ci_level"] = float(coverage)
    if lo > 1 or hi < 1:
        out["verdict"] = "better" if (lo > 1) == higher_is_better else "worse"
    else:
        out["verdict"] = "level"
    return out
