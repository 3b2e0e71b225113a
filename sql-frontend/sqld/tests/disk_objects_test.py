#!/usr/bin/env python3
"""NDB disk-data objects end to end, with real processes: CREATE LOGFILE GROUP / CREATE
TABLESPACE / ALTER ... ADD DATAFILE through one duo_sqld create their files, of their
sizes and allocated, on both data nodes; a second duo_sqld sees the objects at once
(information_schema.FILES, SHOW CREATE TABLE, the DDL errors); a file that cannot be
made on one node fails the statement and leaves no file on the other; the objects
survive a node restart with an empty file system (the node makes its files again) and a
system restart (duo down / duo up); dropping them removes the files;
InitialLogFileGroup / InitialTablespace in config.ini create them at an initial start,
in FileSystemPathDD / FileSystemPathUndoFiles when those are set.

Usage: disk_objects_test.py --bin build/<dir>/bin   (CTest label `cluster`)
"""

import argparse
import os
import shutil
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../..", "scripts",
                                "testlib"))
from cluster_testlib import check, eventually, run_in_work_dir  # noqa: E402
from duo_cluster import LauncherCluster  # noqa: E402
from two_sqld_test import connect, error_code, query, start_second_sqld  # noqa: E402

DATA_NODES = (1, 2)
MIB = 1024 * 1024


def fs_dir(cluster, node):
    return os.path.join(cluster.data_dir, "datad", "ndb_%d_fs" % node)


def check_file(cluster, name, size, base=None):
    for node in DATA_NODES:
        directory = (fs_dir(cluster, node) if base is None
                     else os.path.join(base, "ndb_%d_fs" % node))
        path = os.path.join(directory, name)
        check(os.path.isfile(path), "node %d has no file %s" % (node, name))
        st = os.stat(path)
        check(st.st_size == size, "node %d: %s is %d bytes, not %d" % (node, name, st.st_size, size))
        # Allocated for real (posix_fallocate), not a sparse file.
        check(st.st_blocks * 512 >= size,
              "node %d: %s is sparse (%d bytes allocated)" % (node, name, st.st_blocks * 512))


def check_no_file(cluster, name):
    for node in DATA_NODES:
        path = os.path.join(fs_dir(cluster, node), name)
        check(not os.path.exists(path), "node %d still has %s" % (node, name))


def files_view(conn):
    return query(conn, "SELECT FILE_NAME, FILE_TYPE, TABLESPACE_NAME, LOGFILE_GROUP_NAME, "
                       "INITIAL_SIZE FROM information_schema.FILES ORDER BY FILE_NAME")


EXPECTED_FILES = (("d1.dat", "DATAFILE", "ts1", "lg1", 1 * MIB),
                  ("d2.dat", "DATAFILE", "ts1", "lg1", 3 * MIB),
                  ("u1.log", "UNDO LOG", None, "lg1", 2 * MIB))


