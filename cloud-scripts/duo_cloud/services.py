"""Starting a role's process on a VM so that it stays running. SystemdServices (cloud
VMs) installs the tarball's unit per role — duodb-mgmd.service and the templates
duodb-datad@.service and duodb-sqld@.service, instance = node id, settings in
/etc/duodb/duodb.env — enabled, so a reboot
starts it again, and restarted on failure (a data node that lost an arbitration exits;
systemd starts it again and it rejoins by a node restart). LocalProcesses (the local
provider, no systemd inside a namespace) starts the self-daemonizing binaries inside the
namespace and tracks them by their pid files. Both are idempotent: a running role is
left alone. Not thread-safe.
"""

import shlex

from .runner import quote

# The unit files and their environment file ship in the tarball (packaging/share/systemd/):
# one definition of how a role runs under systemd, for the installer and for people.
PACKAGED_UNITS = "/opt/duodb/share/duodb/systemd"
ENV_FILE = "/etc/duodb/duodb.env"


def unit_names(role, node_id):
    """(file name of the unit or template, name of the instance to enable)."""
    if role == "mgmd":
        return "duodb-mgmd.service", "duodb-mgmd.service"
    base = {"data": "duodb-datad", "sqld": "duodb-sqld"}[role]
    return "%s@.service" % base, "%s@%d.service" % (base, node_id)


class SystemdServices:
    foreground = True  # systemd supervises the process itself

    def start(self, host, role, node_id, argv, env, description, pid_file):
        del argv, description, pid_file  # the packaged unit has the command; systemd tracks it
        unit_file, instance = unit_names(role, node_id)
        # One VM per role: its settings go into the environment file every unit reads.
        host.put_text(ENV_FILE, "".join("%s=%s\n" % kv for kv in sorted(env.items())),
                      "write %s" % ENV_FILE)
        host.run("sudo install -m 644 %s/%s /etc/systemd/system/%s"
                 % (PACKAGED_UNITS, unit_file, unit_file), "install %s" % unit_file)
        host.run("sudo systemctl daemon-reload && sudo systemctl enable --now %s" % instance,
                 "start %s" % instance,
                 "read `journalctl -u %s` on %s" % (instance, host.name))

    def stop_command(self, role, node_id):
        return "sudo systemctl stop %s" % unit_names(role, node_id)[1]


class LocalProcesses:
    foreground = False  # the binaries daemonize and write their pid files

    def start(self, host, role, node_id, argv, env, description, pid_file):
        del role, node_id, env  # the command line carries the settings
        # Started unless the pid file names a live process (a re-run, or a killed data
        # node that this run starts again: it rejoins by a node restart).
        # A killed daemon stays a zombie until its reaper collects it: not running.
        out = host.run("pid=$(cat {p} 2>/dev/null); state=; [ -n \"$pid\" ] && "
                 "state=$(sed 's/.*) //' /proc/\"$pid\"/stat 2>/dev/null | cut -c1); "
                 "if [ -n \"$state\" ] && [ \"$state\" != Z ]; then "
                 "echo '{d} already running'; else {cmd}; fi".format(
                     p=shlex.quote(pid_file), d=description, cmd=quote(argv)),
                 "start %s" % description,
                 "read the logs under %s" % host.path("/var/lib/duodb"))
        if out and out.strip():
            host.runner.say("%s: %s" % (host.name, out.strip()))
