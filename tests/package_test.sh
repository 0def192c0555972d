#!/usr/bin/env bash
# Tests of what the Debian package ships, ending with "package: N passed, N failed, K skipped" (a
# skip: a check that could not run here -- a shell not installed, the VM install test without --deb).
#
#   tests/package_test.sh [--deb FILE]
#
# On the host (cheap, no cargo-deb needed): the man page and completions generated from the CLI
# definition render and parse and name every flag of --help, and the README's knob tables are the
# generator's; scx_vrq.service passes `systemd-analyze verify` in a root laid out as the package lays
# it out (binary, defaults file, man page present), with no warning at all, conflicts with the
# sched_ext project's units and keeps the statistics socket root's; the binary names its commit in
# --version and gives clap's whole message for a bad flag (and for --no-FLAG, how to turn FLAG off).
# With --deb (tools/package --test gives it): the same verify on the unit inside the .deb, then
# tests/guest/package_tests.py in the VM: dpkg -i into the guest's throw-away root, the installed
# scheduler loads under the unit's settings and unloads, docs work, remove and purge. Afterwards
# the host must not have the package: the install lived only in the guest.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../tools/env.sh
source "$here/../tools/env.sh"
cd "$VRQ_REPO"

deb=""
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) deb=${2:-}; shift 2 || shift ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "package_test: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ -n "$deb" ] && [ ! -f "$deb" ]; then
    echo "package_test: --deb $deb: no such file" >&2; exit 2
fi
for tool in systemd-analyze man bash; do
    command -v "$tool" >/dev/null || { echo "package_test: $tool not found" >&2; exit 2; }
done

passed=0 failed=0 skipped=0
check() {  # check NAME CONDITION-STATUS [DETAIL]
    if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "PASS $1";
    else failed=$((failed + 1)); echo "FAIL $1${3:+: $3}"; fi
}
skip() {  # skip NAME WHY: a check that did not run, neither passed nor failed
    skipped=$((skipped + 1)); echo "SKIP $1: $2"
}
work=$(mktemp -d /tmp/vrq-package-test.XXXXXX)
trap 'rm -rf "$work"' EXIT

cargo build --release --locked --bin scx_vrq >&2 \
    && cargo build --release --locked --features gen-docs --bin scx_vrq-gen-docs >&2 \
    || { echo "package_test: build failed"; echo "package: 0 passed, 1 failed, 0 skipped"; exit 1; }
target/release/scx_vrq-gen-docs "$work/docs" >/dev/null
[ "$(target/release/scx_vrq-gen-docs >/dev/null 2>&1; echo $?)" = 2 ]
check "the generator refuses a missing output folder with status 2" $?

# Every long flag --help lists (clap's own --help aside) must be in the man page and the completions.
flags=$(target/release/scx_vrq --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]+' | grep -oE -- '--[a-z-]+' | sort -u)
man_text=$(MANWIDTH=200 man --warnings -l "$work/docs/scx_vrq.8" 2>"$work/man.err" | col -b)
[ -s "$work/man.err" ]; man_warn=$?
check "man page renders without warnings" $((1 - man_warn)) "$(head -c 300 "$work/man.err")"
missing=()
for f in $flags; do
    grep -qF -- "$f" <<<"$man_text" || missing+=("man:$f")
    for c in scx_vrq.bash _scx_vrq scx_vrq.fish; do
        grep -qF -- "${f#--}" "$work/docs/completions/$c" || missing+=("$c:$f")
    done
