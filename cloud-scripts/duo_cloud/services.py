"""Starting a role's process on a VM so that it stays running. SystemdServices (cloud
VMs) installs a unit per role — duodb-mgmd.service and the templates
duodb-datad@.service and duodb-sqld@.service, instance = node id — enabled, so a reboot
starts it again, and restarted on failure (a data node that lost an arbitration exits;
systemd starts it again and it rejoins by a node restart). LocalProcesses (the local
provider, no systemd inside a namespace) starts the self-daemonizing binaries inside the
namespace and tracks them by their pid files. Both are idempotent: a running role is
left alone. Not thread-safe.
"""

import shlex

from .runner import quote

UNIT_TEMPLATE = """[Unit]
Description={description}
Documentation=file:///opt/duodb/docs
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=duodb
ExecStart={exec_start}
Restart=on-failure
RestartSec=5
TimeoutStopSec=60
LimitNOFILE=65536
LimitMEMLOCK=infinity

[Install]
WantedBy=multi-user.target
"""


def unit_names(role, node_id):
    """(file name of the unit or template, name of the instance to enable)."""
    if role == "mgmd":
        return "duodb-mgmd.service", "duodb-mgmd.service"
    base = {"data": "duodb-datad", "sqld": "duodb-sqld"}[role]
    return "%s@.service" % base, "%s@%d.service" % (base, node_id)


class SystemdServices:
    foreground = True  # systemd supervises the process itself

    def start(self, host, role, node_id, argv, description, pid_file):
        del pid_file  # systemd tracks the process
        unit_file, instance = unit_names(role, node_id)
        # One template per role; the instance name is the node id.
        exec_argv = [("--ndb-nodeid=%i" if role != "mgmd" and a == "--ndb-nodeid=%d" % node_id
                      else a) for a in argv]
        host.put_text("/etc/systemd/system/" + unit_file,
                      UNIT_TEMPLATE.format(description=description,
                                           exec_start=quote(exec_argv)),
                      "install %s" % unit_file)
        host.run("sudo systemctl daemon-reload && sudo systemctl enable --now %s" % instance,
                 "start %s" % instance,
                 "read `journalctl -u %s` on %s" % (instance, host.name))

    def stop_command(self, role, node_id):
        return "sudo systemctl stop %s" % unit_names(role, node_id)[1]


class LocalProcesses:
    foreground = False  # the binaries daemonize and write their pid files

    def start(self, host, role, node_id, argv, description, pid_file):
        del role, node_id
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
