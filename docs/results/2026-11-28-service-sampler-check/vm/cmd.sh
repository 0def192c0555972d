cd /work/wt-service
export PATH=/usr/local/go/bin:/root/go/bin:/root/.cargo/bin:/root/.cargo/bin:/root/.pyenv/plugins/pyenv-virtualenv/shims:/root/.pyenv/shims:/root/.pyenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb VM_OUT=/work/wt-service/docs/results/2026-11-28-service-sampler-check/vm VRQ_CLOCK=instructions PYTHONPATH=/work/wt-service/tests/guest:/work/wt-service/bench
exec docs/results/2026-11-28-service-sampler-check/check.py docs/results/2026-11-28-service-sampler-check/vm 4 eevdf\,vrq-llc reqlat-10ms-w4-m1\,reqlat-open-10ms-60-burst
