"""Where the benchmark scripts find DuoDB's programs by default."""

import os


def default_bin_dir(script_file):
    """The tarball's bin/ when the script is installed in share/duodb/bench/, else the
    build tree's build/release/bin."""
    here = os.path.dirname(os.path.abspath(script_file))
    installed = os.path.normpath(os.path.join(here, "../../../bin"))
    if os.path.exists(os.path.join(installed, "duo_bench")):
        return installed
    return os.path.normpath(os.path.join(here, "../../build/release/bin"))
