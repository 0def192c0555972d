"""Statistics of repeated runs, as VRQ's benchmarks compute them: each configuration run N times, the
minimum and maximum dropped, the rest averaged; plus median, standard deviation and the ratio to the
kernel's own scheduler (EEVDF)."""

import math
import statistics


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
