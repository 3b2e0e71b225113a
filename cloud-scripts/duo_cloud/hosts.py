"""How the installer reaches a VM: SshHost (a cloud VM over ssh/scp; a VM without a
public address through a jump host, the mgmd VM) and NetnsHost (a "VM" of the local
provider: a network namespace, `ip netns exec` in place of ssh, and a directory standing
for its file system). Both offer the same three operations, so installing and starting
the cluster is one piece of code. Not thread-safe.
"""

import os
import shlex
import time

from .runner import StepError

SSH_READY_TIMEOUT_S = 600
SSH_RETRY_INTERVAL_S = 10


class SshHost:
    """A cloud VM. Paths are the VM's own (`path` is the identity)."""

    sudo = "sudo "

    def __init__(self, runner, name, user, address, key, known_hosts, jump=None):
        self.runner = runner
        self.name = name
        self.user = user
        self.address = address
        self.key = key
        self.known_hosts = known_hosts
        self.jump = jump  # (user, public address) of the jump host, or None

    def _options(self):
        options = ["-i", self.key, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new",
                   "-o", "UserKnownHostsFile=" + self.known_hosts, "-o", "ConnectTimeout=10"]
        if self.jump:
            # ProxyCommand (not -J) so the jump hop uses the same key and known_hosts file.
            hop = ["ssh", "-i", self.key, "-o", "BatchMode=yes",
                   "-o", "StrictHostKeyChecking=accept-new",
                   "-o", "UserKnownHostsFile=" + self.known_hosts,
                   "-W", "%h:%p", "%s@%s" % self.jump]
            options += ["-o", "ProxyCommand=" + " ".join(shlex.quote(a) for a in hop)]
        return options

    def path(self, path):
        return path

    def run(self, command, what, fix="", input_text=None, check=True, echo=True):
        return self.runner.run(["ssh"] + self._options() + ["%s@%s" % (self.user, self.address),
                                                           command],
                               "%s on %s" % (what, self.name), fix, input_text=input_text,
                               check=check, echo=echo)

    def put_file(self, local_path, remote_path, what):
        self.runner.run(["scp", "-q"] + self._options() +
                        [local_path, "%s@%s:%s" % (self.user, self.address, remote_path)],
                        "%s to %s" % (what, self.name),
                        "check the ssh key and that the VM has disk space")

    def put_text(self, remote_path, text, what):
        self.run("sudo install -d %s && sudo tee %s >/dev/null" %
                 (shlex.quote(os.path.dirname(remote_path)), shlex.quote(remote_path)),
                 what, input_text=text)

    def wait_reachable(self):
        """Waits (bounded) until sshd on the fresh VM answers."""
        if self.runner.dry_run:
            self.run("true", "ssh reachable")
            return
        deadline = time.time() + SSH_READY_TIMEOUT_S
        while self.run("true", "ssh reachable", check=False) is None:
            if time.time() > deadline:
                raise StepError("%s (%s) not reachable by ssh after %d s" %
                                (self.name, self.address, SSH_READY_TIMEOUT_S),
                                "check --admin-cidr includes your address and --ssh-key is the "
                                "key the VMs were created with")
            time.sleep(SSH_RETRY_INTERVAL_S)


class NetnsHost:
    """A local "VM": commands run in its network namespace, and its files live under
    root_dir (the VM's `/opt/duodb` is `<root_dir>/opt/duodb`)."""

    sudo = ""

    def __init__(self, runner, name, namespace, root_dir):
        self.runner = runner
        self.name = name
        self.namespace = namespace
        self.root_dir = root_dir

    def path(self, path):
        return self.root_dir + path

    def run(self, command, what, fix="", input_text=None, check=True, echo=True):
        return self.runner.run(["ip", "netns", "exec", self.namespace, "sh", "-c", command],
                               "%s on %s" % (what, self.name), fix, input_text=input_text,
                               check=check, echo=echo)

    def put_file(self, local_path, remote_path, what):
        self.runner.run(["install", "-D", "-m", "0644", local_path, remote_path],
                        "%s to %s" % (what, self.name))

    def put_text(self, remote_path, text, what):
        self.run("mkdir -p %s && cat > %s" % (shlex.quote(os.path.dirname(remote_path)),
                                               shlex.quote(remote_path)), what,
                 input_text=text)

    def wait_reachable(self):
        self.run("true", "namespace reachable")
