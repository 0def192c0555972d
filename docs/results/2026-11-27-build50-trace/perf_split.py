#!/usr/bin/env python3
"""Split a `perf script -F time,sym,dso` dump of QEMU (CLOCK_MONOTONIC) into the measured windows of
host_qemu_cpu.json; print per window the share of samples by symbol group, and the top symbols."""
import sys, json, collections, re
rows = json.load(open(sys.argv[2]))
wins = [(r['mono0'], r['mono1'], f"{r['cfg']}-{r['rep']}") for r in rows]
cnt = {w[2]: collections.Counter() for w in wins}
tot = collections.Counter()
for line in open(sys.argv[1]):
    parts = line.split(None, 2)
    if len(parts) < 2: continue
    try: t = float(parts[0].rstrip(':'))
    except ValueError: continue
    rest = parts[1] + (' ' + parts[2] if len(parts) > 2 else '')
    for a, b, name in wins:
        if a <= t <= b:
            m = re.match(r'(.*?)\s*\(([^()]*)\)$', rest.strip())
            sym, dso = (m.group(1), m.group(2)) if m else (rest.strip(), '?')
            if sym == '[unknown]' and 'qemu-system' in dso: sym = '[qemu-unknown]'
            if dso.startswith('/tmp/perf-') or 'JIT' in dso or sym == '[unknown]' and 'anon' in dso: sym = '[tcg-code]'
            cnt[name][sym] += 1; tot[name] += 1
            break
allsyms = collections.Counter()
for c in cnt.values(): allsyms.update(c)
top = [s for s, _ in allsyms.most_common(int(sys.argv[3]) if len(sys.argv) > 3 else 30)]
names = [w[2] for w in wins]
print(f"{'symbol':40s} " + " ".join(f"{n:>10s}" for n in names))
print(f"{'samples':40s} " + " ".join(f"{tot[n]:>10d}" for n in names))
for s in top:
    print(f"{s[:40]:40s} " + " ".join(f"{cnt[n][s]:>10d}" for n in names))
