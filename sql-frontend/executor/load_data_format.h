// LoadDataReader: splits the bytes of a LOAD DATA file into records of fields as MySQL's
// READ_INFO does: FIELDS TERMINATED BY / [OPTIONALLY] ENCLOSED BY / ESCAPED BY, LINES
// STARTING BY / TERMINATED BY. Escapes \0 \b \n \r \t \Z and \x -> x; a field that is
// exactly \N (escape + N), or the unenclosed word NULL when ENCLOSED BY is set, is NULL;
// inside an enclosed field a doubled enclosing character is one. Lines without the
// STARTING BY prefix are skipped. The bytes arrive in pieces (the client's packets):
// next() says when it needs more.
//
// Thread-compatible; pure (no IO).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duo::sql::executor {

struct LoadDataFormat {
  std::string fields_terminated = "\t";
  std::string enclosed;  // empty or one byte
  std::string escaped = "\\";  // empty or one byte
  std::string lines_starting;
  std::string lines_terminated = "\n";
};

using LoadDataRecord = std::vector<std::optional<std::string>>;  // nullopt: NULL

class LoadDataReader {
 public:
  explicit LoadDataReader(LoadDataFormat format);

  void feed(std::string_view bytes);

  enum class Next { kRecord, kNeedMore, kEnd };
  // The next record into `record`; kNeedMore until the rest of it is fed (at_eof: no
  // more bytes come, so whatever is left is the last record); kEnd when none is left.
  Next next(LoadDataRecord* record, bool at_eof);

 private:
  enum class Parse { kRecord, kNeedMore, kEnd };
  Parse parse(size_t* end, LoadDataRecord* record, bool at_eof) const;
  bool at(size_t pos, const std::string& token) const;
  char unescape(char c) const;

  const LoadDataFormat format_;
  const size_t lookahead_;  // bytes a terminator may need to be recognized
  std::string buffer_;
  size_t pos_ = 0;
};

}  // namespace duo::sql::executor
