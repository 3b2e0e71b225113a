#!/bin/sh
# DuoDB cloud installer: a thin wrapper over the Python 3 program beside it
# (duo_cloud/, standard library only). Usage: duo-cloud-installer.sh --help, and
# cloud-scripts/README.md.
here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" >/dev/null 2>&1 || { echo "duo-cloud-installer: needs python3" >&2; exit 1; }
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec "$PYTHON" -c \
  'import sys; from duo_cloud.main import main; sys.exit(main(sys.argv[1:]))' "$@"
