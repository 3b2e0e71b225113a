// SimFileSystem and SimDisk: the node's file system block for the deterministic
// simulator — the same block number, signals and contract as the real FileSystemBlock
// (fs/fs_messages.h; fs/testing/fs_contract.h runs the same cases against both), over a
// disk that lives in memory and fails the way disks fail (DESIGN.md §3: "a simulated
// disk (unsynced writes lost on crash, torn and failed writes, full disk)"; LevelDB's
// fault_injection_test.cc and FoundationDB's AsyncFileNonDurable are the models).
//
// SimDisk is the node's disk. It outlives the node's crashes: the harness owns one per
// node, hands it to every incarnation's SimFileSystem (capture it in the BlockFactory),
// and calls crash() when it crashes the node. Per file it keeps what reads see now, the
// durable bytes, and the writes made since the file's last sync. The crash model:
//   - Synced data always survives (an answered FS_SYNCREQ or kFsSyncAfter write).
//   - Each unsynced write independently, as the disk's seed decides, survives whole, is
//     lost, or — if it spans several 512-byte sectors — is torn: a non-empty proper
//     prefix of its sectors survives. Writes are replayed in the order they were made.
//   - Creating and removing files and directories, and truncating at open, are durable
//     at once (the real block fsyncs the parent directory before answering).
//   - Open handles die with the node: they live in the SimFileSystem block, which the
//     crash destroys; a restarted node's block knows no handle.
// Faults a test switches on: a path whose reads and/or writes fail (kIoError, EIO),
// and a capacity beyond which growing a file fails (kIoError, ENOSPC).
//
// SimFileSystem executes each request when it arrives (so a crash between a request and
// its answer may or may not keep its effect, as on a real disk) and answers after
// `latency_ms` plus a seeded jitter in [0, latency_jitter_ms] (from the block's random
// stream), via send_delayed, never earlier than the previous answer on the same handle:
// per-handle FIFO holds whatever the jitter. Page IO (FS_PAGE_READREQ/WRITEREQ) copies
// between the disk and the requester's frame when the request arrives and is answered
// outside the handle's FIFO (the jitter may reorder page answers, as libaio does), but
// never after the handle's next close answer.
//
// Deterministic: no real files, clocks, threads or unseeded randomness (kernel_tidy.py
// scans this file).
//
// Thread-safety: none; the simulator is single-threaded. SimDisk is used by its node's
// block and the harness, both on the simulator's thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ndb-kernel/common/random.h"
#include "ndb-kernel/common/status.h"
#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/runtime/block.h"

namespace duo::sim {

using fs::Bytes;

// One file's bytes on the simulated disk.
struct SimFile {
  struct UnsyncedWrite {
    uint64_t offset = 0;
    Bytes bytes;
  };
  Bytes data;                           // what reads see now
  Bytes durable;                        // what a crash starts from
  std::vector<UnsyncedWrite> unsynced;  // since the last sync, oldest first
};

struct SimDiskStats {
  uint64_t crashes = 0;
  uint64_t writes_survived = 0;  // unsynced writes a crash kept whole
  uint64_t writes_lost = 0;      // ... dropped
  uint64_t writes_torn = 0;      // ... cut to a prefix of their sectors
  uint64_t faults_injected = 0;  // requests failed by fail_path or the capacity
};

class SimDisk {
 public:
  // Capacity meaning "never full".
  static constexpr uint64_t kUnlimited = ~uint64_t{0};

  // `seed` drives the crash model only; the same seed and the same writes give the same
  // disk after crash().
  explicit SimDisk(uint64_t seed);
  SimDisk(const SimDisk&) = delete;
  SimDisk& operator=(const SimDisk&) = delete;

  // ---- The harness ----

  // Applies the crash model to every file (see the file comment).
  void crash();
  // Reads and/or writes (and syncs) on `path` fail with kIoError, errno EIO, until
  // clear_faults().
  void fail_path(const std::string& path, bool reads, bool writes);
  void clear_faults();
  // Growing files beyond `bytes` in total fails with kIoError, errno ENOSPC.
  void set_capacity_bytes(uint64_t bytes) { capacity_bytes_ = bytes; }
  // Inspection: whether `path` is a file, its current and durable bytes ("" if absent),
  // and the bytes all files take.
  bool file_exists(const std::string& path) const { return files_.contains(path); }
  std::string content(const std::string& path) const;
  std::string durable_content(const std::string& path) const;
  uint64_t used_bytes() const;
  const SimDiskStats& stats() const { return stats_; }

