// LocalQueryBlock: node failure handling (NDB's DBLQH part of node failure handling).
// When a data node dies this instance stops routing writes to it and drops what only it
// could have used (its coordinator's scans, late requests from it), and answers the
// takeover coordinator's LQH_TRANSREQ: which transactions coordinated by the dead node
// are held here, prepared or committed (with the commit's GCI). The takeover
// coordinator then commits or aborts each of them everywhere with ordinary
// LQH_COMMITREQ / LQH_ABORTREQ (docs/formats/kernel-protocol.md "Node failure:
// takeover").
#include <algorithm>
#include <utility>

#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/protocol/wire_codec.h"

namespace duo::local_query {

using kernel::Signal;

namespace {
// The node that coordinates a transaction is the top 16 bits of its transid
// (docs/formats/kernel-protocol.md "Identifiers").
uint16_t coordinator_of(uint64_t transid) {
  return static_cast<uint16_t>(transid >> 48);
}

// LQH_TRANSCONF entries per signal: 12 bytes each keeps a section under 48 KiB.
constexpr size_t kTransEntriesPerSignal = 4096;
}  // namespace

bool LocalQueryBlock::is_dead(uint16_t node) const {
  return !dead_nodes_.empty() && std::binary_search(dead_nodes_.begin(), dead_nodes_.end(), node);
}

void LocalQueryBlock::remember_commit(uint64_t transid, uint32_t gci) {
  // Only a dead coordinator's transactions are ever asked about, and this node's own
  // coordinator cannot die without this block: its commits need no record.
  if (gci == 0 || coordinator_of(transid) == node_id()) return;
  // Once per transid: its local transaction ended here with this commit.
  committed_.emplace_back(transid, gci);
}

void LocalQueryBlock::forget_commits(uint32_t saved_gci) {
  std::erase_if(committed_, [saved_gci](const auto& entry) { return entry.second <= saved_gci; });
}

void LocalQueryBlock::on_node_fail_rep(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  const std::vector<uint16_t> data_nodes = topology_.data_nodes();
  // An API node's failure is its coordinator's business; ours is about data nodes.
  if (node == node_id() || is_dead(node) ||
      std::find(data_nodes.begin(), data_nodes.end(), node) == data_nodes.end()) {
    return;
  }
  dead_nodes_.insert(std::upper_bound(dead_nodes_.begin(), dead_nodes_.end(), node), node);
  // A starting node that dies is dead again; copies to it (or from it) stop.
  std::erase(starting_nodes_, node);
  copy_node_failed(node);
  // Scans its coordinator opened: nobody will ask for their next batch.
  const size_t scans_before = scans_.size();
  std::erase_if(scans_, [node](const auto& entry) { return entry.first.node_id == node; });
  DUO_BLOCK_LOG(INFO) << "data node " << node << " failed: writes skip it, "
                      << (scans_before - scans_.size()) << " of its scan(s) closed";
}

void LocalQueryBlock::on_trans_req(Signal& signal) {
  const uint16_t dead = static_cast<uint16_t>(signal.word(0));
  if (!is_dead(dead)) {
    // The takeover coordinator heard of the failure first: from now on nothing of the
    // dead node may start here (a late forwarded operation would stay prepared).
    Signal failed(protocol::kNodeFailRep, {dead});
    on_node_fail_rep(failed);
  }
  std::vector<std::pair<uint64_t, uint32_t>> entries;  // (transid, commit GCI or 0)
  for (const auto& [transid, tx] : transactions_) {
    if (coordinator_of(transid) == dead) entries.emplace_back(transid, 0);
  }
  const size_t prepared = entries.size();
  for (const auto& [transid, gci] : committed_) {
    if (coordinator_of(transid) == dead) entries.emplace_back(transid, gci);
  }
  // Committed ones by transid, each once, as they always went.
  std::sort(entries.begin() + static_cast<std::ptrdiff_t>(prepared), entries.end());
  entries.erase(std::unique(entries.begin() + static_cast<std::ptrdiff_t>(prepared), entries.end(),
                            [](const auto& a, const auto& b) { return a.first == b.first; }),
                entries.end());
  size_t next = 0;
  do {
    const size_t count = std::min(kTransEntriesPerSignal, entries.size() - next);
    protocol::Bytes section;
    section.reserve(count * 12);
    for (size_t i = 0; i < count; ++i, ++next) {
      protocol::put_u64(&section, entries[next].first);
      protocol::put_u32(&section, entries[next].second);
    }
    const uint32_t last = next == entries.size() ? 1 : 0;
    Signal conf(protocol::kLqhTransConf, {dead, last, static_cast<uint32_t>(count)});
    conf.set_section(std::move(section));
    send_or_log(signal.sender(), std::move(conf));
  } while (next < entries.size());
  DUO_BLOCK_LOG(INFO) << "takeover of node " << dead << ": " << entries.size()
                      << " of its transaction(s) held here";
}

}  // namespace duo::local_query
