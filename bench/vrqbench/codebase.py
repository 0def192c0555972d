"""A C code base for the build-throughput workload (VRQ's benchmarks timed kernel builds; we cannot
download a kernel tree at run time, so we generate a project with the same shape: many independent
translation units compiled by gcc -O2 under make -jN, then linked). Deterministic: the same `units`
gives the same sources, so every scheduler compiles exactly the same work."""

import os

FUNCS_PER_UNIT = 12


def _unit_source(u):
    lines = [f"/* generated unit {u} */", "#include <stdint.h>", "#include <string.h>", ""]
    for f in range(FUNCS_PER_UNIT):
        k = (u * 31 + f * 17) % 97 + 3
        lines += [
            f"struct s{u}_{f} {{ uint64_t a[{k}]; double d[{k % 13 + 2}]; }};",
            f"uint64_t u{u}_f{f}(uint64_t x, struct s{u}_{f} *s) {{",
            "    uint64_t acc = x;",
            f"    for (int i = 0; i < {k}; i++) {{",
            f"        acc = acc * {k * 2 + 1}u + (s->a[i] ^ (acc >> {f % 7 + 1}));",
            f"        if (acc % {k} == {f % 5}) acc += (uint64_t)(s->d[i % {k % 13 + 2}] * {f + 1}.5);",
            "        switch (acc & 7) {",
            *[f"        case {c}: acc ^= acc << {c + 1}; s->a[i] += acc; break;" for c in range(7)],
            "        default: memmove(s->a, s->a + 1, sizeof(s->a[0]));",
            "        }",
            "    }",
            "    return acc;",
            "}",
            "",
        ]
    lines.append(f"uint64_t unit{u}(uint64_t x) {{")
    lines.append("    uint64_t r = x;")
    for f in range(FUNCS_PER_UNIT):
        lines.append(f"    {{ struct s{u}_{f} s; memset(&s, (int)r, sizeof(s)); r += u{u}_f{f}(r, &s); }}")
    lines += ["    return r;", "}", ""]
    return "\n".join(lines)


def generate(directory, units):
    """Write `units` C files, main.c and a Makefile into `directory` (created if missing)."""
    os.makedirs(directory, exist_ok=True)
    for u in range(units):
        with open(os.path.join(directory, f"unit{u}.c"), "w") as f:
            f.write(_unit_source(u))
    with open(os.path.join(directory, "main.c"), "w") as f:
        f.write("#include <stdint.h>\n#include <stdio.h>\n")
        f.write("".join(f"uint64_t unit{u}(uint64_t);\n" for u in range(units)))
        f.write("int main(void) { uint64_t r = 1;\n")
        f.write("".join(f"  r = unit{u}(r);\n" for u in range(units)))
        f.write('  printf("%llu\\n", (unsigned long long)r); return 0; }\n')
    objs = " ".join(f"unit{u}.o" for u in range(units))
    with open(os.path.join(directory, "Makefile"), "w") as f:
        f.write(f"OBJS := main.o {objs}\nCFLAGS := -O2 -g\n\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n\n"
                "%.o: %.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n\nclean:\n\trm -f prog *.o\n\n.PHONY: clean\n")
    return directory
