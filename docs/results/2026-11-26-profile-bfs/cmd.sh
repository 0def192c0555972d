cd /work/wt-knobs
export PATH=/root/.cargo/bin:/usr/lib/llvm-19/bin:/usr/local/go/bin:/root/go/bin:/root/.cargo/bin:/root/.cargo/bin:/root/.pyenv/plugins/pyenv-virtualenv/shims:/root/.pyenv/shims:/root/.pyenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb VM_OUT=/work/wt-knobs/docs/results/2026-11-26-profile-bfs VRQ_CLOCK=instructions
export VRQ_REPO=/work/wt-knobs
exec /work/wt-knobs/bench/vrqbench/guest.py /work/wt-knobs/docs/results/2026-11-26-profile-bfs instructions
