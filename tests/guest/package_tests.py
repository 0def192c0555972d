#!/usr/bin/python3
"""The Debian package, installed as a user installs it, inside the VM: dpkg -i into the guest's
throw-away root; the installed /usr/bin/scx_vrq, started the way scx_vrq.service starts it (its
EnvironmentFile, its ExecStart, its capability bounding set, no new privileges, a read-only system
but /run/scx), loads, schedules a few seconds with the flags from /etc/default/scx_vrq, and unloads
on SIGTERM as systemd stops it; it uses no socket family, W+X mapping or real-time policy the unit
forbids; its statistics are root's alone whatever the umask (the loader sets the socket's folder and
mode), --monitor names the running build first and, run by another user, fails; at rest the loader
does not wake at all, and an ejection ends it at once (ops.exit wakes it); the installed man page
renders, the bash completion completes; removal keeps the conffile, purge removes it.

Usage (as root on a sched_ext kernel, inside tools/vm/vm-run: it changes the root file system):
    tests/guest/package_tests.py DEB
"""

import argparse
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import time

os.environ["VRQ_BIN"] = "/usr/bin/scx_vrq"
from vrqtest import (OUT, STATS_SOCK, Results, Stats, as_user, dmesg_len, ejections, load_bound, log, scx_ops,
                     scx_state, start_hog, stats_ready, stop_all, wait_for)

UNIT = "/usr/lib/systemd/system/scx_vrq.service"
DEFAULTS = "/etc/default/scx_vrq"
MAN = "/usr/share/man/man8/scx_vrq.8.gz"
BASH_COMPLETION = "/usr/share/bash-completion/completions/scx_vrq"
FILES = ["/usr/bin/scx_vrq", UNIT, DEFAULTS, MAN, BASH_COMPLETION, "/usr/share/zsh/vendor-completions/_scx_vrq",
         "/usr/share/fish/vendor_completions.d/scx_vrq.fish", "/usr/share/doc/scx-vrq/README.md",
         "/usr/share/doc/scx-vrq/copyright"]
# Syscalls whose use would break under the unit's seccomp-based settings (RestrictAddressFamilies,
# MemoryDenyWriteExecute, RestrictRealtime, RestrictNamespaces, LockPersonality): traced, then checked.
TRACED = "socket,socketpair,mmap,mprotect,sched_setscheduler,sched_setattr,unshare,setns,personality"


def wait_or_kill(proc, secs):
    """`proc`'s exit status within `secs` seconds; killed (and reaped) if it has not exited by then."""
    try:
        return proc.wait(secs)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, **kw)


def unit_settings(path=UNIT):
    """The [Service] settings of the unit, name -> value (the last one wins, as in systemd)."""
    settings, section = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("["):
                section = line.strip("[]")
            elif section == "Service" and "=" in line:
                k, v = line.split("=", 1)
                settings[k.strip()] = v.strip()
    return settings


def environment_file(path):
    """KEY=VALUE lines as systemd's EnvironmentFile= reads them (comments skipped, quotes removed)."""
    env = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(("#", ";")) or "=" not in line:
                continue
            k, v = line.split("=", 1)
            words = shlex.split(v)
            env[k.strip()] = words[0] if len(words) == 1 else " ".join(words)
    return env


def exec_start_argv(settings, env):
    """ExecStart= expanded as systemd does: an unbraced $VAR splits into words at white space."""
    argv = []
    for word in settings["ExecStart"].split():
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        argv.extend(env.get(m.group(1), "").split() if m else [word])
    return argv


