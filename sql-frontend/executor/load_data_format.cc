// LoadDataReader: see load_data_format.h.
#include "sql-frontend/executor/load_data_format.h"

#include <algorithm>

namespace duo::sql::executor {

LoadDataReader::LoadDataReader(LoadDataFormat format)
    : format_(std::move(format)),
      lookahead_(std::max({format_.fields_terminated.size(), format_.lines_terminated.size(),
                           format_.lines_starting.size(), size_t{2}})) {}

void LoadDataReader::feed(std::string_view bytes) {
  // Drop what is consumed once it is worth the copy.
  if (pos_ > 64 * 1024 && pos_ * 2 > buffer_.size()) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
  buffer_.append(bytes);
}

bool LoadDataReader::at(size_t pos, const std::string& token) const {
  return !token.empty() && buffer_.compare(pos, token.size(), token) == 0;
}

char LoadDataReader::unescape(char c) const {
  switch (c) {
    case '0':
      return '\0';
    case 'b':
      return '\b';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'Z':
      return '\x1a';
    default:
      return c;
  }
}

LoadDataReader::Next LoadDataReader::next(LoadDataRecord* record, bool at_eof) {
  size_t end = pos_;
  switch (parse(&end, record, at_eof)) {
    case Parse::kRecord:
      pos_ = end;
      return Next::kRecord;
    case Parse::kNeedMore:
      return Next::kNeedMore;
    case Parse::kEnd:
      pos_ = buffer_.size();
      return Next::kEnd;
  }
  return Next::kEnd;
}

LoadDataReader::Parse LoadDataReader::parse(size_t* end, LoadDataRecord* record,
                                            bool at_eof) const {
  record->clear();
  const size_t size = buffer_.size();
  size_t p = pos_;
  // A terminator may be cut by the end of what arrived: wait for more unless at EOF.
  auto short_of_data = [&](size_t q) { return !at_eof && size - q < lookahead_; };
  if (!format_.lines_starting.empty()) {
    const size_t found = buffer_.find(format_.lines_starting, p);
    if (found == std::string::npos) return at_eof ? Parse::kEnd : Parse::kNeedMore;
    p = found + format_.lines_starting.size();
  } else if (p >= size) {
    return at_eof ? Parse::kEnd : Parse::kNeedMore;
  }
  const char esc = format_.escaped.empty() ? 0 : format_.escaped[0];
  const bool has_esc = !format_.escaped.empty();
  const char enc = format_.enclosed.empty() ? 0 : format_.enclosed[0];
  const bool has_enc = !format_.enclosed.empty();
  for (;;) {
    // One field from p.
    std::string value;
    size_t q = p;
    bool record_ends = false;
    if (has_enc && q < size && buffer_[q] == enc) {
      ++q;
      for (;;) {
        if (q >= size) {
          if (!at_eof) return Parse::kNeedMore;
          record_ends = true;  // unterminated: the rest is the field
          break;
        }
        const char c = buffer_[q];
        if (has_esc && c == esc && c != enc) {
          if (q + 1 >= size) {
            if (!at_eof) return Parse::kNeedMore;
            value += c;
            ++q;
            continue;
          }
          value += unescape(buffer_[q + 1]);
          q += 2;
          continue;
        }
        if (c == enc) {
          if (short_of_data(q + 1)) return Parse::kNeedMore;
          if (q + 1 < size && buffer_[q + 1] == enc) {  // doubled: one enclosing character
            value += enc;
            q += 2;
            continue;
          }
          if (q + 1 >= size) {
            q += 1;
            record_ends = true;
            break;
          }
          if (at(q + 1, format_.fields_terminated)) {
            q += 1 + format_.fields_terminated.size();
            break;
          }
          if (at(q + 1, format_.lines_terminated)) {
            q += 1 + format_.lines_terminated.size();
            record_ends = true;
            break;
          }
          value += c;  // an enclosing character inside the field
          ++q;
          continue;
        }
        value += c;
        ++q;
      }
      record->emplace_back(std::move(value));
    } else {
      const size_t start = q;
      size_t raw_end = q;
      for (;;) {
        if (short_of_data(q)) return Parse::kNeedMore;
        if (q >= size) {
          raw_end = q;
          record_ends = true;
          break;
        }
        if (at(q, format_.fields_terminated)) {
          raw_end = q;
          q += format_.fields_terminated.size();
          break;
        }
        if (at(q, format_.lines_terminated)) {
          raw_end = q;
          q += format_.lines_terminated.size();
          record_ends = true;
          break;
        }
        const char c = buffer_[q];
        if (has_esc && c == esc && q + 1 < size) {
          value += unescape(buffer_[q + 1]);
          q += 2;
          continue;
        }
        value += c;
        ++q;
      }
      const std::string_view raw(buffer_.data() + start, raw_end - start);
      const bool is_null = (has_esc && raw.size() == 2 && raw[0] == esc && raw[1] == 'N') ||
                           (has_enc && raw == "NULL");
      if (is_null) {
        record->emplace_back(std::nullopt);
      } else {
        record->emplace_back(std::move(value));
      }
    }
    p = q;
    if (record_ends) break;
  }
  *end = p;
  return Parse::kRecord;
}

}  // namespace duo::sql::executor
