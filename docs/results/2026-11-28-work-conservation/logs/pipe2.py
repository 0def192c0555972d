import sys, os, subprocess, shutil, time
sys.path.insert(0, "/work/main/tests/guest")
from vrqtest import Scheduler, Stats
for b in ("wc", "sync"): shutil.copy(f"/tmp/exp/scx_vrq-{b}", f"/run/scx_vrq-{b}")
subprocess.run(["sh", "-c", "head -c 8000000 /dev/urandom > /run/rand; perf_x=1"], check=True)
KEYS = ("idle_waits", "idle_wait_us", "sync_handoff", "sync_handoff_ended", "direct_idle")
PIPES = {"pipe-pingpong": "perf bench sched pipe -l 20000 | grep usecs/op",
         "dd|sha256sum": "dd if=/dev/zero bs=64k count=1000 status=none | sha256sum >/dev/null",
         "gzip|gunzip": "gzip -1 < /run/rand | gzip -dc >/dev/null"}
for sh in PIPES.values(): subprocess.run(["sh", "-c", sh], capture_output=True)  # warm the page cache
cfgs = [("eevdf", None), ("old", ["/run/scx_vrq-wc"]), ("new", ["/run/scx_vrq-sync"])]
for rnd in range(3):
    for name, cmd in (cfgs if rnd % 2 == 0 else cfgs[::-1]):
        s = Scheduler(cmd=cmd, name=f"pipe2-{name}-{rnd}").start() if cmd else None
        try:
            st = Stats() if cmd else None
            for pname, sh in PIPES.items():
                if st: st.read()
                t0 = time.monotonic(); out = subprocess.run(["sh", "-c", sh], capture_output=True, text=True).stdout.strip(); t = time.monotonic() - t0
                c = st.read() if st else {}
                print(rnd, name, pname, f"{t:.3f}s", out, {k: c.get(k) for k in KEYS} if c else "", flush=True)
            if st: st.close()
        finally:
            if s: s.stop()
