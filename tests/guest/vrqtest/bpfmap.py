"""The bpf() system call for what the guest has no bpftool for: write one element of a loaded BPF map
found by name (the in-VM tests use it for scx_vrq's test interface, the `test_cpuperf` map: per-CPU
performance levels standing in for frequency scaling, which a VM does not have), and name a loaded
program by its id (the bench's BPF ns/op per callback).

Only what those need: array maps with u32 keys and u32 values; program names.
"""

import ctypes
import os
import struct

SYS_BPF = 321  # x86_64
BPF_MAP_UPDATE_ELEM = 2
BPF_MAP_GET_NEXT_ID = 12
BPF_PROG_GET_FD_BY_ID = 13
BPF_MAP_GET_FD_BY_ID = 14
BPF_OBJ_GET_INFO_BY_FD = 15

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _bpf(cmd, attr):
    buf = ctypes.create_string_buffer(bytes(attr), 128)
    rc = _libc.syscall(SYS_BPF, cmd, buf, 128)
    if rc < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return rc, buf.raw


def _map_ids():
    start = 0
    while True:
        try:
            _, raw = _bpf(BPF_MAP_GET_NEXT_ID, struct.pack("<III", start, 0, 0))
        except OSError:
            return
        start = struct.unpack_from("<I", raw, 4)[0]
        yield start


def _map_info(fd):
    info = ctypes.create_string_buffer(256)
    attr = struct.pack("<IIQ", fd, 256, ctypes.addressof(info))
    _bpf(BPF_OBJ_GET_INFO_BY_FD, attr)
    # struct bpf_map_info: type, id, key_size, value_size, max_entries, map_flags, name[16]
    typ, map_id, key_size, value_size, max_entries, _flags = struct.unpack_from("<6I", info.raw, 0)
    name = info.raw[24:40].split(b"\0", 1)[0].decode()
    return {"id": map_id, "name": name, "key_size": key_size, "value_size": value_size,
            "max_entries": max_entries}


class BpfMap:
    """The newest loaded map called `name` (an earlier scheduler's map may linger a moment)."""

    def __init__(self, name):
        best = None
        for map_id in _map_ids():
            try:
                fd, _ = _bpf(BPF_MAP_GET_FD_BY_ID, struct.pack("<III", map_id, 0, 0))
            except OSError:
                continue
            info = _map_info(fd)
            if info["name"] == name and (best is None or info["id"] > best[1]["id"]):
                if best:
                    os.close(best[0])
                best = (fd, info)
            else:
                os.close(fd)
        if best is None:
            raise LookupError(f"no loaded BPF map named {name!r}")
        self.fd, self.info = best

    def update_u32(self, key, value):
        k = ctypes.c_uint32(key)
        v = ctypes.c_uint32(value)
        attr = struct.pack("<IIQQQ", self.fd, 0, ctypes.addressof(k), ctypes.addressof(v), 0)
        _bpf(BPF_MAP_UPDATE_ELEM, attr)

    def close(self):
        os.close(self.fd)


def prog_name(prog_id):
    """The name of loaded BPF program `prog_id` (the kernel keeps the first 15 characters), or None."""
    try:
        fd, _ = _bpf(BPF_PROG_GET_FD_BY_ID, struct.pack("<III", int(prog_id), 0, 0))
    except (OSError, ValueError):
        return None
    try:
        info = ctypes.create_string_buffer(256)
        _bpf(BPF_OBJ_GET_INFO_BY_FD, struct.pack("<IIQ", fd, 256, ctypes.addressof(info)))
        # struct bpf_prog_info: ... map_ids (u64) at 56, then name[16] at 64
        return info.raw[64:80].split(b"\0", 1)[0].decode() or None
    except OSError:
        return None
    finally:
        os.close(fd)
