"""ELF facts the packaging scripts need, read with binutils (readelf, objdump) so that a
cross toolchain's tools read a foreign-architecture tree the same way.

elf_files(root): every ELF file under root (by magic, not by name), sorted.
needed(path, readelf): the DT_NEEDED sonames of one ELF.
glibc_versions(path, objdump): the GLIBC_x.y[.z] symbol versions it requires.
"""

import os
import re
import subprocess

ELF_MAGIC = b"\x7fELF"
NEEDED_RE = re.compile(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]")
GLIBC_RE = re.compile(r"\bGLIBC_(\d+(?:\.\d+)+)\b")


def is_elf(path):
    if os.path.islink(path) or not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return f.read(4) == ELF_MAGIC


def elf_files(root):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if is_elf(path):
                found.append(path)
    return found


def needed(path, readelf="readelf"):
    out = subprocess.run([readelf, "-d", "-W", path], check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE).stdout.decode()
    return NEEDED_RE.findall(out)


def version_key(text):
    return tuple(int(part) for part in text.split("."))


def glibc_versions(path, objdump="objdump"):
    """Versions of the glibc symbols this ELF references (undefined dynamic symbols).
    GLIBC_PRIVATE does not match: nothing outside glibc may use it."""
    out = subprocess.run([objdump, "-T", path], check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE).stdout.decode()
    versions = set()
    for line in out.splitlines():
        if "*UND*" not in line:
            continue
        versions.update(GLIBC_RE.findall(line))
    return versions