done
[ ${#missing[@]} -eq 0 ] && [ -n "$flags" ]; check "man page and completions name every flag of --help ($(wc -w <<<"$flags"))" $? "${missing[*]}"
for s in FILES "EXIT STATUS" NOTES; do
    grep -q "^$s" <<<"$man_text"; check "man page has its $s section" $?
done
bash -n "$work/docs/completions/scx_vrq.bash" 2>"$work/bash.err"; check "bash completion parses" $? "$(cat "$work/bash.err")"
for sh in zsh fish; do
    if command -v "$sh" >/dev/null; then
        f=$work/docs/completions/$([ "$sh" = zsh ] && echo _scx_vrq || echo scx_vrq.fish)
        "$sh" -n "$f" 2>"$work/$sh.err"; check "$sh completion parses" $? "$(cat "$work/$sh.err")"
    else
        skip "$sh completion parses" "$sh not installed"
    fi
done

# systemd-analyze verify resolves ExecStart= and Documentation=man: against a root; give it one
# with the package's layout plus this host's own units (the targets the unit is ordered after).
verify_unit() {  # verify_unit ROOT -> prints diagnostics; status of systemd-analyze
    local root=$1
    mkdir -p "$root/usr/lib/systemd/system"
    cp -an /lib/systemd/system/. "$root/usr/lib/systemd/system/"
    MANPATH=$root/usr/share/man systemd-analyze verify --root="$root" scx_vrq.service 2>&1
}
root=$work/root
mkdir -p "$root/usr/bin" "$root/etc/default" "$root/usr/share/man/man8" "$root/usr/lib/systemd/system"
cp target/release/scx_vrq "$root/usr/bin/"
cp packaging/scx_vrq.default "$root/etc/default/scx_vrq"
cp packaging/scx_vrq.service "$root/usr/lib/systemd/system/"
gzip -c "$work/docs/scx_vrq.8" > "$root/usr/share/man/man8/scx_vrq.8.gz"
out=$(verify_unit "$root"); rc=$?
[ $rc -eq 0 ] && [ -z "$out" ]; check "systemd-analyze verify packaging/scx_vrq.service: no error, no warning" $? "$out"
# ...and it is not blind: a misspelt setting must be reported.
sed -i 's/^Restart=/Restrat=/' "$root/usr/lib/systemd/system/scx_vrq.service"
out=$(verify_unit "$root")
grep -q "Unknown key" <<<"$out"; check "systemd-analyze verify reports a misspelt setting" $?
. packaging/scx_vrq.default; [ -n "${SCX_VRQ_FLAGS+set}" ]; check "packaging/scx_vrq.default sets SCX_VRQ_FLAGS" $?
unit=packaging/scx_vrq.service
conflicts=$(sed -n 's/^Conflicts=//p' "$unit" | tr ' ' '\n')
for u in scx.service scx_loader.service; do
    grep -qx "$u" <<<"$conflicts"; check "the unit conflicts with $u (one sched_ext scheduler at a time)" $?
done
grep -qx 'UMask=0077' "$unit"; check "the unit's UMask=0077 keeps the statistics socket root's" $?
grep -qx 'RuntimeDirectoryMode=0700' "$unit"; check "the unit sets its runtime directory's mode, 0700" $?

target/release/scx_vrq-gen-docs --check-readme README.md 2>"$work/readme.err"
check "README's knob tables are the generator's (scx_vrq-gen-docs --check-readme)" $? "$(cat "$work/readme.err")"

# --version: the commit this checkout is at, "-dirty" while the sources the binary is built from differ.
version=$(target/release/scx_vrq --version)
head=$(git rev-parse --short=12 HEAD 2>/dev/null)
if [ -n "$head" ]; then
    changed=$(git status --porcelain --untracked-files=all -- src build.rs Cargo.toml Cargo.lock)
    want="scx_vrq $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)-g$head$([ -n "$changed" ] && echo -dirty) "
    [[ "$version " == "$want"* ]]; check "--version names the commit and whether the tree was dirty" $? \
        "got '$version', want '$want...'"
else
    skip "--version names the commit" "not a git checkout"
fi

# A bad flag: status 2 and clap's whole message, its first line naming the problem.
bad_flag() {  # bad_flag NAME EXPECTED-FIRST-LINE-PREFIX EXPECTED-TEXT ARGS...
    local name=$1 first=$2 text=$3 out rc; shift 3
    out=$(target/release/scx_vrq "$@" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] && [[ "$(head -n1 <<<"$out")" == "$first"* ]] && grep -qF -- "$text" <<<"$out"
    check "$name" $? "status $rc: $out"
}
bad_flag "a bad value lists the valid ones" "scx_vrq: invalid value 'node' for '--queue <MODE>'" \
    "[possible values: global, llc, cpu]" --queue node
bad_flag "a misspelt flag gets the nearest one" "scx_vrq: unexpected argument '--stat' found" \
    "a similar argument exists: '--stats'" --stat 1
bad_flag "a negative number is refused by the flag's range" \
    "scx_vrq: invalid value '-1' for '--rr-interval-ms <MS>': -1 is not in 1..=1000" "try '--help'" --rr-interval-ms -1
bad_flag "an on/off knob takes true or false only" "scx_vrq: invalid value 'yes' for '--sticky [<BOOL>]'" \
    "[possible values: true, false]" --sticky=yes
bad_flag "--no-FLAG is refused, saying how to turn FLAG off" "scx_vrq: unexpected argument '--no-sticky' found" \
    "scx_vrq: to turn --sticky off: --sticky=false" --no-sticky
bad_flag "every on/off flag takes one style, --stats-full too" "scx_vrq: invalid value 'yes' for '--stats-full [<BOOL>]'" \
    "[possible values: true, false]" --stats-full=yes

if [ -n "$deb" ]; then
    droot=$work/deb-root
    dpkg-deb -x "$deb" "$droot"; check "dpkg-deb unpacks $(basename "$deb")" $?
    out=$(verify_unit "$droot"); rc=$?
    [ $rc -eq 0 ] && [ -z "$out" ]; check "systemd-analyze verify on the packaged unit: no error, no warning" $? "$out"
    before=$(dpkg-query -W -f='${Status}' scx-vrq 2>/dev/null || true)
    vm_out=$work/vm
    tools/vm/vm-run --cpus 2 --timeout 900 --out "$vm_out" -- tests/guest/package_tests.py "$(realpath "$deb")" \
        2>&1 | tee "$work/guest.log"
    guest_rc=${PIPESTATUS[0]}
    line=$(grep -E '^package: [0-9]+ passed, [0-9]+ failed' "$work/guest.log" | tail -n1)
    if [ -n "$line" ]; then
        p=$(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$line"); q=$(sed -E 's/.*, ([0-9]+) failed.*/\1/' <<<"$line")
        k=$(sed -nE 's/.*, ([0-9]+) skipped.*/\1/p' <<<"$line")
        passed=$((passed + p)); failed=$((failed + q)); skipped=$((skipped + ${k:-0}))
    fi
    [ "$guest_rc" -eq 0 ] && [ -n "$line" ]; check "the guest suite ran to its end (vm-run status $guest_rc)" $?
    after=$(dpkg-query -W -f='${Status}' scx-vrq 2>/dev/null || true)
    [ "$before" = "$after" ]; check "the host's dpkg state is untouched by the guest's install" $? "before '$before' after '$after'"
else
    skip "the .deb: unpacked, its unit verified, installed, run and removed in the VM (tests/guest/package_tests.py)" \
        "needs --deb (tools/package --test builds it)"
fi

echo "package: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
