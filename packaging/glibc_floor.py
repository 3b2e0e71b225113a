#!/usr/bin/env python3
"""Prints the glibc floor of a tree: the highest GLIBC_x.y symbol version any ELF under
it requires (`objdump -T`), i.e. the oldest glibc the tree runs on.

    glibc_floor.py DIR [--objdump OBJDUMP] [--explain] [--expect X.Y]

--explain lists, per ELF, its highest required version. --expect fails (exit 1) when the
floor differs: the tarball's name carries the floor, and the packaging checks the
archived tree against that name. Exit 2 when DIR holds no ELF.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elf_tools  # noqa: E402


def floor_of(root, objdump):
    """(floor, {path: highest version}) over every ELF under root."""
    per_file = {}
    for path in elf_tools.elf_files(root):
        versions = elf_tools.glibc_versions(path, objdump)
        if versions:
            per_file[path] = max(versions, key=elf_tools.version_key)
    if not per_file:
        return None, per_file
    return max(per_file.values(), key=elf_tools.version_key), per_file


def main(argv):
    parser = argparse.ArgumentParser(description="glibc floor of a tree of ELF files")
    parser.add_argument("dir")
    parser.add_argument("--objdump", default="objdump")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--expect")
    options = parser.parse_args(argv)
    if not elf_tools.elf_files(options.dir):
        print("glibc_floor: no ELF file under %s" % options.dir, file=sys.stderr)
        return 2
    floor, per_file = floor_of(options.dir, options.objdump)
    floor = floor or "0.0"  # ELFs that need no versioned glibc symbol at all
    if options.explain:
        for path, version in sorted(per_file.items()):
            print("%-8s %s" % (version, os.path.relpath(path, options.dir)), file=sys.stderr)
    if options.expect and options.expect != floor:
        print("glibc_floor: %s needs glibc %s, expected %s" % (options.dir, floor, options.expect),
              file=sys.stderr)
        return 1
    print(floor)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
