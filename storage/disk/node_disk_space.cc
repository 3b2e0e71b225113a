#include "storage/disk/node_disk_space.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace duo::storage::disk {

void NodeDiskSpace::check_held(const Lock& held) const {
  // Always on: a call without the lock would let two LDM threads write one header page.
  if (!held.owns_lock() || held.mutex() != &mutex_) {
    std::fprintf(stderr, "NodeDiskSpace used without its lock\n");
    std::abort();
  }
}

Status NodeDiskSpace::create_logfile_group(const Lock& held, uint32_t id, uint64_t undo_bytes) {
  check_held(held);
  if (logfile_group_id_) {
    if (*logfile_group_id_ == id) return Status::OK();  // a repeated request
    return Status(ErrorCode::kInvalidArgument,
                  "only one logfile group is allowed (NDB 1514): " + std::to_string(*logfile_group_id_) +
                      " exists");
  }
  if (undo_bytes == 0) return Status(ErrorCode::kInvalidArgument, "logfile group without undo space");
  undo_ = std::make_unique<UndoLog>(undo_bytes, 1);
  logfile_group_id_ = id;
  return Status::OK();
}

Status NodeDiskSpace::create_tablespace(const Lock& held, uint32_t id, uint32_t extent_pages, uint32_t lg_id) {
  check_held(held);
  if (!logfile_group_id_ || *logfile_group_id_ != lg_id) {
    return Status(ErrorCode::kNotFound, "tablespace " + std::to_string(id) + ": no logfile group " +
                                            std::to_string(lg_id) + " on this node");
  }
  if (extent_pages == 0) return Status(ErrorCode::kInvalidArgument, "extent of zero pages");
  if (auto it = tablespaces_.find(id); it != tablespaces_.end()) {
    if (it->second->extent_pages() == extent_pages) return Status::OK();
    return Status(ErrorCode::kInvalidArgument, "tablespace " + std::to_string(id) + " exists with another extent size");
  }
  tablespaces_.emplace(id, std::make_unique<Tablespace>(id, extent_pages, header_pages_, undo_.get()));
  return Status::OK();
}

Status NodeDiskSpace::add_datafile(const Lock& held, uint32_t tablespace_id, uint32_t file_no, uint32_t file_pages) {
  check_held(held);
  Tablespace* ts = tablespace(held, tablespace_id);
  if (ts == nullptr) return Status(ErrorCode::kNotFound, "no tablespace " + std::to_string(tablespace_id));
  for (const auto& [id, other] : tablespaces_) {
    if (other->layout_of(file_no) != nullptr) {
      return Status(ErrorCode::kInvalidArgument, "datafile number " + std::to_string(file_no) +
                                                     " is already open in tablespace " + std::to_string(id));
    }
  }
  DUO_RETURN_IF_ERROR(ts->open_datafile(file_no, file_pages));
  ts->add_free_extents_of(file_no);
  return Status::OK();
}

Tablespace* NodeDiskSpace::tablespace(const Lock& held, uint32_t id) {
  check_held(held);
  auto it = tablespaces_.find(id);
  return it == tablespaces_.end() ? nullptr : it->second.get();
}

UndoLog* NodeDiskSpace::undo(const Lock& held) {
  check_held(held);
  return undo_.get();
}

std::optional<uint32_t> NodeDiskSpace::logfile_group_id(const Lock& held) const {
  check_held(held);
  return logfile_group_id_;
}

std::vector<NodeDiskSpace::DatafileUsage> NodeDiskSpace::datafile_usage(const Lock& held) const {
  check_held(held);
  std::vector<DatafileUsage> out;
  for (const auto& [id, ts] : tablespaces_) {
    for (uint32_t file_no : ts->file_numbers()) {
      out.push_back({id, file_no, ts->layout_of(file_no)->extent_count, ts->free_extent_count(file_no)});
    }
  }
  return out;
}

}  // namespace duo::storage::disk