  // ---- SimFileSystem ----
  // Each returns OK or the contract's error (fs/fs_messages.h), with the errno in
  // *os_errno (0 when there is none). Paths are already checked (check_fs_path).

  Status open_file(const std::string& path, uint32_t flags, std::shared_ptr<SimFile>* file,
                   uint32_t* os_errno);
  Status write_file(SimFile& file, const std::string& path, uint64_t offset, const Bytes& bytes,
                    uint32_t* os_errno);
  Status read_file(const SimFile& file, const std::string& path, uint64_t offset, uint32_t length,
                   Bytes* out, uint32_t* os_errno);
  Status sync_file(SimFile& file, const std::string& path, uint32_t* os_errno);
  Status remove_path(const std::string& path, bool recursive, uint32_t* os_errno);
  // Removes `path` if it still names `file` (a close with kFsRemoveAfter).
  void remove_file_if(const std::string& path, const SimFile* file);
  Status list_directory(const std::string& path, std::vector<std::string>* names,
                        uint32_t* os_errno);

 private:
  struct Fault {
    bool reads = false;
    bool writes = false;
  };
  bool is_directory(const std::string& path) const {
    return path.empty() || directories_.contains(path);
  }
  // The fault switched on for `path`, if any.
  const Fault* fault_on(const std::string& path) const;
  // Replays `file`'s unsynced writes over its durable bytes as the crash model decides.
  void crash_file(SimFile& file);

  SeededRandom random_;
  std::map<std::string, std::shared_ptr<SimFile>> files_;  // ordered: deterministic crash
  std::set<std::string> directories_;                      // "" (the root) is implicit
  std::map<std::string, Fault> faults_;
  uint64_t capacity_bytes_ = kUnlimited;
  SimDiskStats stats_;
};

struct SimFileSystemOptions {
  uint32_t open_files_max = fs::kFsOpenFilesDefault;
  uint64_t latency_ms = 1;
  uint64_t latency_jitter_ms = 0;
};

class SimFileSystem final : public kernel::Block {
 public:
  // `disk` must outlive the block.
  explicit SimFileSystem(SimDisk& disk, SimFileSystemOptions options = {});

  uint32_t open_files() const { return static_cast<uint32_t>(handles_.size()); }

 private:
  struct Handle {
    std::string path;
    std::shared_ptr<SimFile> file;  // kept by the handle even if the path is removed
    uint32_t flags = 0;
    uint64_t last_answer_ms = 0;  // delivery time of the handle's latest answer
  };

  void on_open(kernel::Signal& signal);
  void on_write(kernel::Signal& signal);
  void on_read(kernel::Signal& signal);
  void on_sync(kernel::Signal& signal);
  void on_close(kernel::Signal& signal);
  void on_remove(kernel::Signal& signal);
  void on_list(kernel::Signal& signal);
  void on_page_io(kernel::Signal& signal);
  void on_alloc(kernel::Signal& signal);

  // The open handle `number`, or null after answering `signal` with FS_REF.
  Handle* find_handle(const kernel::Signal& signal, uint32_t number);
  // Sends `answer` to `signal`'s sender after the latency; after `handle`'s previous
  // answer if a handle is given.
  void answer(const kernel::Signal& signal, kernel::Signal answer, Handle* handle = nullptr);
  // Sends a page IO answer after the latency, in no order with the handle's other
  // answers, and makes the handle's later answers (a close) come after it.
  void answer_page(const kernel::Signal& signal, kernel::Signal answer, Handle& handle);
  void refuse(const kernel::Signal& signal, const Status& status, uint32_t os_errno = 0);

  SimDisk& disk_;
  const SimFileSystemOptions options_;
  std::map<uint32_t, Handle> handles_;
  uint32_t next_handle_ = 1;
};

}  // namespace duo::sim
