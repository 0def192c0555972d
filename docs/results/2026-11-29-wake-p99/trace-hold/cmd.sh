cd /work/wt-wake
export PATH=/usr/local/go/bin:/root/go/bin:/root/.cargo/bin:/root/.cargo/bin:/root/.pyenv/plugins/pyenv-virtualenv/shims:/root/.pyenv/shims:/root/.pyenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb VM_OUT=/work/wt-wake/docs/results/2026-11-29-wake-p99/trace-hold VRQ_CLOCK=instructions PYTHONPATH=/work/wt-wake/tests/guest:/work/wt-wake/bench
/work/wt-wake/tools/vm/vrq-stage target/release/scx_vrq target/bench/reqlat || exit 2
exec python3 bench/vrqbench/reqlat_trace.py run /work/wt-wake/docs/results/2026-11-29-wake-p99/trace-hold eevdf\,vrq-llc\,vrq-hold-floor\,vrq-target-off reqlat-1ms-w4-m1