def run(bin_dir, work_dir):
    cluster = LauncherCluster(bin_dir, work_dir, extra_ports=1)
    second = None
    try:
        cluster.start()
        second = start_second_sqld(bin_dir, cluster, cluster.extra_ports[0],
                                   os.path.join(work_dir, "sqld2"))
        a = connect(cluster.sql_port)
        b = connect(cluster.extra_ports[0])

        query(a, "CREATE LOGFILE GROUP lg1 ADD UNDOFILE 'u1.log' INITIAL_SIZE 2M "
                 "UNDO_BUFFER_SIZE 1M ENGINE NDB")
        query(a, "CREATE TABLESPACE ts1 ADD DATAFILE 'd1.dat' USE LOGFILE GROUP lg1 "
                 "INITIAL_SIZE 1M ENGINE NDB")
        query(b, "ALTER TABLESPACE ts1 ADD DATAFILE 'd2.dat' INITIAL_SIZE 3M")
        check_file(cluster, "u1.log", 2 * MIB)
        check_file(cluster, "d1.dat", 1 * MIB)
        check_file(cluster, "d2.dat", 3 * MIB)
        check(files_view(a) == EXPECTED_FILES, "sqld A: FILES is %r" % (files_view(a),))
        check(files_view(b) == EXPECTED_FILES, "sqld B: FILES is %r" % (files_view(b),))

        # A file that exists already on node 2 only: refused, and node 1 keeps nothing.
        with open(os.path.join(fs_dir(cluster, 2), "clash.dat"), "wb") as f:
            f.write(b"not ours")
        check(error_code(b, "ALTER TABLESPACE ts1 ADD DATAFILE 'clash.dat' INITIAL_SIZE 1M") == 1533,
              "a data file existing on one node was not refused")
        check(not os.path.exists(os.path.join(fs_dir(cluster, 1), "clash.dat")),
              "node 1 kept the file of a refused ALTER")
        with open(os.path.join(fs_dir(cluster, 2), "clash.dat"), "rb") as f:
            check(f.read() == b"not ours", "the refused ALTER changed node 2's own file")
        os.remove(os.path.join(fs_dir(cluster, 2), "clash.dat"))

        # Node restart: node 2 dies, a data file is added without it, and node 2 comes back
        # with an empty file system (an initial node restart): it copies the schema and
        # makes every file it lacks.
        os.kill(cluster.data_node_pid(2), signal.SIGKILL)
        eventually(lambda: error_code(a, "ALTER TABLESPACE ts1 ADD DATAFILE 'd3.dat' "
                                         "INITIAL_SIZE 1M") == 0,
                   timeout=60, message="ADD DATAFILE while node 2 is dead")
        check(not os.path.exists(os.path.join(fs_dir(cluster, 2), "d3.dat")),
              "the dead node 2 got a file")
        shutil.rmtree(fs_dir(cluster, 2))
        cluster.up_again()

        def node2_has_every_file():
            names = ("u1.log", "d1.dat", "d2.dat", "d3.dat")
            return all(os.path.isfile(os.path.join(fs_dir(cluster, 2), n)) for n in names)
        eventually(node2_has_every_file, timeout=60,
                   message="node 2 to make its disk-data files after its node restart")
        check_file(cluster, "d3.dat", 1 * MIB)
        check_file(cluster, "u1.log", 2 * MIB)
        query(a, "ALTER TABLESPACE ts1 DROP DATAFILE 'd3.dat'")
        check_no_file(cluster, "d3.dat")

        # A file no node can allocate (beyond the file system's file size, or space): the
        # statement fails at once with the OS error, and no node keeps any of it.
        check(error_code(a, "ALTER TABLESPACE ts1 ADD DATAFILE 'huge.dat' "
                            "INITIAL_SIZE 1000000G") == 1533,
              "an impossible data file was not refused")
        check_no_file(cluster, "huge.dat")
        check(files_view(b) == EXPECTED_FILES, "FILES after the refused ALTER: %r" % (files_view(b),))

        query(a, "CREATE DATABASE d")
        query(a, "CREATE TABLE d.t (k INT PRIMARY KEY, v VARCHAR(200)) TABLESPACE ts1 STORAGE DISK")
        query(b, "INSERT INTO d.t VALUES (1, 'one'), (2, 'two')")
        show = query(b, "SHOW CREATE TABLE d.t")[0][1]
        check("/*!50100 TABLESPACE `ts1` STORAGE DISK */" in show, "B's SHOW CREATE TABLE: " + show)
        check(error_code(b, "DROP TABLESPACE ts1") == 3120, "B dropped a tablespace a table uses")
        check(error_code(b, "CREATE LOGFILE GROUP lg2 ADD UNDOFILE 'u2.log' INITIAL_SIZE 1M "
                            "ENGINE NDB") == 1528, "a second logfile group was not refused")
        a.close()
        b.close()
        second.kill()
        second.wait()
        second = None

        # System restart: every object, file and table is back.
        cluster.stop()
        cluster.start()
        a = connect(cluster.sql_port)
        check(files_view(a) == EXPECTED_FILES, "after the restart FILES is %r" % (files_view(a),))
        check(query(a, "SELECT k, v FROM d.t ORDER BY k") == ((1, "one"), (2, "two")),
              "the disk table's rows after the restart")
        check("TABLESPACE `ts1` STORAGE DISK" in query(a, "SHOW CREATE TABLE d.t")[0][1],
              "SHOW CREATE TABLE after the restart")
        check_file(cluster, "d2.dat", 3 * MIB)

        # Dropping removes the files on both nodes.
        query(a, "DROP DATABASE d")
        query(a, "ALTER TABLESPACE ts1 DROP DATAFILE 'd2.dat'")
        check_no_file(cluster, "d2.dat")
        query(a, "ALTER TABLESPACE ts1 DROP DATAFILE 'd1.dat'")
        query(a, "DROP TABLESPACE ts1")
        query(a, "DROP LOGFILE GROUP lg1 ENGINE NDB")
        for name in ("d1.dat", "u1.log"):
            check_no_file(cluster, name)
        check(files_view(a) == (), "FILES after dropping everything: %r" % (files_view(a),))
        a.close()

        # InitialLogFileGroup / InitialTablespace: made at an initial start.
        cluster.stop()
        config = os.path.join(cluster.data_dir, "config.ini")
        with open(config) as f:
            text = f.read()
        dd_dir = os.path.join(work_dir, "dd")
        text = text.replace("[ndbd default]\n", "[ndbd default]\n"
                            "FileSystemPathDD = " + dd_dir + "\n"
                            "FileSystemPathUndoFiles = " + os.path.join(work_dir, "undo") + "\n"
                            "InitialLogFileGroup = name=LG1; undo_buffer_size=4M; "
                            "ilg1.log:2M; ilg2.log:1M\n"
                            "InitialTablespace = name=TS1; extent_size=512K; its1.dat:1M\n", 1)
        with open(config, "w") as f:
            f.write(text)
        for node in DATA_NODES:
            shutil.rmtree(fs_dir(cluster, node))
        cluster.start()
        a = connect(cluster.sql_port)
        expected = (("ilg1.log", "UNDO LOG", None, "LG1", 2 * MIB),
                    ("ilg2.log", "UNDO LOG", None, "LG1", 1 * MIB),
                    ("its1.dat", "DATAFILE", "TS1", "LG1", 1 * MIB))
        eventually(lambda: files_view(a) == expected, timeout=30,
                   message="the initial disk-data objects in FILES")
        # FileSystemPathDD holds the data files, FileSystemPathUndoFiles the undo files.
        check_file(cluster, "ilg1.log", 2 * MIB, os.path.join(work_dir, "undo"))
        check_file(cluster, "its1.dat", 1 * MIB, dd_dir)
        check_no_file(cluster, "its1.dat")
        query(a, "CREATE DATABASE d")
        query(a, "CREATE TABLE d.t (k INT PRIMARY KEY, v INT) TABLESPACE TS1 STORAGE DISK")
        query(a, "DROP DATABASE d")
        a.close()
    finally:
        if second is not None:
            second.kill()
            second.wait()
        cluster.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    args = parser.parse_args()
    return run_in_work_dir("duo-disk-objects-", "disk_objects",
                           lambda work_dir: run(os.path.abspath(args.bin), work_dir))


if __name__ == "__main__":
    sys.exit(main())
