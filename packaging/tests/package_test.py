#!/usr/bin/env python3
"""Tests of the DuoDB tarball, built from a configured build tree with cpack (the same
configuration `cmake --build BUILD --target package` uses), into a scratch directory.

    package_test.py --build-dir BUILD reproducible
    package_test.py --build-dir BUILD contents
    package_test.py --build-dir BUILD debian12 [--rootfs-cache DIR] [--mirror URL]

reproducible  packs twice (different umask), compares the bytes, checks the .sha256.
contents      one top directory named like the file, bin/ lib/ share/duodb/ docs/, every
              program, RPATH $ORIGIN/../lib on the programs and $ORIGIN on the bundled
              libraries, the glibc floor of the unpacked tree equal to the one in the name;
              then the tree's bin/duo, called through a symlink from a directory with a
              space in its name, runs a cluster (up, down, up again on the same ports, SQL).
              Needs the mysql client.
debian12      unpacks into an empty directory inside a clean Debian 12 (bookworm, minbase)
              root file system (debootstrap, cached in --rootfs-cache and used through an
              overlay mount so it stays clean), runs ldd there on every ELF (nothing
              "not found"), starts duo_mgmd + 2 duo_datad + duo_sqld there with chroot from
              the sample laptop.ini — from a path containing a space and through a symlink
              to the tree — runs SQL through them with the mysql client outside the chroot
              over 127.0.0.1, stops everything and leaves no process or mount behind.
              Needs root and debootstrap, else exits 77 (skipped). An aarch64 tarball
              gets an arm64 root file system and runs under qemu-user through binfmt_misc
              (`scripts/bootstrap --arm64`; skipped when qemu-aarch64 is not registered).

Exit codes: 0 pass, 1 fail, 77 skipped.
"""

import argparse
import fcntl
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "testlib"))
import elf_tools  # noqa: E402
from duo_cluster import pick_ports  # noqa: E402
import glibc_floor  # noqa: E402

SKIP = 77
NAME_RE = re.compile(r"^duodb-(\d+\.\d+\.\d+)-linux-glibc(\d+\.\d+)-(x86_64|aarch64)\.tar\.gz$")
PROGRAMS = ("duo", "duo_mgmd", "duo_datad", "duo_sqld", "duo_mgm", "duo_bench",
            "duo_datacheck", "duo_tls_keys")
SAMPLES = ("config/laptop.ini", "config/two-nodes-three-hosts.ini",
           "config/four-nodes-two-groups.ini", "systemd/duodb-mgmd.service",
           "systemd/duodb-datad@.service", "systemd/duodb-sqld@.service",
           "bench/sysbench_compare.py", "bench/native_vs_redis.py", "bench/bench_bin.py")
MGM_NODE_ID, DATA_NODE_IDS, SQLD_NODE_ID = 49, (1, 2), 54
START_TIMEOUT_S = 180
STOP_TIMEOUT_S = 60


class TestFailure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise TestFailure(what)


def log(text):
    print("package_test: " + text, flush=True)