def sandboxed(argv, settings, trace_fd):
    """argv wrapped in the unit's sandbox, as far as it can be built without systemd: a private mount
    namespace with / read-only but /run/<RuntimeDirectory> (ProtectSystem=strict), /sys and /proc/sys
    read-only (ProtectKernelTunables), empty /home, /root and /tmp (ProtectHome, PrivateTmp), the
    unit's UMask and RuntimeDirectoryMode; then setpriv keeps only CapabilityBoundingSet and sets
    no_new_privs; strace records TRACED into the inherited descriptor trace_fd (the private /tmp may
    hide the output folder's path)."""
    caps = ",".join("+" + c.lower().removeprefix("cap_") for c in settings["CapabilityBoundingSet"].split())
    runtime = "/run/" + settings["RuntimeDirectory"]
    assert settings.get("ProtectSystem") == "strict" and settings.get("NoNewPrivileges") == "yes"
    setup = " && ".join([
        f"mkdir -p {runtime}", f"chmod {settings.get('RuntimeDirectoryMode', '0755')} {runtime}",
        f"mount --bind {runtime} {runtime}",
        "mount -o remount,bind,ro /",
        "mount -o remount,bind,ro /sys",
        "mount --bind /proc/sys /proc/sys", "mount -o remount,bind,ro /proc/sys",
        "mount -t tmpfs -o ro none /home", "mount -t tmpfs -o ro none /root", "mount -t tmpfs none /tmp",
        f"umask {settings.get('UMask', '0022')}",
    ])
    inner = (f"{setup} && exec strace -f -qq -o /proc/self/fd/{trace_fd} -e trace={TRACED} "
             f"setpriv --bounding-set=-all,{caps} --inh-caps=-all --no-new-privs -- {shlex.join(argv)}")
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", inner]


def traced_violations(trace_log):
    """Calls in the trace (setpriv, which becomes the scheduler, and the scheduler's threads) that
    the unit's seccomp-based settings would refuse."""
    bad, seen = [], {}
    with open(trace_log) as f:
        for line in f:
            pid, _, call = line.partition(" ")
            call = call.strip()
            if not pid.isdigit():
                continue
            name = call.split("(", 1)[0]
            if re.fullmatch(r"[a-z_0-9]+", name):  # not "<... resumed>" nor signal lines
                seen[name] = seen.get(name, 0) + 1
            if call.startswith(("socket(", "socketpair(")) and "AF_UNIX" not in call:
                bad.append(call)
            elif call.startswith(("mmap(", "mprotect(")) and "PROT_WRITE" in call and "PROT_EXEC" in call:
                bad.append(call)
            elif call.startswith(("sched_setscheduler(", "sched_setattr(")) and re.search(r"SCHED_(FIFO|RR|DEADLINE)", call):
                bad.append(call)
            elif call.startswith(("unshare(", "setns(")) and "= -1" not in call:
                bad.append(call)
            elif call.startswith("personality(") and "0xffffffff" not in call:
                bad.append(call)
    return bad, seen


def scheduler_child(pid):
    """The pid of the process strace started (the scheduler, after setpriv's exec)."""
    def child():
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                kids = f.read().split()
            return int(kids[0]) if kids else None
        except OSError:
            return None
    wait_for(lambda: child() is not None, 30)
    return child()


def test_install(r, deb):
    # dpkg's man-db trigger would rebuild the whole man index, minutes under emulation; it is not
    # what is tested here (this file is the guest's throw-away copy of the host's).
    if os.path.exists("/var/lib/man-db/auto-update"):
        os.unlink("/var/lib/man-db/auto-update")
    res = sh(["dpkg", "-i", deb])
    r.check("dpkg -i installs the package", res.returncode == 0, (res.stdout + res.stderr).strip()[-300:])
    status = sh(["dpkg-query", "-W", "-f=${Status} ${Version}", "scx-vrq"]).stdout
    r.check("dpkg reports it installed", status.startswith("install ok installed"), status)
    missing = [f for f in FILES if not os.path.exists(f)]
    r.check("every file is where it belongs", not missing, f"missing: {missing}")
    conffiles = sh(["dpkg-query", "-W", "-f=${Conffiles}", "scx-vrq"]).stdout
    r.check("/etc/default/scx_vrq is a conffile", DEFAULTS in conffiles, conffiles.strip())
    version = sh(["/usr/bin/scx_vrq", "--version"])
    r.check("the installed binary runs", version.returncode == 0 and "scx_vrq" in version.stdout,
            (version.stdout + version.stderr).strip())


