#!/usr/bin/python3
"""Unit tests of the bench's method: the drop-min/max mean, ratios, the interleaved and resumable
plan, and the report built from saved results. Ends with "bench: N passed, N failed"."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from vrqbench import plan, report, stats  # noqa: E402


class TestStats(unittest.TestCase):
    def test_trimmed_mean_drops_one_min_and_one_max(self):
        self.assertEqual(stats.trimmed_mean([10, 1, 5, 6, 100]), 7.0)  # mean of 5, 6, 10
        # VRQ's method: 10 runs, max and min dropped, the other 8 averaged
        self.assertEqual(stats.trimmed_mean(list(range(1, 11))), sum(range(2, 10)) / 8)

    def test_trimmed_mean_small_samples(self):
        self.assertEqual(stats.trimmed_mean([4, 8]), 6.0)
        self.assertEqual(stats.trimmed_mean([3, 3, 9]), 3.0)
        self.assertIsNone(stats.trimmed_mean([]))
        self.assertEqual(stats.trimmed_mean([None, 2, None]), 2.0)

    def test_summarize(self):
        s = stats.summarize([1, 2, 3, 4, 100])
        self.assertEqual((s["n"], s["mean"], s["median"], s["min"], s["max"]), (5, 3.0, 3, 1, 100))
        self.assertGreater(s["stdev"], 40)
        self.assertEqual(stats.summarize([])["n"], 0)

    def test_ratio(self):
        self.assertEqual(stats.ratio(3.0, 2.0), 1.5)
        self.assertIsNone(stats.ratio(3.0, 0))
        self.assertIsNone(stats.ratio(None, 2.0))


class TestPlan(unittest.TestCase):
    def test_every_scheduler_every_run(self):
        order = plan.interleave(["a", "b"], ["x", "y", "z"], 4)
        self.assertEqual(len(order), 2 * 3 * 4)
        self.assertEqual(len(set(order)), len(order))

    def test_order_rotates_so_no_scheduler_always_goes_first(self):
        order = plan.interleave(["a"], ["x", "y", "z"], 3)
        firsts = [order[i * 3][1] for i in range(3)]
        self.assertEqual(sorted(firsts), ["x", "y", "z"])

    def test_resume_skips_what_is_done(self):
        order = plan.interleave(["a"], ["x", "y"], 2)
        done = {order[0], order[2]}
        self.assertEqual(plan.remaining(order, done), [order[1], order[3]])


class TestReport(unittest.TestCase):
    def test_report_from_saved_results(self):
        with tempfile.TemporaryDirectory() as out:
            p = {"workloads": ["build-100", "forkwait"], "schedulers": ["eevdf", "vrq-llc"], "runs": 3,
                 "secs": 1, "quick": True, "build_units": 2}
            with open(os.path.join(out, "plan.json"), "w") as f:
                json.dump(p, f)
            ss = dict.fromkeys(report.SCHEDSTAT_COLS + ("rq_cpu_time",), 10)
            lines = []
            for r in range(3):
                lines.append({"workload": "build-100", "scheduler": "eevdf", "run": r, "status": "ok",
                              "metrics": {"seconds": 10.0 + r}, "schedstat": ss})
                lines.append({"workload": "build-100", "scheduler": "vrq-llc", "run": r, "status": "ok",
                              "metrics": {"seconds": 9.0 + r}, "schedstat": ss,
                              "bpf": {"vrq_enqueue": {"run_cnt": 10, "ns_per_op": 200.0}}})
                lines.append({"workload": "forkwait", "scheduler": "eevdf", "run": r, "status": "ok",
                              "metrics": {"rate": 100.0}, "schedstat": ss})
                lines.append({"workload": "forkwait", "scheduler": "vrq-llc", "run": r,
                              "status": "ejected" if r == 0 else "ok", "metrics": {"rate": 120.0}, "schedstat": ss})
            with open(os.path.join(out, "results.jsonl"), "w") as f:
                f.write("".join(json.dumps(l) + "\n" for l in lines) + '{"cut short')
            summary = report.report(out)
            b = summary["build-100"]["schedulers"]
            self.assertEqual(b["eevdf"]["mean"], 11.0)
            self.assertAlmostEqual(b["vrq-llc"]["ratio_to_eevdf"], 10.0 / 11.0)
            self.assertEqual(b["vrq-llc"]["bpf_ns_per_op"], 200.0)
            fw = summary["forkwait"]["schedulers"]["vrq-llc"]
            self.assertEqual((fw["runs"], fw["ok"], fw["failures"]), (3, 2, {"ejected": 1}))
            md = open(os.path.join(out, "report.md")).read()
            self.assertIn("| vrq-llc | 0.909 |", md)  # the four-ratio build table
            self.assertIn("ejected 1", md)
            for w in p["workloads"]:
                self.assertTrue(os.path.getsize(os.path.join(out, "plots", f"{w}.png")) > 1000)


if __name__ == "__main__":
    res = unittest.main(exit=False, verbosity=1).result
    failed = len(res.failures) + len(res.errors)
    print(f"bench: {res.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
