#!/usr/bin/env python3
"""Summarise a tracefs text trace of one build-50 run: placements of wake-ups/forks, migrations, idle
entries, wake->run delays, and the time no CPU ran the chain (gaps)."""
import re, sys, collections, statistics

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)$')
KV = re.compile(r'(\w+)=(\S+)')

def parse(path):
    ev = []
    for l in open(path):
        if l.startswith('#'):
            continue
        m = LINE.match(l)
        if not m:
            continue
        comm, pid, cpu, ts, name, rest = m.groups()
        ev.append((float(ts), int(cpu), int(pid), comm, name, rest))
    return ev

def pct(xs, p):
    if not xs: return float('nan')
    xs = sorted(xs); return xs[min(len(xs)-1, int(p/100*len(xs)))]

def analyze(path, verbose=False):
    ev = parse(path)
    t0, t1 = ev[0][0], ev[-1][0]
    cur = {0: 0, 1: 0}           # pid running on each cpu
    cur_comm = {0: 'idle', 1: 'idle'}
    since = {0: t0, 1: t0}
    comm_of = {}
    user = set()                  # pids of the chain (forked within the window, plus make itself)
    waking = {}                   # pid -> (t, waker_cpu, waker_comm, target_from_wakeup)
    pending = {}                  # pid -> dict(kind, t, waker_cpu, target, target_idle)
    runtime = collections.defaultdict(lambda: collections.Counter())
    out = collections.Counter()
    delays = collections.defaultdict(list)
    idle_time = collections.Counter()
    both_idle = 0.0; chain_none = 0.0
    migr = collections.Counter()
    lastcpu = {}
    placements = []
    last_t = t0
    kthread_run = collections.Counter()
    pidrun = collections.defaultdict(collections.Counter)
    def chain_running():
        return any(cur[c] in user for c in (0, 1))
    for ts, cpu, pid, comm, name, rest in ev:
        # time accounting since last event
        dt = ts - last_t
        if cur[0] == 0 and cur[1] == 0: both_idle += dt
        if not chain_running(): chain_none += dt
        last_t = ts
        kv = dict(KV.findall(rest))
        if name == 'sched_process_fork':
            user.add(int(kv['pid'])); user.add(int(kv['child_pid']))
            comm_of[int(kv['child_pid'])] = kv['child_comm']
            out['fork'] += 1
        elif name == 'sched_process_exec':
            out['exec'] += 1
            comm_of[int(kv['pid'])] = kv['filename'].rsplit('/', 1)[-1]
            if cur[cpu] == int(kv['pid']):
                runtime[cur_comm[cpu]][cpu] += ts - since[cpu]
                pidrun[(cur[cpu], cur_comm[cpu])][cpu] += ts - since[cpu]; since[cpu] = ts
                cur_comm[cpu] = comm_of[int(kv['pid'])]
        elif name == 'sched_waking':
            p = int(kv['pid']); waking[p] = (ts, cpu, comm)
        elif name in ('sched_wakeup', 'sched_wakeup_new'):
            p = int(kv['pid']); tgt = int(kv['target_cpu'])
            if name == 'sched_wakeup_new':
                wt, wc, wcomm = ts, cpu, comm; kind = 'fork'
            else:
                wt, wc, wcomm = waking.pop(p, (ts, cpu, comm)); kind = 'wake'
            pending[p] = dict(kind=kind, t=wt, wc=wc, tgt=tgt, tgt_idle=(cur[tgt] == 0), wcomm=wcomm,
                              prev=lastcpu.get(p))
        elif name == 'sched_migrate_task':
            p = int(kv['pid'])
            if p in user:
                o, d = int(kv['orig_cpu']), int(kv['dest_cpu'])
                st = 'pending' if p in pending else ('running' if p in cur.values() else 'queued/sleep')
                migr[(comm_of.get(p, kv['comm']), st)] += 1
                migr['total'] += 1
        elif name == 'sched_switch':
            prev = int(kv['prev_pid']); nxt = int(kv['next_pid'])
            dur = ts - since[cpu]
            runtime[cur_comm[cpu] if cur[cpu] in user or cur[cpu] == 0 else 'k:' + cur_comm[cpu]][cpu] += dur
            if cur[cpu] in user:
                pidrun[(cur[cpu], cur_comm[cpu])][cpu] += dur
            if nxt == 0: out[f'goidle_cpu{cpu}'] += 1
            if prev == 0: idle_time[cpu] += dur
            cur[cpu] = nxt; since[cpu] = ts
            cur_comm[cpu] = 'idle' if nxt == 0 else comm_of.get(nxt, kv['next_comm'])
            lastcpu[nxt] = cpu
            if nxt in pending:
                pd = pending.pop(nxt)
                d = (ts - pd['t']) * 1e6
                u = nxt in user
                who = comm_of.get(nxt, kv['next_comm']) if u else 'kthread'
                same = 'waker' if pd['tgt'] == pd['wc'] else 'other'
                state = 'idle' if pd['tgt_idle'] else 'busy'
                key = (pd['kind'], 'user' if u else 'kthr', same, state)
                out[key] += 1
                delays[key].append(d)
                if u and pd['prev'] is not None and pd['prev'] != cpu:
                    out[(pd['kind'], 'user', 'ran on cpu != prev')] += 1
                if u:
                    placements.append((round(pd['t'] - t0, 6), pd['kind'], pd['wcomm'], pd['wc'], who, pd['prev'], pd['tgt'], state, round(d, 1)))
    tot = t1 - t0
    heavy = [(k, c) for k, c in pidrun.items() if k[1] in ('cc1', 'as', 'ld') and sum(c.values()) > 0.002]
    seq = []
    for (p, name), c in sorted(heavy):
        main = max(c, key=c.get)
        seq.append(f"{name}@{main}" + ("*" if len([v for v in c.values() if v > 0.001]) > 1 else ""))
    light = [(k, c) for k, c in pidrun.items() if k[1] in ('cc', 'make', 'collect2')]
    lcpu = collections.Counter()
    for k, c in light:
        for cc, v in c.items(): lcpu[cc] += v
    flips = sum(1 for a, b in zip(seq, seq[1:]) if a.split('@')[1][0] != b.split('@')[1][0])
    hcpu = collections.Counter()
    for k, c in heavy:
        for cc, v in c.items(): hcpu[cc] += v
    print(f"== {path}: window {tot:.3f}s  both-CPUs-idle {both_idle:.3f}s  no-chain-task-running {chain_none:.3f}s")
    print(f"   heavy (cc1/as/ld) main CPU in order: {' '.join(seq)}  -> CPU changes {flips}; heavy time cpu0 {hcpu[0]:.3f} cpu1 {hcpu[1]:.3f}; light (make/cc/collect2) time cpu0 {lcpu[0]:.3f} cpu1 {lcpu[1]:.3f}")
    print(f"   forks {out['fork']} execs {out['exec']}  goidle cpu0 {out['goidle_cpu0']} cpu1 {out['goidle_cpu1']}  idle time cpu0 {idle_time[0]:.3f} cpu1 {idle_time[1]:.3f}")
    print(f"   user-task migrations {migr['total']}: " + ", ".join(f"{k[0]}/{k[1]}:{v}" for k, v in sorted(migr.items(), key=lambda x: -x[1]) if k != 'total'))
    print("   placements (kind, task, target vs waker CPU, target idle/busy): n, wake->run us p50/p90/mean/sum")
    for key in sorted(delays, key=str):
        xs = delays[key]
        print(f"     {key}: n={len(xs)} p50={pct(xs,50):.0f} p90={pct(xs,90):.0f} mean={statistics.mean(xs):.0f} sum={sum(xs)/1e3:.1f}ms")
    for k, v in out.items():
        if isinstance(k, tuple) and len(k) == 3:
            print(f"     {k}: {v}")
    print("   run time per (task, cpu) s:")
    tops = sorted(runtime.items(), key=lambda x: -sum(x[1].values()))[:14]
    for name, c in tops:
        print(f"     {name:22s} cpu0 {c[0]:.3f} cpu1 {c[1]:.3f}")
    if verbose:
        print("   placements of chain tasks (t, kind, waker, waker_cpu, wakee, prev_cpu, target, state, delay_us):")
        for p in placements:
            print("     ", p)
    return dict(window=tot, both_idle=both_idle, chain_none=chain_none, migr=migr['total'], out=out, delays=delays)

if __name__ == '__main__':
    v = '-v' in sys.argv
    for p in [a for a in sys.argv[1:] if a != '-v']:
        analyze(p, v)