def test_docs(r):
    man = sh(["man", "--warnings", "-l", MAN], env={**os.environ, "MANWIDTH": "100"})
    text = re.sub(".\b", "", man.stdout)
    r.check("man -l renders the page without warnings",
            man.returncode == 0 and "SYNOPSIS" in text and "--rr-interval-ms" in text and "FILES" in text
            and not man.stderr.strip(), man.stderr.strip()[:300])
    by_name = sh(["man", "-w", "8", "scx_vrq"])
    r.check("man 8 scx_vrq finds it", by_name.stdout.strip() == MAN, (by_name.stdout + by_name.stderr).strip())
    syntax = sh(["bash", "-n", BASH_COMPLETION])
    r.check("bash completion: valid syntax", syntax.returncode == 0, syntax.stderr.strip())
    script = (f"source {BASH_COMPLETION}; f=$(complete -p scx_vrq | sed -E 's/.*-F ([^ ]+).*/\\1/'); "
              "COMP_WORDS=(scx_vrq --queue ''); COMP_CWORD=2; COMP_LINE='scx_vrq --queue '; COMP_POINT=16; "
              "$f scx_vrq '' --queue; echo ${COMPREPLY[@]}; "
              "COMP_WORDS=(scx_vrq --rr); COMP_CWORD=1; $f scx_vrq --rr scx_vrq; echo ${COMPREPLY[@]}")
    done = sh(["bash", "-c", script]).stdout.splitlines()
    r.check("bash completion completes --queue values and flag names",
            len(done) == 2 and set(done[0].split()) == {"global", "llc", "cpu"} and "--rr-interval-ms" in done[1],
            f"{done}")


def test_service_start(r, secs=4):
    """The installed scheduler under the unit's settings, with the example flags of the defaults file."""
    with open(DEFAULTS) as f:
        text = f.read()
    example = re.search(r"^#(SCX_VRQ_FLAGS=.*)$", text, re.M)
    loads = "the installed scx_vrq loads under the unit's sandbox"
    after_load = ["its flags came from /etc/default/scx_vrq", f"it schedules for {secs} s",
                  "SIGTERM unloads it cleanly (exit 0, state disabled, no ejection)",
                  "no call the unit's seccomp settings refuse (sockets, W+X maps, real-time, namespaces)"]
    r.check("the defaults file has a commented example", example is not None)
    if example is None:
        for name in [loads] + after_load:
            r.skip(name, "no example flags to start it with")
        return
    with open(DEFAULTS, "w") as f:  # the guest's copy: the administrator's edit
        f.write(text + example.group(1) + "\n")
    settings = unit_settings()
    env = environment_file(settings["EnvironmentFile"].lstrip("-"))
    argv = exec_start_argv(settings, env)
    wanted_queue = argv[argv.index("--queue") + 1] if "--queue" in argv else "llc"
    log(f"starting as the unit would: {shlex.join(argv)}")
    trace_log = os.path.join(OUT, "package-strace.log")
    since = dmesg_len()
    logf = open(os.path.join(OUT, "package-sched.log"), "w")
    tracef = open(trace_log, "w")
    proc = subprocess.Popen(sandboxed(argv, settings, tracef.fileno()), stdout=logf, stderr=subprocess.STDOUT,
                            pass_fds=(tracef.fileno(),))
    loaded = wait_for(lambda: (scx_state() == "enabled" and stats_ready()) or proc.poll() is not None, load_bound())
    pid = scheduler_child(proc.pid)
    r.check(loads,
            loaded and proc.poll() is None and scx_ops().startswith("vrq"),
            f"state={scx_state()} ops={scx_ops()} exit={proc.poll()} log: {open(logf.name).read()[-300:]}")
    if proc.poll() is not None or pid is None:
        why = (f"it exited ({proc.poll()})" if proc.poll() is not None
               else "its process was not found under unshare/strace/setpriv")
        for name in after_load:
            r.skip(name, why)
        return
    with Stats() as stats:
        hog = start_hog()
        time.sleep(secs)
        counters = stats.read()
    stop_all([hog])
    r.check(after_load[0], counters.get("queue_mode") == wanted_queue,
            f"queue_mode={counters.get('queue_mode')} wanted {wanted_queue}")
    r.check(after_load[1], counters.get("dispatch_local", 0) > 0 and scx_state() == "enabled",
            f"dispatch_local={counters.get('dispatch_local')} state={scx_state()}")
    os.kill(pid, signal.SIGTERM)  # systemctl stop
    rc = wait_or_kill(proc, 30)
    logf.close()
    tracef.close()
    wait_for(lambda: scx_state() == "disabled", 10)
    r.check(after_load[2],
            rc == 0 and scx_state() == "disabled" and not ejections(since),
            f"rc={rc} state={scx_state()} ejections={ejections(since)}")
    bad, seen = traced_violations(trace_log)
    r.check(after_load[3],
            not bad and seen.get("mmap", 0) > 0, "; ".join(bad[:5]) or f"traced: {seen}")


