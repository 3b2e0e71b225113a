#!/usr/bin/env python3
"""Copies into PREFIX/lib the shared libraries the ELFs of PREFIX/bin need that a fresh
Debian/Ubuntu may lack, so the relocatable tree runs with RPATH $ORIGIN/../lib.

    bundle_libs.py PREFIX --compiler CXX [--readelf R] [--patchelf P] [--search-dir D]...

What is bundled is discovered, not listed: the DT_NEEDED entries of every ELF under
PREFIX/bin, then of each bundled library in turn. Every needed library is bundled except
the ones that are part of any glibc-based system and must come from it: glibc itself
(libc, libm, libpthread, libdl, librt, libresolv, libutil, the dynamic loader — its
version is the floor in the tarball's name) and the compiler runtime every Debian and
Ubuntu installs for apt itself (libstdc++.so.6, libgcc_s.so.1; newer ones are backward
compatible). Today that bundles OpenSSL 3 (libssl, libcrypto), jemalloc, zstd, and
libaio or libmariadb when a shipped program links them (Ubuntu 24.04 and Debian 13 have
only libaio.so.1t64).

Each library is found where the target's linker finds it (`CXX -print-file-name=SONAME`,
which honours a cross compiler's sysroot, else in a --search-dir: the directory of a
library the build found outside the linker's own path, such as the arm64 overlay of
`scripts/bootstrap --arm64`), copied under its soname, and given RUNPATH
$ORIGIN so a bundled library finds its bundled neighbours (libssl needs libcrypto).
Exit 1 when a needed library is not found.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elf_tools  # noqa: E402

SYSTEM_LIBRARY_RE = re.compile(
    r"^(libc|libm|libpthread|libdl|librt|libresolv|libutil|libstdc\+\+|libgcc_s|libmvec)"
    r"\.so\.\d+$|^ld-linux[-.\w]*\.so\.\d+$")


def is_system_library(soname):
    return bool(SYSTEM_LIBRARY_RE.match(soname))


def locate(soname, compiler, search_dirs):
    """Full path of soname as the target's linker sees it (or in search_dirs), or None."""
    out = subprocess.run([compiler, "-print-file-name=" + soname], check=True,
                         stdout=subprocess.PIPE).stdout.decode().strip()
    if os.path.isabs(out) and os.path.exists(out):
        return os.path.realpath(out)
    for directory in search_dirs:
        candidate = os.path.join(directory, soname)
        if os.path.exists(candidate):
            return os.path.realpath(candidate)
    return None


def bundle(prefix, compiler, readelf, patchelf, search_dirs=()):
    lib_dir = os.path.join(prefix, "lib")
    pending = list(elf_tools.elf_files(os.path.join(prefix, "bin")))
    if not pending:
        raise SystemExit("bundle_libs: no ELF in %s/bin" % prefix)
    bundled = {}
    while pending:
        for soname in elf_tools.needed(pending.pop(0), readelf):
            if is_system_library(soname) or soname in bundled:
                continue
            source = locate(soname, compiler, search_dirs)
            if source is None:
                raise SystemExit("bundle_libs: %s is needed but %s does not find it"
                                 % (soname, compiler))
            os.makedirs(lib_dir, exist_ok=True)
            target = os.path.join(lib_dir, soname)
            shutil.copyfile(source, target)
            os.chmod(target, 0o644)
            subprocess.run([patchelf, "--set-rpath", "$ORIGIN", target], check=True)
            bundled[soname] = source
            pending.append(target)
    for soname in sorted(bundled):
        print("bundle_libs: lib/%s <- %s" % (soname, bundled[soname]))
    return bundled


def main(argv):
    parser = argparse.ArgumentParser(description="bundle non-system shared libraries")
    parser.add_argument("prefix")
    parser.add_argument("--compiler", required=True)
    parser.add_argument("--readelf", default="readelf")
    parser.add_argument("--patchelf", default="patchelf")
    parser.add_argument("--search-dir", action="append", default=[])
    options = parser.parse_args(argv)
    bundle(os.path.abspath(options.prefix), options.compiler, options.readelf, options.patchelf,
           options.search_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
