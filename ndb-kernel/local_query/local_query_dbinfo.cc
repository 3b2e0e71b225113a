// LocalQueryBlock: ndbinfo.cluster_operations (NDB's DBINFO scan of DBLQH's operation
// records): DBINFO_SCANREQ from an API node is answered with one row per live operation
// (prepared or waiting for a row lock) of every transaction held here, at most
// protocol::kDbinfoRowsMax (the answer says when rows were left out).
//
// Thread-safety: the block's thread only (runtime/block.h).
#include "ndb-kernel/local_query/local_query_block.h"

namespace duo::local_query {

void LocalQueryBlock::on_dbinfo_scan(kernel::Signal& signal) {
  const uint32_t request_id = signal.word(0);
  if (signal.word(1) != protocol::kDbinfoOperations) {
    DUO_BLOCK_LOG(WARNING) << "unknown ndbinfo table " << signal.word(1) << " asked by "
                           << signal.sender().to_string();
    return;
  }
  std::vector<protocol::DbinfoOperation> rows;
  bool truncated = false;
  for (const auto& [transid, transaction] : transactions_) {
    for (const FragmentTx& ftx : transaction.fragments) {
      const storage::Fragment* fragment = find_fragment(ftx.table_id, ftx.fragment_id);
      if (fragment == nullptr) continue;
      for (const storage::Fragment::OperationInfo& op : fragment->operations_of(ftx.tx)) {
        if (rows.size() == protocol::kDbinfoRowsMax) {
          truncated = true;
          break;
        }
        protocol::DbinfoOperation row;
        row.transid = transid;
        row.table_id = ftx.table_id;
        row.fragment = ftx.fragment_id;
        row.api_node = transaction.api_node;
        row.type = op.type;
        row.lock = op.mode;
        row.waiting = op.waiting;
        rows.push_back(row);
      }
    }
  }
  kernel::Signal conf(protocol::kDbinfoScanConf,
                      {request_id, static_cast<uint32_t>(rows.size()), truncated ? 1u : 0u});
  protocol::Bytes section;
  protocol::encode_dbinfo_operations(rows, &section);
  conf.set_section(std::move(section));
  send_or_log(signal.sender(), std::move(conf));
}

}  // namespace duo::local_query
