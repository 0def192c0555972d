#!/usr/bin/env python3
"""From perf-split.txt: per window, samples total and in QEMU's softmmu TLB-miss path (named symbols),
QEMU's unsymbolised code, and translated guest code."""
import sys, collections, re
lines = open(sys.argv[1]).read().splitlines()
hdr = lines[0].split()[1:]
rows = {l[:40].strip(): [int(x) for x in l[41:].split()] for l in lines[1:]}
tlb = [t for t in ['tlb_set_page_full', 'x86_cpu_tlb_fill', 'probe_access_full_mmu', 'helper_ldub_mmu', 'helper_ldq_mmu',
       'helper_ldul_mmu', 'helper_lduw_mmu', 'address_space_translate_for_iotlb', 'get_pg_mode', 'tlb_set_page_with_attrs',
       'qemu_ram_addr_from_host_nofail', 'memory_region_get_ram_ptr'] if t in rows]
by = collections.defaultdict(list)
for i, h in enumerate(hdr):
    s = sum(rows[t][i] for t in tlb); tot = rows['samples'][i]; unk = rows['[qemu-unknown]'][i]; tcg = rows['[tcg-code]'][i]
    print(f"{h:11s} total {tot:6d}  tlb-path {s:5d} ({100*s/tot:.1f}%)  qemu-unsymbolised {unk:5d} ({100*unk/tot:.1f}%)  tcg-code {tcg:5d}")
    by[re.sub(r'-\d+$', '', h)].append((tot, s, unk))
for k, v in by.items():
    n = len(v)
    print(f"mean {k:10s} total {sum(x[0] for x in v)/n:7.0f}  tlb-path {sum(x[1] for x in v)/n:5.0f}  unsymbolised {sum(x[2] for x in v)/n:5.0f}")
