// duo_blob_parts_check: checks a table's BLOB/TEXT parts against its rows, through the
// client library (the fault test's referee, large_values_fault_test.py): every row's
// values read back whole (a missing part fails the read), and every parts table holds,
// per row, exactly parts 0..n-1 for the value's length — none of a row that does not
// exist (orphans), none past the value's end. Prints "rows R parts P" and exits 0, or
// prints what is wrong and exits 1.
//
// Usage: duo_blob_parts_check CONNECT_STRING CLUSTER_TABLE_NAME   ("db/def/t")
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "ndb-kernel/api/blob_parts.h"
#include "ndb-kernel/api/cluster_connection.h"

namespace {

using duo::api::TablePtr;

// The first `key_columns` values of `row`, length-prefixed: a row's identity.
std::string key_text(const duo::storage::AttrValues& row, size_t key_columns) {
  std::string out;
  for (size_t k = 0; k < key_columns && k < row.size(); ++k) {
    out += std::to_string(row.value(k).size()) + ":";
    out += row.value(k);
  }
  return out;
}

int fail(const std::string& what) {
  std::printf("FAILED %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CONNECT_STRING CLUSTER_TABLE_NAME\n", argv[0]);
    return 2;
  }
  duo::api::ClusterOptions options;
  options.connect_string = argv[1];
  options.name = "duo_blob_parts_check";
  auto cluster = duo::api::Cluster::connect(options);
  if (!cluster.ok()) return fail("connect: " + cluster.status().message());
  if (!(*cluster)->wait_until_ready(30000).ok()) return fail("no data node");
  auto table = (*cluster)->get_table(argv[2]);
  if (!table.ok()) return fail("table: " + table.status().message());
  const duo::protocol::TableDef& base = **table;
  const size_t key_columns = base.schema.primary_key.size();
  auto session = (*cluster)->new_session();
  auto tx = session->begin();
  if (!tx.ok()) return fail("begin: " + tx.status().message());

  // Rows, with the key columns first, as the parts tables have them.
  duo::api::ScanSpec spec;
  for (uint16_t column : base.schema.primary_key) spec.columns.push_back(column);
  const std::vector<uint16_t> parted = duo::api::blob_parts_columns(base);
  for (uint16_t column : parted) spec.columns.push_back(column);
  auto cursor = (*tx)->scan(base, spec);
  if (!cursor.ok()) return fail("scan: " + cursor.status().message());
  // The rows' keys (a parts row of any other key is an orphan).
  std::set<std::string> row_keys;
  size_t rows = 0;
  duo::storage::AttrValues row;
  for (;;) {
    auto more = (*cursor)->next(&row);
    if (!more.ok()) return fail("reading rows whole: " + more.status().message());
    if (!*more) break;
    ++rows;
    row_keys.insert(key_text(row, key_columns));
    for (size_t k = key_columns; k < row.size(); ++k) {
      const uint64_t total =
          row.entry(k).is_null ? 0 : duo::api::blob_total_bytes(row.value(k));
      if (!row.entry(k).is_null && row.value(k).size() != total + duo::api::kBlobHeaderBytes) {
        return fail("a value read back is not whole");
      }
    }
  }
  size_t parts_rows = 0;
  for (uint16_t column : parted) {
    auto parts = (*cluster)->get_table(
        duo::api::blob_parts_table_name(base.schema.name, base.schema.table_id, column));
    if (!parts.ok()) return fail("parts table: " + parts.status().message());
    const uint32_t inline_bytes = base.schema.columns[column].length;
    const uint32_t part_bytes = duo::api::blob_part_bytes(**parts);
    // The rows again, for their lengths (the first scan checked they read whole).
    std::map<std::string, std::set<uint32_t>> seen;
    auto part_cursor = (*tx)->scan(**parts, duo::api::ScanSpec{});
    if (!part_cursor.ok()) return fail("parts scan: " + part_cursor.status().message());
    duo::storage::AttrValues part;
    for (;;) {
      auto more = (*part_cursor)->next(&part);
      if (!more.ok()) return fail("parts scan: " + more.status().message());
      if (!*more) break;
      ++parts_rows;
      const std::string_view number = part.value(key_columns);
      uint32_t n = 0;
      for (size_t b = 0; b < 4; ++b) n |= uint32_t{static_cast<uint8_t>(number[b])} << (8 * b);
      seen[key_text(part, key_columns)].insert(n);
    }
    for (auto& [key, parts_seen] : seen) {
      if (!row_keys.count(key)) {
        return fail("orphaned parts: " + std::to_string(parts_seen.size()) +
                    " parts of a row that does not exist (column " + std::to_string(column) + ")");
      }
    }
    auto rescan = (*tx)->scan(base, spec);
    if (!rescan.ok()) return fail("rescan: " + rescan.status().message());
    for (;;) {
      auto more = (*rescan)->next(&row);
      if (!more.ok()) return fail("rescan: " + more.status().message());
      if (!*more) break;
      const int at = row.find(column);
      const uint64_t total = (at < 0 || row.entry(static_cast<size_t>(at)).is_null)
                                 ? 0
                                 : duo::api::blob_total_bytes(row.value(static_cast<size_t>(at)));
      const uint64_t count = duo::api::blob_part_count(total, inline_bytes, part_bytes);
      const std::set<uint32_t>& have = seen[key_text(row, key_columns)];
      if (have.size() != count || (count > 0 && *have.rbegin() != count - 1)) {
        return fail("a value of " + std::to_string(total) + " bytes has " +
                    std::to_string(have.size()) + " parts, not " + std::to_string(count));
      }
    }
  }
  std::printf("rows %zu parts %zu\n", rows, parts_rows);
  return 0;
}
