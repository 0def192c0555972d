# Sourced by the tools: the toolchain paths scx_vrq builds with.
# scx_utils' build runs `clang` for BPF: prefer LLVM 19 (Debian 12 ships it as clang-19).
for d in /usr/lib/llvm-19/bin /usr/lib/llvm-18/bin /usr/lib/llvm-17/bin; do
    if [ -x "$d/clang" ]; then export PATH="$d:$PATH"; break; fi
done
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
VRQ_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export VRQ_REPO
