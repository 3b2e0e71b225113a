// DualCopyFile: a small file a block rewrites whole and must find intact after any crash
// — the dictionary's schema file, the distribution block's sysfile — kept as two copies
// (`<path>.0`, `<path>.1`) written alternately, as NDB keeps P0.SchemaLog / the sysfile.
//
// A write goes to the copy NOT holding the newest valid contents and is synced before
// it is reported done, so at every instant at least one copy is complete: a crash during
// a write loses only that write. A read takes the valid copy with the higher sequence.
// Copy layout (little-endian): u32 magic "DUO2", u32 sequence, u32 payload bytes,
// payload, u32 masked crc32c of everything before it.
//
// It is the block side of file IO: it sends FS_* requests to the node's file system
// block through the owner's send function and must be handed every FS answer whose
// user_ref it owns (owns()). One operation at a time; a write asked for while another
// runs is kept (the newest only) and runs after it.
//
// Thread-safety: used only on its owner block's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/runtime/signal.h"

namespace duo::fs_client {

using Bytes = std::vector<uint8_t>;

class DualCopyFile {
 public:
  // Sends a request to the node's file system block (the owner's Block::send).
  using SendFn = std::function<Status(kernel::Signal)>;
  using WriteDone = std::function<void(Status)>;
  // kNotFound when neither copy exists; kCorruption when copies exist but none is valid.
  using ReadDone = std::function<void(Result<Bytes>)>;

  // `tag` (1..65535) marks this object's user_refs; unique per owner block.
  DualCopyFile(std::string path, uint16_t tag, uint16_t node_id, SendFn send);

  void write(Bytes payload, WriteDone done);
  void read(ReadDone done);

  bool owns(const kernel::Signal& signal) const;
  // Handles an FS answer that owns() said is ours.
  void on_fs_answer(kernel::Signal& signal);
  bool busy() const { return step_ != Step::kIdle; }

  // Encoding of one copy (exposed for tests).
  static Bytes encode_copy(uint32_t sequence, const Bytes& payload);
  // The payload and sequence of a valid copy; kCorruption otherwise.
  static Result<std::pair<uint32_t, Bytes>> decode_copy(const Bytes& bytes);

 private:
  enum class Step : uint8_t {
    kIdle,
    kWriteOpen, kWriteData, kWriteClose,
    kReadOpen, kReadData, kReadClose,
  };

  void request(kernel::Signal signal);
  void start_write();
  void write_next_chunk();
  void start_read_copy();
  void read_next_chunk();
  void finish_read_copy();
  void fail(Status status);
  std::string copy_path(uint32_t copy) const { return path_ + "." + std::to_string(copy); }

  const std::string path_;
  const uint16_t tag_;
  const uint16_t node_id_;
  const SendFn send_;

  Step step_ = Step::kIdle;
  uint16_t serial_ = 0;  // low half of user_ref: answers to older requests are ignored
  uint32_t handle_ = 0;
  uint32_t newest_sequence_ = 0;  // of the newest valid copy seen or written
  uint32_t newest_copy_ = 1;      // which copy holds it (so the first write goes to .0)

  // Write in progress / waiting.
  Bytes write_bytes_;
  size_t write_offset_ = 0;
  WriteDone write_done_;
  std::optional<std::pair<Bytes, WriteDone>> pending_write_;

  // Read in progress.
  ReadDone read_done_;
  uint32_t read_copy_ = 0;
  uint64_t read_size_ = 0;
  Bytes read_bytes_;
  std::optional<std::pair<uint32_t, Bytes>> best_;  // (sequence, payload)
  bool any_copy_exists_ = false;
  uint32_t best_copy_ = 0;
};

}  // namespace duo::fs_client
