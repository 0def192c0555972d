cd /work/wt-wake
export PATH=/usr/local/go/bin:/root/go/bin:/root/.cargo/bin:/root/.cargo/bin:/root/.pyenv/plugins/pyenv-virtualenv/shims:/root/.pyenv/shims:/root/.pyenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb VM_OUT=/work/wt-wake/docs/results/2026-11-29-wake-p99/variants VRQ_CLOCK=instructions PYTHONPATH=/work/wt-wake/tests/guest:/work/wt-wake/bench
exec /work/wt-wake/bench/vrqbench/guest.py /work/wt-wake/docs/results/2026-11-29-wake-p99/variants instructions
