"""The tarball the installer tests deploy: the real package when the build made one
(build/<config>/package/duodb-*.tar.gz, `cmake --build build/<config> --target package`), otherwise a stand-in with the package's
layout, duodb-<version>-linux-glibc<floor>-<arch>/{bin,lib,share/duodb,docs}, made from
`cmake --install` of the build tree plus, for whatever the install rules do not install
yet, the daemons, duo_mgm and the `duo` launcher from the build's bin/. The stand-in's
glibc floor in the name is the host's glibc (not an objdump check: packaging/ does that).
"""

import glob
import os
import platform
import re
import shutil
import subprocess
import tarfile

BINARIES = ("duo_mgmd", "duo_datad", "duo_sqld", "duo_mgm", "duo")


def project_version(source_dir):
    with open(os.path.join(source_dir, "CMakeLists.txt")) as f:
        match = re.search(r"project\(DuoDB VERSION ([0-9.]+)", f.read())
    return match.group(1) if match else "0.0.0"


def tarball_for_tests(build_dir, source_dir, work_dir):
    """Returns the path of a tarball to deploy (made in work_dir unless the real one exists)."""
    real = sorted(glob.glob(os.path.join(build_dir, "package", "duodb-*.tar.gz")))
    if real:
        return real[-1]
    glibc = platform.libc_ver()[1] or "0"
    name = "duodb-%s-linux-glibc%s-%s" % (project_version(source_dir), glibc, platform.machine())
    stage = os.path.join(work_dir, "stage", name)
    shutil.rmtree(os.path.join(work_dir, "stage"), ignore_errors=True)
    subprocess.run(["cmake", "--install", build_dir, "--prefix", stage], check=True,
                   stdout=subprocess.DEVNULL, timeout=300)
    for sub in ("bin", "lib", "share/duodb", "docs"):
        os.makedirs(os.path.join(stage, sub), exist_ok=True)
    for binary in BINARIES:
        target = os.path.join(stage, "bin", binary)
        if not os.path.exists(target):
            shutil.copy2(os.path.realpath(os.path.join(build_dir, "bin", binary)), target)
    path = os.path.join(work_dir, name + ".tar.gz")
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        tar.add(stage, arcname=name)
    return path
