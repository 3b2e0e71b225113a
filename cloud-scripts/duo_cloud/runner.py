"""Every external command of the installer goes through a Runner: the cloud CLIs, ssh,
scp, ip, nft and the cluster's own tools. It prints each command before running it
(`+ aws ec2 ...`), parses JSON output, and turns a failure into a StepError saying what
failed and what to fix. With dry_run it prints the commands and runs none: queries
answer "nothing exists" and creations answer placeholders, so the printed sequence is
the one a first deploy runs. Not thread-safe (one installer run, one thread).
"""

import json
import shlex
import subprocess
import sys

COMMAND_TIMEOUT_S = 900  # a VM creation or deletion with --wait can take minutes


class StepError(Exception):
    """A step failed. `fix` tells the user what to do about it."""

    def __init__(self, message, fix=""):
        super().__init__(message)
        self.fix = fix


def quote(argv):
    return " ".join(shlex.quote(str(a)) for a in argv)


class Runner:
    def __init__(self, dry_run=False, out=None, verbose=True):
        self.dry_run = dry_run
        self.out = out or sys.stdout
        self.verbose = verbose

    def say(self, text):
        print(text, file=self.out, flush=True)

    def _run(self, argv, input_text, timeout_s):
        try:
            return subprocess.run([str(a) for a in argv], input=input_text, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  timeout=timeout_s)
        except FileNotFoundError:
            raise StepError("`%s` is not installed (or not on PATH)" % argv[0],
                            "install it and log in (see cloud-scripts/README.md)")
        except subprocess.TimeoutExpired:
            raise StepError("`%s` did not finish within %d s" % (quote(argv), timeout_s),
                            "check the provider's console for the resource, then run again")

    def run(self, argv, what, fix="", input_text=None, json_out=False, placeholder=None,
            check=True, timeout_s=COMMAND_TIMEOUT_S, echo=True):
        """Runs a command that may change something. Returns its stdout (parsed JSON with
        json_out; `placeholder` in a dry run). Raises StepError on a non-zero exit unless
        check is False (then returns None). echo=False: not printed (a poll repeated)."""
        if (self.verbose and echo) or self.dry_run:
            self.say("+ " + quote(argv) + (" <<< (%d bytes)" % len(input_text)
                                           if input_text is not None else ""))
        if self.dry_run:
            return placeholder
        proc = self._run(argv, input_text, timeout_s)
        if proc.returncode != 0:
            if not check:
                return None
            raise StepError("%s failed: `%s` exited %d: %s" %
                            (what, quote(argv)[:300], proc.returncode,
                             (proc.stderr.strip() or proc.stdout.strip())[-1500:]),
                            fix)
        if json_out:
            return parse_json(proc.stdout, argv, what)
        return proc.stdout

    def query(self, argv, what, fix="", empty=None, json_out=True, check=True):
        """Runs a read-only command (a discovery). In a dry run nothing is run and the
        answer is `empty` (nothing exists yet)."""
        if self.dry_run:
            self.say("+ " + quote(argv))
            return empty
        return self.run(argv, what, fix, json_out=json_out, check=check)


def parse_json(text, argv, what):
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        raise StepError("%s: `%s` did not print JSON: %s" % (what, quote(argv)[:200], text[:300]),
                        "check that the CLI is a current version")
