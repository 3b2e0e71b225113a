#!/usr/bin/env python3
"""Writes a tree as a .tar.gz whose bytes depend only on the tree's content.

    repack_tarball.py TREE OUTPUT EPOCH

Archives the directory TREE as NAME/... (NAME: TREE's last component): entries sorted by path, owner and group 0
(root), every mtime EPOCH (SOURCE_DATE_EPOCH), modes as staged (normalize_tree.py fixed
them), GNU tar format, gzip level 9 with a zero header timestamp and no file name.
CPack's own archive writer records the builder's uid and directory order; its staging
(install rules, bundling, naming) stays, and its output is replaced by this one.
"""

import gzip
import os
import stat
import sys
import tarfile


def entries(root):
    """Every path under root, sorted so that a directory precedes its contents."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(out, key=lambda p: p.split(os.sep))


def write(root, output, epoch):
    root = os.path.abspath(root)
    top = os.path.basename(root)
    tmp = output + ".tmp"
    with open(tmp, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for rel in [""] + entries(root):
            path = os.path.join(root, rel) if rel else root
            info = tar.gettarinfo(path, arcname=os.path.join(top, rel) if rel else top)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mtime = epoch
            info.mode = stat.S_IMODE(os.lstat(path).st_mode)
            if info.isreg():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    os.replace(tmp, output)


def main(argv):
    if len(argv) != 3 or not argv[2].isdigit():
        print("usage: repack_tarball.py TREE OUTPUT EPOCH", file=sys.stderr)
        return 64
    write(argv[0], argv[1], int(argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