def pack(build_dir, out_dir, umask=0o022):
    """Runs cpack on the build tree into out_dir; returns the tarball's path."""
    old = os.umask(umask)
    try:
        proc = subprocess.run(["cpack", "--config", os.path.join(build_dir, "CPackConfig.cmake"),
                               "-B", out_dir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    finally:
        os.umask(old)
    out = proc.stdout.decode(errors="replace")
    check(proc.returncode == 0, "cpack failed:\n" + out)
    tarballs = glob.glob(os.path.join(out_dir, "duodb-*.tar.gz"))
    check(len(tarballs) == 1, "expected one tarball in %s: %s" % (out_dir, tarballs))
    return tarballs[0]


def sha256_file_ok(tarball):
    with open(tarball + ".sha256") as f:
        line = f.read()
    proc = subprocess.run(["sha256sum", "-c", "-"], input=line.encode(),
                          cwd=os.path.dirname(tarball), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    return proc.returncode == 0 and line.endswith("  %s\n" % os.path.basename(tarball))


def scenario_reproducible(options, scratch):
    first = pack(options.build_dir, os.path.join(scratch, "a"), umask=0o022)
    second = pack(options.build_dir, os.path.join(scratch, "b"), umask=0o077)
    check(os.path.basename(first) == os.path.basename(second), "names differ")
    with open(first, "rb") as a, open(second, "rb") as b:
        check(a.read() == b.read(), "two packs of one build differ: %s %s" % (first, second))
    check(sha256_file_ok(first), "bad .sha256 beside %s" % first)
    log("two packs are byte-identical: %s (%d bytes)" % (os.path.basename(first),
                                                        os.path.getsize(first)))


def unpack(tarball, into):
    """Unpacks tarball into the existing directory into; returns the top directory."""
    with tarfile.open(tarball) as tar:
        members = tar.getmembers()
        top = os.path.basename(tarball)[:-len(".tar.gz")]
        stray = [m.name for m in members if m.name != top and not m.name.startswith(top + "/")]
        check(not stray, "entries outside %s/: %s" % (top, stray[:5]))
        check(all(m.uid == 0 and m.gid == 0 for m in members), "an entry not owned by 0:0")
        tar.extractall(into)
    return os.path.join(into, top)


def scenario_contents(options, scratch):
    tarball = pack(options.build_dir, os.path.join(scratch, "out"))
    match = NAME_RE.match(os.path.basename(tarball))
    check(match is not None, "tarball name: %s" % os.path.basename(tarball))
    tree = unpack(tarball, os.path.join(scratch, "out"))
    for sub in ("bin", "lib", "share/duodb", "docs"):
        check(os.path.isdir(os.path.join(tree, sub)), "no %s/" % sub)
    for program in PROGRAMS:
        check(os.access(os.path.join(tree, "bin", program), os.X_OK), "no bin/%s" % program)
    for sample in SAMPLES:
        check(os.path.isfile(os.path.join(tree, "share/duodb", sample)), "no %s" % sample)
    check(os.path.isfile(os.path.join(tree, "docs/operations.md")), "no docs/operations.md")
    for path in elf_tools.elf_files(tree):
        out = subprocess.run(["readelf", "-d", "-W", path], check=True,
                             stdout=subprocess.PIPE).stdout.decode()
        rpath = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r\w*path: \[([^\]]*)\]", out)
        want = "$ORIGIN/../lib" if "/bin/" in path else "$ORIGIN"
        check(rpath == [want], "%s: run path %s, want %s" % (path, rpath, want))
    # libaio.so.1: Ubuntu 24.04 and Debian 13 have only libaio.so.1t64.
    for soname in ("libssl.so.3", "libcrypto.so.3", "libaio.so.1"):
        check(os.path.isfile(os.path.join(tree, "lib", soname)), "lib/%s not bundled" % soname)
    floor, _ = glibc_floor.floor_of(tree, "objdump")
    check(floor == match.group(2), "glibc floor of the tree %s, name says %s"
          % (floor, match.group(2)))
    log("%s: layout, run paths and glibc floor %s check out"
        % (os.path.basename(tarball), floor))
    launcher_from_tree(tree, scratch)


def launcher_from_tree(tree, scratch):
    """bin/duo of the unpacked tree, called through a symlink to it in a directory whose
    name holds a space (as a user links it into ~/bin), finds its sibling programs: a
    cluster comes up, serves SQL, and `duo down && duo up` on the same ports works."""
    link_dir = os.path.join(scratch, "my bin")
    os.makedirs(link_dir)
    os.symlink(os.path.join(tree, "bin", "duo"), os.path.join(link_dir, "duo"))
    data_dir = os.path.join(scratch, "duo data")
    base = pick_ports(4)  # mgmd, two data nodes, duo_sqld
    sql_port = base + 3

    def duo(*args):
        proc = subprocess.run([os.path.join(link_dir, "duo")] + list(args)
                              + ["--data-dir", data_dir], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=START_TIMEOUT_S)
        return proc.returncode, proc.stdout.decode(errors="replace")
    try:
        rc, out = duo("up", "--base-port", str(base), "--sql-port", str(sql_port),
                      "--data-memory", "64")
        check(rc == 0 and "cluster is up" in out, "duo up from the tree: %s" % out)
        rc, out = duo("down")
        check(rc == 0 and "cluster stopped" in out, "duo down: %s" % out)
        rc, out = duo("up")  # same ports, right away
        check(rc == 0 and "cluster is up" in out, "duo up right after duo down: %s" % out)
        proc = subprocess.run(["mysql", "-h127.0.0.1", "-P%d" % sql_port, "-uroot", "--batch",
                               "--skip-column-names", "--skip-ssl", "-e", "SELECT 1+1"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        check(proc.stdout == b"2\n", "SQL through the tree's duo_sqld: %s" % proc.stdout)
    finally:
        rc, out = duo("down")
    check(rc == 0, "final duo down: %s" % out)
    log("bin/duo through a symlink: up, down, up on the same ports, SQL, down")


# --- debian12 ---------------------------------------------------------------------------

DEBIAN_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
BINFMT_QEMU_AARCH64 = "/proc/sys/fs/binfmt_misc/qemu-aarch64"


def tarball_arch(tarball):
    match = NAME_RE.match(os.path.basename(tarball))
    check(match, "tarball name %s" % os.path.basename(tarball))
    return match.group(3)


def foreign_arch_ready(arch):
    """Whether this machine runs arch's programs (natively or through qemu binfmt)."""
    if arch == os.uname().machine:
        return True
    if arch != "aarch64" or not os.path.exists(BINFMT_QEMU_AARCH64):
        return False
    with open(BINFMT_QEMU_AARCH64) as f:
        return f.readline().strip() == "enabled"


def ensure_rootfs(cache, mirror, arch):
    """The cached Debian 12 minbase root file system of arch, made once (under a lock)."""
    debian_arch = DEBIAN_ARCH[arch]
    rootfs = os.path.join(cache, "bookworm" if arch == "x86_64" else "bookworm-" + debian_arch)
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(rootfs, "etc", "debian_version")):
            partial = rootfs + ".partial"
            shutil.rmtree(partial, ignore_errors=True)
            log("debootstrap --variant=minbase --arch=%s bookworm %s %s (once)"
                % (debian_arch, partial, mirror))
            proc = subprocess.run(["debootstrap", "--variant=minbase", "--arch=" + debian_arch,
                                   "bookworm", partial, mirror],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            check(proc.returncode == 0, "debootstrap failed:\n%s"
                  % proc.stdout.decode(errors="replace")[-3000:])
            os.rename(partial, rootfs)
    with open(os.path.join(rootfs, "etc", "debian_version")) as f:
        check(f.read().startswith("12."), "cached rootfs is not Debian 12")
    return rootfs


class Chroot:
    """A throw-away view of the cached rootfs: overlay (upper/work in scratch) with /proc
    mounted; everything written goes to scratch. close() unmounts all."""

    def __init__(self, rootfs, scratch):
        self.root = os.path.join(scratch, "root")
        upper, work = os.path.join(scratch, "upper"), os.path.join(scratch, "work")
        for d in (self.root, upper, work):
            os.makedirs(d)
        self.mounts = []
        self._mount(["-t", "overlay", "overlay", "-o",
                     "lowerdir=%s,upperdir=%s,workdir=%s" % (rootfs, upper, work), self.root])
        self._mount(["-t", "proc", "proc", os.path.join(self.root, "proc")])

    def _mount(self, args):
        proc = subprocess.run(["mount"] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        check(proc.returncode == 0, "mount %s: %s" % (" ".join(args), proc.stdout.decode()))
        self.mounts.append(args[-1])

    def path(self, inside):
        return os.path.join(self.root, inside.lstrip("/"))

    def run(self, args, **kwargs):
        return subprocess.run(["chroot", self.root] + args, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, **kwargs)

    def spawn(self, args, log_path):
        with open(log_path, "wb") as out:
            return subprocess.Popen(["chroot", self.root] + args, stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def close(self):
        for mount in reversed(self.mounts):
            subprocess.run(["umount", mount], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.mounts = []

    def processes_inside(self):
        """Pids of processes whose root is this chroot."""
        found = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    if os.readlink("/proc/%s/root" % pid) == self.root:
                        found.append(int(pid))
                except OSError:
                    pass
        return found


def laptop_config(text, data_dir, base):
    """The shipped laptop.ini with test paths and free ports."""
    text = text.replace("/var/lib/duodb", data_dir)
    text = re.sub(r"^PortNumber=1186$", "PortNumber=%d" % base, text, flags=re.M)
    text = re.sub(r"^ServerPort=1186(\d)$", lambda m: "ServerPort=%d" % (base + int(m.group(1))),
                  text, flags=re.M)
    check("1186" not in text, "laptop.ini has a port this test does not move")
    return text


def ldd_all(chroot, tree_inside):
    elves = elf_tools.elf_files(chroot.path(tree_inside))
    check(elves, "no ELF in the unpacked tree")
    for path in elves:
        inside = "/" + os.path.relpath(path, chroot.root)
        proc = chroot.run(["ldd", inside])
        out = proc.stdout.decode(errors="replace")
        check(proc.returncode == 0 and "not found" not in out, "ldd %s:\n%s" % (inside, out))
    log("ldd inside Debian 12: %d ELF files, nothing missing" % len(elves))


def mgm(chroot, bin_dir, base, command):
    proc = chroot.run([bin_dir + "/duo_mgm", "-c", "127.0.0.1:%d" % base, "-e", command],
                      timeout=60)
    return proc.returncode, proc.stdout.decode(errors="replace")


def wait_for(what, predicate, processes, logs):
    deadline = time.monotonic() + START_TIMEOUT_S
    while not predicate():
        dead = [name for name, p in processes.items() if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            tails = []
            for path in logs:
                with open(path, errors="replace") as f:
                    tails.append("--- %s\n%s" % (path, "".join(f.readlines()[-15:])))
            raise TestFailure("%s: %s\n%s" % (what, "exited: %s" % dead if dead else "timed out",
                                              "\n".join(tails)))
        time.sleep(0.5)


def run_cluster(chroot, real_bin, link_bin, scratch):
    """mgmd and data node 1 from the path with a space, data node 2 and duo_sqld through
    the symlink; SQL from outside; a clean stop."""
    base = pick_ports(4)  # mgmd, two data nodes, duo_sqld
    sql_port = base + 3
    data_inside = "/var/lib/duodb test"
    os.makedirs(chroot.path(data_inside + "/mgmd"))
    with open(chroot.path(real_bin + "/../share/duodb/config/laptop.ini")) as f:
        config = laptop_config(f.read(), data_inside, base)
    with open(chroot.path(data_inside + "/config.ini"), "w") as f:
        f.write(config)
    connect = "--ndb-connectstring=127.0.0.1:%d" % base
    processes, logs = {}, []

    def spawn(name, args):
        logs.append(os.path.join(scratch, name + ".log"))
        processes[name] = chroot.spawn(args, logs[-1])

    started_at = time.monotonic()
    try:
        spawn("mgmd", [real_bin + "/duo_mgmd", "--foreground", "--initial",
                       "--config-file=" + data_inside + "/config.ini",
                       "--configdir=" + data_inside + "/mgmd", "--ndb-nodeid=%d" % MGM_NODE_ID])
        wait_for("duo_mgmd listening", lambda: mgm(chroot, real_bin, base, "show")[0] == 0,
                 processes, logs)
        for node_id, bin_dir in zip(DATA_NODE_IDS, (real_bin, link_bin)):
            spawn("datad%d" % node_id, [bin_dir + "/duo_datad", "--foreground", "--initial",
                                        connect, "--ndb-nodeid=%d" % node_id])

        def both_started():
            rc, out = mgm(chroot, link_bin, base, "all status")
            return rc == 0 and all("Node %d: started" % n in out for n in DATA_NODE_IDS)
        wait_for("both data nodes started", both_started, processes, logs)
        spawn("sqld", [link_bin + "/duo_sqld", "--foreground", connect,
                       "--port=%d" % sql_port, "--bind-address=127.0.0.1",
                       "--datadir=" + data_inside + "/sqld", "--ndb-nodeid=%d" % SQLD_NODE_ID])

        def sql_listening():
            try:
                socket.create_connection(("127.0.0.1", sql_port), timeout=2).close()
                return True
            except OSError:
                return False
        wait_for("duo_sqld listening", sql_listening, processes, logs)
        log("cluster started inside Debian 12 in %.1f s" % (time.monotonic() - started_at))
        sql = ("CREATE DATABASE pkg; CREATE TABLE pkg.t (id INT NOT NULL PRIMARY KEY, "
               "v VARCHAR(20)); INSERT INTO pkg.t VALUES (1, 'one'), (2, 'two'), (3, 'three'); "
               "UPDATE pkg.t SET v = 'TWO' WHERE id = 2; "
               "SELECT id, v FROM pkg.t ORDER BY id; SELECT COUNT(*) FROM pkg.t;")
        proc = subprocess.run(["mysql", "-h127.0.0.1", "-P%d" % sql_port, "-uroot", "--batch",
                               "--skip-column-names", "--skip-ssl", "-e", sql],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        out = proc.stdout.decode(errors="replace")
        check(proc.returncode == 0 and out == "1\tone\n2\tTWO\n3\tthree\n3\n",
              "SQL through duo_sqld: rc %d\n%s" % (proc.returncode, out))
        log("SQL through duo_sqld inside Debian 12: ok")
        processes["sqld"].send_signal(signal.SIGTERM)
        processes["sqld"].wait(timeout=STOP_TIMEOUT_S)
        rc, out = mgm(chroot, real_bin, base, "shutdown")
        check(rc == 0, "SHUTDOWN: %s" % out)
        for name, p in processes.items():
            p.wait(timeout=STOP_TIMEOUT_S)
        log("stopped (sqld SIGTERM, SHUTDOWN via duo_mgm)")
    finally:
        for p in processes.values():
            if p.poll() is None:
                p.kill()
                p.wait()


def scenario_debian12(options, scratch):
    if os.geteuid() != 0:
        log("skipped: needs root (debootstrap, chroot, mount)")
        return SKIP
    for tool in ("debootstrap", "chroot", "mount", "mysql"):
        if shutil.which(tool) is None:
            log("skipped: %s not installed (scripts/bootstrap)" % tool)
            return SKIP
    started = time.monotonic()
    tarball = pack(options.build_dir, os.path.join(scratch, "out"))
    arch = tarball_arch(tarball)
    if not foreign_arch_ready(arch):
        log("skipped: %s programs do not run here (scripts/bootstrap --arm64 registers qemu)"
            % arch)
        return SKIP
    rootfs = ensure_rootfs(options.rootfs_cache, options.mirror, arch)
    chroot = Chroot(rootfs, os.path.join(scratch, "overlay"))
    try:
        # An empty directory whose path holds a space, and a symlink to the tree.
        parent_inside = "/srv/duo db"
        os.makedirs(chroot.path(parent_inside))
        check(not os.listdir(chroot.path(parent_inside)), "not empty")
        tree = unpack(tarball, chroot.path(parent_inside))
        tree_inside = "/" + os.path.relpath(tree, chroot.root)
        os.symlink(tree_inside, chroot.path("/opt/duodb"))
        ldd_all(chroot, tree_inside)
        run_cluster(chroot, tree_inside + "/bin", "/opt/duodb/bin", scratch)
        left = chroot.processes_inside()
        check(not left, "processes left in the chroot: %s" % left)
    finally:
        for pid in chroot.processes_inside():
            os.kill(pid, signal.SIGKILL)
        chroot.close()
    with open("/proc/mounts") as f:
        check(scratch not in f.read(), "a mount under %s is left" % scratch)
    log("debian12 (%s) passed in %.1f s" % (arch, time.monotonic() - started))
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description="DuoDB tarball tests")
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--rootfs-cache", default="/var/cache/duodb-test-rootfs")
    parser.add_argument("--mirror", default="http://deb.debian.org/debian")
    parser.add_argument("scenario", choices=("reproducible", "contents", "debian12"))
    options = parser.parse_args(argv)
    options.build_dir = os.path.abspath(options.build_dir)
    scratch = tempfile.mkdtemp(prefix="duodb-package-test-")
    try:
        result = {"reproducible": scenario_reproducible, "contents": scenario_contents,
                  "debian12": scenario_debian12}[options.scenario](options, scratch)
        return result or 0
    except (TestFailure, subprocess.TimeoutExpired) as error:
        print("package_test: FAILED: %s" % error, file=sys.stderr)
        return 1
    finally:
        with open("/proc/mounts") as f:
            mounted = scratch in f.read()
        if mounted:  # never delete through a mount that failed to come off
            print("package_test: %s still has mounts; left in place" % scratch, file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
