"""Results: the PASS / FAIL / SKIP / FIGURE lines every suite prints, and its closing line
"SUITE: N passed, N failed, K skipped" (always with the skip count, 0 too; tools/test adds these up:
`^[a-z-]+: [0-9]+ passed, [0-9]+ failed`, then an optional `, [0-9]+ skipped`). A test that cannot run
here (a missing tool, no hotpluggable CPU, a check that needs the VM) is a skip, never a pass."""

import os
import sys

from .env import OUT, log


class Results:
    """Checks and figures of one suite. `figures_dir`: where finish() writes SUITE-figures.txt (the
    output folder by default; None writes no file -- the host-side checks)."""

    def __init__(self, figures_dir=OUT):
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.figures = []
        self.figures_dir = figures_dir

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            log(f"PASS {name}{': ' + detail if detail else ''}")
        else:
            self.failed += 1
            log(f"FAIL {name}{': ' + detail if detail else ''}")
        return ok

    def skip(self, name, why):
        """A test that did not run: counted as skipped, neither passed nor failed."""
        self.skipped += 1
        log(f"SKIP {name}: {why}")

    def figure(self, line):
        self.figures.append(line)
        log(f"FIGURE {line}")

    def summary(self, suite):
        return f"{suite}: {self.passed} passed, {self.failed} failed, {self.skipped} skipped"

    def finish(self, suite):
        """Print the closing line and exit: 1 if any check failed, else 0 (skips do not fail)."""
        if self.figures_dir is not None:
            with open(os.path.join(self.figures_dir, f"{suite}-figures.txt"), "w") as f:
                f.write("\n".join(self.figures) + "\n")
        log(self.summary(suite))
        sys.exit(1 if self.failed else 0)
