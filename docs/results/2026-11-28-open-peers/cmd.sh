cd /work/main
export PATH=/usr/local/go/bin:/root/go/bin:/root/.cargo/bin:/root/.cargo/bin:/root/.pyenv/plugins/pyenv-virtualenv/shims:/root/.pyenv/shims:/root/.pyenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb VM_OUT=/work/exp/open-peers VRQ_CLOCK=instructions PYTHONPATH=/work/main/tests/guest:/work/main/bench
exec /work/main/bench/vrqbench/guest.py /work/exp/open-peers instructions
