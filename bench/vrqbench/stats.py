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


def kept_runs(values):
    """The runs a noise floor is taken over, and how they were chosen: with 4 or more, the minimum and
    maximum dropped (as the mean drops them); with 2 or 3, all of them (3 less min and max leave one
    value, which has no spread); with fewer, too few to have a spread."""
    vals = sorted(v for v in values if v is not None)
    if len(vals) >= 4:
        return vals[1:-1], f"{len(vals) - 2} of {len(vals)} runs, min and max dropped"
    if len(vals) >= 2:
        return vals, f"all {len(vals)} runs (too few to drop min and max)"
    return vals, f"{len(vals)} run{'s' if len(vals) != 1 else ''}: too few for a spread"


def noise_floor(values):
    """The baseline's run-to-run coefficient of variation (sample stdev / mean) of one metric in one
    bench run: how far two of its own runs differ by chance. A scheduler's ratio to the baseline that
    is nearer 1 than this cannot be told from noise. `cv` is None with fewer than 2 runs or a zero
    mean."""
    kept, method = kept_runs(values)
    cv = None
    if len(kept) >= 2:
        mean = sum(kept) / len(kept)
        if mean != 0:
            cv = statistics.stdev(kept) / abs(mean)
    return {"cv": cv, "runs_kept": len(kept), "method": method}


def verdict(ratio_to_baseline, floor_cv, higher_is_better):
    """"level" when the ratio differs from 1 by no more than the noise floor, else "better" or
    "worse" in the metric's direction; None when either is unknown (nothing to judge by)."""
    if ratio_to_baseline is None or floor_cv is None:
        return None
    if abs(ratio_to_baseline - 1) <= floor_cv + 1e-12:  # a ratio exactly at the floor is level
        return "level"
    return "better" if (ratio_to_baseline > 1) == higher_is_better else "worse"
