// Whole small files (keys, certificates, pid and port files): read one, or create one
// that must not exist yet. Not for data files: those go through the kernel's file system
// block.
//
// Thread-safety: pure functions over the file system.
#pragma once

#include <sys/types.h>

#include <string>

#include "ndb-kernel/common/status.h"

namespace duo {

// The contents of `path`; kIoError naming it when it cannot be read.
Result<std::string> read_small_file(const std::string& path);
// Writes `text` to the new file `path` with `mode` and syncs it; never replaces an
// existing file (kIoError then, as for any failure).
Status write_new_small_file(const std::string& path, const std::string& text, mode_t mode);
bool file_exists(const std::string& path);

}  // namespace duo
