cd /work/wt-grain
export PATH=/usr/local/go/bin:/root/go/bin:/root/.cargo/bin:/root/.cargo/bin:/root/.pyenv/plugins/pyenv-virtualenv/shims:/root/.pyenv/shims:/root/.pyenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb VM_OUT=/work/exp/burst VRQ_CLOCK=instructions PYTHONPATH=/work/wt-grain/tests/guest:/work/wt-grain/bench
exec /work/wt-grain/bench/vrqbench/guest.py /work/exp/burst instructions
