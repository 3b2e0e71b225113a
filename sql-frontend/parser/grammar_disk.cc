// Disk-data grammar (NDB): CREATE/ALTER/DROP LOGFILE GROUP and CREATE/ALTER/DROP
// TABLESPACE, with their options in any order, each with an optional '='.
#include "sql-frontend/parser/grammar.h"

namespace duo::sql {

bool Parser::peek_disk_object(size_t ahead) const {
  return (peek_word("LOGFILE", ahead) && peek(ahead + 1).is(Keyword::kGroup)) ||
         peek(ahead).is(Keyword::kTablespace);
}

StatementPtr Parser::parse_disk_object(SourcePos pos, DiskObjectVerb verb) {
  auto stmt = std::make_unique<DiskObjectStatement>(pos);
  const bool logfile_group = accept_word("LOGFILE");
  if (logfile_group) {
    expect(Keyword::kGroup);
  } else {
    expect(Keyword::kTablespace);
  }
  stmt->name = parse_identifier();
  const char* file_word = logfile_group ? "UNDOFILE" : "DATAFILE";
  switch (verb) {
    case DiskObjectVerb::kCreate:
      expect(Keyword::kAdd);
      if (!accept_word(file_word)) fail();
      stmt->file = parse_string();
      if (logfile_group) {
        stmt->action = DiskObjectAction::kCreateLogfileGroup;
      } else {
        stmt->action = DiskObjectAction::kCreateTablespace;
        // USE LOGFILE GROUP is required by NDB; MySQL's grammar has it optional (InnoDB).
        if (accept(Keyword::kUse)) {
          if (!accept_word("LOGFILE")) fail();
          expect(Keyword::kGroup);
          stmt->logfile_group = parse_identifier();
        }
      }
      break;
    case DiskObjectVerb::kAlter:
      if (accept(Keyword::kAdd)) {
        if (!accept_word(file_word)) fail();
        stmt->action =
            logfile_group ? DiskObjectAction::kAddUndofile : DiskObjectAction::kAddDatafile;
      } else if (!logfile_group && peek().is(Keyword::kDrop)) {
        take();
        if (!accept_word(file_word)) fail();
        stmt->action = DiskObjectAction::kDropDatafile;
      } else {
        fail();
      }
      stmt->file = parse_string();
      break;
    case DiskObjectVerb::kDrop:
      stmt->action =
          logfile_group ? DiskObjectAction::kDropLogfileGroup : DiskObjectAction::kDropTablespace;
      break;
  }
  // Options, in any order.
  for (;;) {
    const auto size_option = [&](std::string_view word, std::optional<std::string>* out) {
      if (!accept_word(word)) return false;
      accept(TokenKind::kEq);
      const Token& t = peek();
      if (!t.is(TokenKind::kInteger) && !(t.kind == TokenKind::kWord && !t.text.empty() &&
                                          t.text[0] >= '0' && t.text[0] <= '9')) {
        fail();
      }
      *out = std::string(t.text);
      take();
      return true;
    };
    if (size_option("INITIAL_SIZE", &stmt->initial_size) ||
        size_option("UNDO_BUFFER_SIZE", &stmt->undo_buffer_size) ||
        size_option("REDO_BUFFER_SIZE", &stmt->redo_buffer_size) ||
        size_option("EXTENT_SIZE", &stmt->extent_size) ||
        size_option("AUTOEXTEND_SIZE", &stmt->autoextend_size) ||
        size_option("MAX_SIZE", &stmt->max_size)) {
      continue;
    }
    if (accept(Keyword::kEngine)) {
      accept(TokenKind::kEq);
      stmt->engine = parse_name_or_string();
      continue;
    }
    if (accept(Keyword::kComment)) {
      accept(TokenKind::kEq);
      stmt->comment = parse_string();
      continue;
    }
    if (accept_word("WAIT")) {
      stmt->wait = true;
      continue;
    }
    if (accept_word("NODEGROUP")) {
      accept(TokenKind::kEq);
      parse_unsigned();  // NDB ignores it
      continue;
    }
    break;
  }
  return stmt;
}

}  // namespace duo::sql
