"""scx_vrq bench suite: the seeds' measurement method, automated (see bench/README.md)."""
