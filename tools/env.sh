# Sourced by the tools: the toolchain paths scx_vrq builds with, and the Python path of its packages.
# scx_utils' build runs `clang` for BPF: prefer LLVM 19 (Debian 12 ships it as clang-19).
for d in /usr/lib/llvm-19/bin /usr/lib/llvm-18/bin /usr/lib/llvm-17/bin; do
    if [ -x "$d/clang" ]; then export PATH="$d:$PATH"; break; fi
done
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
VRQ_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export VRQ_REPO
# The repository's Python packages by name: vrqtest (tests/guest/vrqtest, the in-guest tests' harness)
# and vrqbench (bench/vrqbench), this checkout's ahead of any the caller has (tests/guest/vrqtest/
# __init__.py says who needs it; tools/vm/vm-run passes the same path into the guest).
case "${PYTHONPATH:-}" in
    "$VRQ_REPO/tests/guest:$VRQ_REPO/bench" | "$VRQ_REPO/tests/guest:$VRQ_REPO/bench:"*) ;;
    *) PYTHONPATH="$VRQ_REPO/tests/guest:$VRQ_REPO/bench${PYTHONPATH:+:$PYTHONPATH}" ;;
esac
export PYTHONPATH
