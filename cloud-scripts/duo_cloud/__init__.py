"""duo_cloud: the DuoDB cloud installer (cloud-scripts/duo-cloud-installer.sh runs it).

Modules: main (options, subcommands), plan (what a cluster is made of, config.ini),
runner (every external command: dry-run, JSON, failures), hosts (ssh / ip netns exec),
services (systemd units / local background processes), install (tarball, config, start
order, wait, smoke query), smoke_client (a MySQL-protocol client in the standard
library), providers/ (aws, azure, gcp, local). Python 3 standard library only.
"""
