"""scx_vrq bench suite: VRQ's measurement method, automated (see bench/README.md)."""
