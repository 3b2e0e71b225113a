#!/usr/bin/env python3
"""Gives a staged tree fixed file modes and mtimes (for a reproducible archive).

    normalize_tree.py DIR EPOCH

Directories and files with any execute bit get 0755, other files 0644; every entry
(symlinks included, not followed) gets mtime and atime EPOCH (SOURCE_DATE_EPOCH).
"""

import os
import stat
import sys


def normalize(root, epoch):
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode):
                executable = stat.S_ISDIR(mode) or mode & 0o111
                os.chmod(path, 0o755 if executable else 0o644)
            os.utime(path, (epoch, epoch), follow_symlinks=False)
    os.chmod(root, 0o755)
    os.utime(root, (epoch, epoch))


def main(argv):
    if len(argv) != 2 or not argv[1].isdigit():
        print("usage: normalize_tree.py DIR EPOCH", file=sys.stderr)
        return 64
    normalize(argv[0], int(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
