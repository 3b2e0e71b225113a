// NDB's InitialLogFileGroup / InitialTablespace data node parameters: the disk-data
// objects an initial start of the cluster creates (the master dictionary runs them as
// filegroup changes once the cluster has started, dictionary_filegroups.cc).
//
//   InitialLogFileGroup = [name=NAME;] [undo_buffer_size=SIZE;] FILE:SIZE[; FILE:SIZE]...
//   InitialTablespace   = [name=NAME;] [extent_size=SIZE;] FILE:SIZE[; FILE:SIZE]...
//
// SIZE is a number with an optional K, M or G. NDB's defaults: logfile group name
// DEFAULT-LG, undo buffer 64M; tablespace name DEFAULT-TS, extent 1M. The tablespace
// uses the initial logfile group, so InitialTablespace needs InitialLogFileGroup.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/filegroup.h"

namespace duo::datad {

// The changes to run, in order: create the logfile group with its first file, add its
// other files, then the same for the tablespace. Either text may be empty (nothing).
// kConfigError naming the parameter for a malformed text.
Result<std::vector<protocol::FilegroupChange>> parse_initial_disk_objects(
    const std::string& logfile_group, const std::string& tablespace);

}  // namespace duo::datad
