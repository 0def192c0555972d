import sys, os, subprocess, shutil, time
sys.path.insert(0, "/work/main/tests/guest")
from vrqtest import Scheduler, Stats
shutil.copy("/tmp/exp/scx_vrq-wc", "/run/scx_vrq")
KEYS = ("idle_waits", "idle_wait_us", "sync_handoff", "direct_idle", "idle_kicks", "preempt_direct", "preempt_kicks")
PIPES = {"dd|sha256sum": "dd if=/dev/zero bs=64k count=1500 status=none | sha256sum >/dev/null",
         "yes|gzip": "yes | head -c 60000000 | gzip -1 >/dev/null"}
cfgs = [("eevdf", None), ("vrq", ["/run/scx_vrq"]), ("vrq-nosync", ["/run/scx_vrq", "--sync-handoff", "false"])]
for rnd in range(3):
    for name, cmd in (cfgs if rnd % 2 == 0 else cfgs[::-1]):
        s = Scheduler(cmd=cmd, name=f"pipe-{name}-{rnd}").start() if cmd else None
        try:
            st = Stats() if cmd else None
            for pname, sh in PIPES.items():
                if st: st.read()
                t0 = time.monotonic(); subprocess.run(["sh", "-c", sh], check=True); t = time.monotonic() - t0
                c = st.read() if st else {}
                print(rnd, name, pname, f"{t:.3f}s", {k: c.get(k) for k in KEYS} if c else "", flush=True)
            if st: st.close()
        finally:
            if s: s.stop()