def context_switches(pid):
    """Context switches of every thread of `pid` so far (each a time it slept or was preempted)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                        total += int(line.split()[1])
        except OSError:
            pass  # a thread that ended meanwhile
    return total


def first_line(proc, timeout):
    """The first line `proc` writes on stdout within `timeout` s, or None."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline().rstrip("\n") if ready else None


def test_loader(r, idle_secs=6):
    """The installed loader, without the sandbox's tracer (which would stop it at every system call),
    in the unit's runtime directory but under umask 000 and with its statistics folder left open
    (0777) by an earlier run: the socket's modes are the loader's own; its wake-ups at rest; --monitor
    beside it, as root and as another user; then loaded again and ejected by the kernel (sysrq-S)."""
    names = ["the statistics socket 0600 in a folder 0700, set by the loader (umask 000, the folder left 0777)",
             f"at rest the loader does not wake ({idle_secs} s)",
             "--monitor first names the running build, as --version does",
             "--monitor stops at once on SIGINT, status 0",
             "--monitor as a user who may not read the statistics exits 1, saying why",
             "the loader unloads on SIGINT, status 0",
             "an ejection (sysrq-S) ends the loader, status 1, naming it, within three times the time a SIGINT "
             "unload took in this boot"]
    settings = unit_settings()
    umask, dir_mode = settings.get("UMask"), settings.get("RuntimeDirectoryMode")
    if umask is None or dir_mode is None:
        r.check(names[0], False, f"the unit sets UMask={umask} RuntimeDirectoryMode={dir_mode}")
        for name in names[1:]:
            r.skip(name, "the unit sets no UMask or RuntimeDirectoryMode")
        return
    runtime = "/run/" + settings["RuntimeDirectory"]
    os.makedirs(runtime, exist_ok=True)  # what systemd does for RuntimeDirectory=, with its mode
    os.chmod(runtime, int(dir_mode, 8))
    folder = os.path.dirname(STATS_SOCK)
    os.makedirs(folder, exist_ok=True)
    os.chmod(folder, 0o777)
    logf = open(os.path.join(OUT, "package-loader.log"), "w")
    proc = subprocess.Popen(["sh", "-c", "umask 000 && exec /usr/bin/scx_vrq"], stdout=logf,
                            stderr=subprocess.STDOUT)
    loaded = wait_for(lambda: (scx_state() == "enabled" and stats_ready()) or proc.poll() is not None, load_bound())
    if not loaded or proc.poll() is not None:
        r.check(names[0], False, f"it did not load: exit={proc.poll()} state={scx_state()}")
        for name in names[1:]:
            r.skip(name, "the scheduler did not load")
        stop_all([proc])
        return
    paths = [runtime, folder, STATS_SOCK]
    modes = {p: os.stat(os.path.realpath(p)).st_mode & 0o777 for p in paths}
    r.check(names[0], modes == {runtime: int(dir_mode, 8), folder: 0o700, STATS_SOCK: 0o600},
            f"{ {p: oct(m) for p, m in modes.items()} }")

    time.sleep(1)  # past stats_ready()'s connection
    before = context_switches(proc.pid)
    time.sleep(idle_secs)
    woke = context_switches(proc.pid) - before
    # a loader that looked for the exit once a second, as it once did, switched idle_secs times or more
    r.check(names[1], woke <= 1, f"{woke} context switches in {idle_secs} s")

    version = sh(["/usr/bin/scx_vrq", "--version"]).stdout.strip()
    mon = subprocess.Popen(["/usr/bin/scx_vrq", "--monitor", "0.5"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    line = first_line(mon, 30)
    # the build as --version names it, then what the loader chose (", group accounting cgroup (auto)")
    names_build = line is not None and (line == f"[scx_vrq] {version}" or line.startswith(f"[scx_vrq] {version}, "))
    r.check(names[2], names_build and "-g" in version, f"first line {line!r}, --version {version!r}")
    mon.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    rc = wait_or_kill(mon, 10)
    r.check(names[3], rc == 0 and time.monotonic() - t0 < 5, f"rc={rc} after {time.monotonic() - t0:.1f} s")

    try:
        res = sh(as_user(65534, ["/usr/bin/scx_vrq", "--monitor", "1"]), timeout=60)
        r.check(names[4], res.returncode == 1 and "cannot read the statistics" in res.stderr
                and "Permission denied" in res.stderr, f"rc={res.returncode} stderr={res.stderr.strip()[-300:]!r}")
    except subprocess.TimeoutExpired:
        r.check(names[4], False, "still running after 60 s")

    proc.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    rc = wait_or_kill(proc, load_bound())
    # the reference for the ejection below: the same loader's exit on request, in this boot (it unloads
    # the scheduler itself, where after an ejection the kernel already has)
    unload_took = time.monotonic() - t0
    logf.close()
    r.check(names[5], rc == 0 and wait_for(lambda: scx_state() == "disabled", 10),
            f"rc={rc} state={scx_state()} after {unload_took:.2f} s")

    log_path = os.path.join(OUT, "package-loader-ejected.log")
    with open(log_path, "w") as logf:
        proc = subprocess.Popen(["/usr/bin/scx_vrq"], stdout=logf, stderr=subprocess.STDOUT)
        if not wait_for(lambda: (scx_state() == "enabled" and stats_ready()) or proc.poll() is not None,
                        load_bound()) or proc.poll() is not None:
            stop_all([proc])
            return r.check(names[6], False, f"it did not load again: exit={proc.poll()} state={scx_state()}")
        time.sleep(1)
        with open("/proc/sysrq-trigger", "w") as f:
            f.write("S")
        t0 = time.monotonic()
        rc = wait_or_kill(proc, 10)
        took = time.monotonic() - t0
    with open(log_path) as f:
        tail = f.read()[-400:]
    # Woken by the exit's ring buffer, the loader ends about as fast as its own unload; one that missed
    # the exit would wait for the kill. (A loader that polls for it is the idle check's to catch.) The
    # bound scales with this machine's speed, as the reference does.
    r.check(names[6], rc == 1 and took <= 3 * unload_took and "disabled by sysrq-S" in tail,
            f"rc={rc} after {took:.2f} s (SIGINT unload {unload_took:.2f} s): {tail!r}")


def test_remove(r):
    res = sh(["dpkg", "-r", "scx-vrq"])
    r.check("dpkg -r removes it and keeps the conffile",
            res.returncode == 0 and not os.path.exists("/usr/bin/scx_vrq") and os.path.exists(DEFAULTS),
            (res.stdout + res.stderr).strip()[-300:])
    res = sh(["dpkg", "-P", "scx-vrq"])
    r.check("dpkg -P purges the conffile", res.returncode == 0 and not os.path.exists(DEFAULTS),
            (res.stdout + res.stderr).strip()[-300:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("deb", help="the .deb that tools/package built")
    args = ap.parse_args()
    if not os.path.isfile(args.deb):
        print(f"package_tests: {args.deb} is not a file", file=sys.stderr)
        sys.exit(2)
    if scx_state() != "disabled":
        print(f"package_tests: a sched_ext scheduler is already {scx_state()}", file=sys.stderr)
        sys.exit(2)
    r = Results()
    test_install(r, args.deb)
    test_docs(r)
    test_service_start(r)
    test_loader(r)
    test_remove(r)
    r.finish("package")


if __name__ == "__main__":
    main()
