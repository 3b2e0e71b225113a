// DDL grammar: CREATE/DROP DATABASE, CREATE/DROP/ALTER/RENAME/TRUNCATE TABLE,
// CREATE/DROP INDEX, column definitions and data types, table options.
#include "sql-frontend/parser/grammar.h"

namespace duo::sql {

StatementPtr Parser::parse_create() {
  SourcePos pos = here();
  expect(Keyword::kCreate);
  if (peek().is(Keyword::kDatabase) || peek().is(Keyword::kSchema)) {
    take();
    auto stmt = std::make_unique<CreateDatabaseStatement>(pos);
    if (accept(Keyword::kIf)) {
      expect(Keyword::kNot);
      expect(Keyword::kExists);
      stmt->if_not_exists = true;
    }
    stmt->name = parse_identifier();
    for (;;) {
      const size_t start = pos_;
      accept(Keyword::kDefault);
      if (accept(Keyword::kCharset)) {
        accept(TokenKind::kEq);
        stmt->charset = parse_name_or_string();
      } else if (accept(Keyword::kCharacter)) {
        expect(Keyword::kSet);
        accept(TokenKind::kEq);
        stmt->charset = parse_name_or_string();
      } else if (accept(Keyword::kCollate)) {
        accept(TokenKind::kEq);
        stmt->collate = parse_name_or_string();
      } else {
        if (pos_ != start) fail();
        break;
      }
    }
    return stmt;
  }
  if (peek_view_definition()) return parse_view_definition(pos, /*alter=*/false);
  if (peek().is(Keyword::kTemporary) || peek().is(Keyword::kTable)) {
    bool temporary = accept(Keyword::kTemporary);
    expect(Keyword::kTable);
    return parse_create_table(pos, temporary);
  }
  if (peek().is(Keyword::kUnique) || peek().is(Keyword::kIndex)) {
    bool unique = accept(Keyword::kUnique);
    expect(Keyword::kIndex);
    return parse_create_index(pos, unique);
  }
  if (accept(Keyword::kUser)) return parse_user_statement(StatementKind::kCreateUser, pos);
  if (peek_disk_object()) return parse_disk_object(pos, DiskObjectVerb::kCreate);
  fail();
}

StatementPtr Parser::parse_create_table(SourcePos pos, bool temporary) {
  auto stmt = std::make_unique<CreateTableStatement>(pos);
  stmt->temporary = temporary;
  if (accept(Keyword::kIf)) {
    expect(Keyword::kNot);
    expect(Keyword::kExists);
    stmt->if_not_exists = true;
  }
  stmt->table = parse_object_name();
  if (accept(Keyword::kLike)) {
    stmt->like = parse_object_name();
    return stmt;
  }
  if (peek().is(TokenKind::kLeftParen) && peek(1).is(Keyword::kLike)) {
    take();
    take();
    stmt->like = parse_object_name();
    expect(TokenKind::kRightParen);
    return stmt;
  }
  // CREATE TABLE t [AS] SELECT ... / t (SELECT ...): the columns are the query's.
  const auto at_query = [&] {
    return peek().is(Keyword::kSelect) ||
           (peek().is(TokenKind::kLeftParen) && peek(1).is(Keyword::kSelect));
  };
  if (accept(Keyword::kAs) || at_query()) {
    stmt->select = parse_query_expr();
    return stmt;
  }
  expect(TokenKind::kLeftParen);
  do {
    const Token& t = peek();
    if (t.is(Keyword::kPrimary) || t.is(Keyword::kUnique) || t.is(Keyword::kKey) ||
        t.is(Keyword::kIndex) || t.is(Keyword::kConstraint)) {
      stmt->indexes.push_back(parse_index_def());
    } else {
      stmt->columns.push_back(parse_column_def());
    }
  } while (accept(TokenKind::kComma));
  expect(TokenKind::kRightParen);
  while (parse_table_option(stmt->options)) accept(TokenKind::kComma);
  if (peek().is(Keyword::kPartition)) parse_partition_by_key(*stmt);
  if (accept(Keyword::kAs) || peek().is(Keyword::kSelect)) stmt->select = parse_query_expr();
  return stmt;
}

void Parser::parse_partition_by_key(CreateTableStatement& stmt) {
  // Only the partition count is supported: every table is partitioned by its primary
  // key. A KEY column list, LINEAR, ALGORITHM, HASH/RANGE/LIST and partition
  // definitions stay the syntax error at PARTITION they were before.
  const size_t at = pos_;
  take();
  if (!accept(Keyword::kBy) || !accept(Keyword::kKey) || !accept(TokenKind::kLeftParen) ||
      !accept(TokenKind::kRightParen)) {
    fail_at(at);
  }
  stmt.partition_by_key = true;
  if (peek_word("PARTITIONS")) {
    take();
    stmt.partitions = parse_unsigned();
  }
}

bool Parser::parse_table_option(TableOptions& options) {
  const bool had_default = accept(Keyword::kDefault);
  if (accept(Keyword::kCharset) || accept(Keyword::kCharacter)) {
    if (tokens_[pos_ - 1].is(Keyword::kCharacter)) expect(Keyword::kSet);
    accept(TokenKind::kEq);
    options.charset = parse_name_or_string();
    return true;
  }
  if (accept(Keyword::kCollate)) {
    accept(TokenKind::kEq);
    options.collate = parse_name_or_string();
    return true;
  }
  if (had_default) fail_at(pos_);
  if (accept(Keyword::kEngine)) {
    accept(TokenKind::kEq);
    options.engine = parse_name_or_string();
    return true;
  }
  if (accept(Keyword::kAutoIncrement)) {
    accept(TokenKind::kEq);
    options.auto_increment = parse_unsigned();
    return true;
  }
  if (accept(Keyword::kComment)) {
    accept(TokenKind::kEq);
    options.comment = parse_string();
    return true;
  }
  if (accept(Keyword::kRowFormat)) {
    accept(TokenKind::kEq);
    options.row_format = to_upper(parse_name_or_string());
    return true;
  }
  if (accept(Keyword::kTablespace)) {
    accept(TokenKind::kEq);
    options.tablespace = parse_identifier().name;
    return true;
  }
  if (accept(Keyword::kStorage)) {
    if (accept(Keyword::kDisk)) {
      options.storage = ColumnStorage::kDisk;
    } else {
      expect(Keyword::kMemory);
      options.storage = ColumnStorage::kMemory;
    }
    return true;
  }
  return false;
}

ColumnDef Parser::parse_column_def() {
  ColumnDef col;
  col.name = parse_identifier();
  col.type = parse_data_type();
  for (;;) {
    const Token& t = peek();
    if (t.is(Keyword::kNot)) {
      take();
      expect(Keyword::kNull);
      col.nullable = false;
    } else if (t.is(Keyword::kNull)) {
      take();
      col.nullable = true;
    } else if (t.is(Keyword::kDefault)) {
      take();
      // DEFAULT literal | -number | CURRENT_TIMESTAMP[(n)] | NOW() | (expr)
      if (peek().is(TokenKind::kLeftParen)) {
        take();
        col.default_value = parse_expr();
        expect(TokenKind::kRightParen);
      } else {
        col.default_value = parse_unary();
      }
    } else if (t.is(Keyword::kOn)) {
      take();
      expect(Keyword::kUpdate);
      col.on_update = parse_primary();
    } else if (t.is(Keyword::kAutoIncrement)) {
      take();
      col.auto_increment = true;
    } else if (t.is(Keyword::kPrimary)) {
      take();
      expect(Keyword::kKey);
      col.primary_key = true;
    } else if (t.is(Keyword::kKey)) {
      take();
      col.primary_key = true;
    } else if (t.is(Keyword::kUnique)) {
      take();
      accept(Keyword::kKey);
      col.unique = true;
    } else if (t.is(Keyword::kComment)) {
      take();
      col.comment = parse_string();
    } else if (t.is(Keyword::kCollate) || t.is(Keyword::kCharset) || t.is(Keyword::kCharacter)) {
      parse_charset_collate(col.type);
    } else if (t.is(Keyword::kStorage)) {
      take();
      if (accept(Keyword::kDisk)) {
        col.storage = ColumnStorage::kDisk;
      } else {
        expect(Keyword::kMemory);
        col.storage = ColumnStorage::kMemory;
      }
    } else if (peek_word("COLUMN_FORMAT")) {
      take();
      if (accept(Keyword::kFixed)) {
        col.format = ColumnFormat::kFixed;
      } else if (accept(Keyword::kDynamic)) {
        col.format = ColumnFormat::kDynamic;
      } else {
        expect(Keyword::kDefault);
        col.format = ColumnFormat::kDefault;
      }
    } else {
      return col;
    }
  }
}

void Parser::parse_charset_collate(DataType& type) {
  for (;;) {
    if (accept(Keyword::kCollate)) {
      type.collate = parse_name_or_string();
    } else if (accept(Keyword::kCharset)) {
      type.charset = parse_name_or_string();
    } else if (peek().is(Keyword::kCharacter) && peek(1).is(Keyword::kSet)) {
      take();
      take();
      type.charset = parse_name_or_string();
    } else {
      return;
    }
  }
}

DataType Parser::parse_data_type() {
  DataType type;
  const Token& t = peek();
  if (t.kind != TokenKind::kWord) fail();
  bool integer = false, real = false, decimal = false, string = false;
  bool length_allowed = true;
  switch (t.keyword) {
    case Keyword::kTinyint:
      type.name = TypeName::kTinyInt;
      integer = true;
      break;
    case Keyword::kSmallint:
      type.name = TypeName::kSmallInt;
      integer = true;
      break;
    case Keyword::kMediumint:
      type.name = TypeName::kMediumInt;
      integer = true;
      break;
    case Keyword::kInt:
    case Keyword::kInteger:
      type.name = TypeName::kInt;
      integer = true;
      break;
    case Keyword::kBigint:
      type.name = TypeName::kBigInt;
      integer = true;
      break;
    case Keyword::kBool:
    case Keyword::kBoolean:
      take();
      type.name = TypeName::kTinyInt;
      type.length = 1;
      return type;
    case Keyword::kFloat:
      type.name = TypeName::kFloat;
      real = true;
      break;
    case Keyword::kDouble:
    case Keyword::kReal:
      type.name = TypeName::kDouble;
      real = true;
      break;
    case Keyword::kDecimal:
    case Keyword::kDec:
    case Keyword::kNumeric:
    case Keyword::kFixed:
      type.name = TypeName::kDecimal;
      decimal = true;
      break;
    case Keyword::kChar:
    case Keyword::kCharacter:
    case Keyword::kNchar:
      type.name = TypeName::kChar;
      string = true;
      break;
    case Keyword::kVarchar:
      type.name = TypeName::kVarchar;
      string = true;
      break;
    case Keyword::kBinary:
      type.name = TypeName::kBinary;
      break;
    case Keyword::kVarbinary:
      type.name = TypeName::kVarbinary;
      break;
    case Keyword::kDate:
      type.name = TypeName::kDate;
      length_allowed = false;
      break;
    case Keyword::kTime:
      type.name = TypeName::kTime;
      break;
    case Keyword::kDatetime:
      type.name = TypeName::kDatetime;
      break;
    case Keyword::kTimestamp:
      type.name = TypeName::kTimestamp;
      break;
    case Keyword::kYear:
      type.name = TypeName::kYear;
      break;
    case Keyword::kBit:
      type.name = TypeName::kBit;
      break;
    case Keyword::kTinyblob:
      type.name = TypeName::kTinyBlob;
      length_allowed = false;
      break;
    case Keyword::kBlob:
      type.name = TypeName::kBlob;
      break;
    case Keyword::kMediumblob:
      type.name = TypeName::kMediumBlob;
      length_allowed = false;
      break;
    case Keyword::kLongblob:
      type.name = TypeName::kLongBlob;
      length_allowed = false;
      break;
    case Keyword::kTinytext:
      type.name = TypeName::kTinyText;
      string = true;
      length_allowed = false;
      break;
    case Keyword::kText:
      type.name = TypeName::kText;
      string = true;
      break;
    case Keyword::kMediumtext:
      type.name = TypeName::kMediumText;
      string = true;
      length_allowed = false;
      break;
    case Keyword::kLongtext:
      type.name = TypeName::kLongText;
      string = true;
      length_allowed = false;
      break;
    case Keyword::kJson:
      type.name = TypeName::kJson;
      length_allowed = false;
      break;
    case Keyword::kSet:
    default:
      // ENUM|SET('a', 'b', ...) [CHARACTER SET x] [COLLATE y]; ENUM is no keyword.
      if (t.keyword != Keyword::kSet && !peek_word("ENUM")) fail();
      type.name = t.keyword == Keyword::kSet ? TypeName::kSet : TypeName::kEnum;
      take();
      expect(TokenKind::kLeftParen);
      do {
        type.values.push_back(parse_string());
      } while (accept(TokenKind::kComma));
      expect(TokenKind::kRightParen);
      parse_charset_collate(type);
      return type;
  }
  const Keyword first = take().keyword;
  if (first == Keyword::kDouble) accept(Keyword::kPrecision);
  if ((first == Keyword::kChar || first == Keyword::kCharacter) && accept(Keyword::kVarying)) {
    type.name = TypeName::kVarchar;
  }
  if (length_allowed && accept(TokenKind::kLeftParen)) {
    type.length = parse_unsigned();
    if ((real || decimal) && accept(TokenKind::kComma)) type.scale = parse_unsigned();
    expect(TokenKind::kRightParen);
  } else if (type.name == TypeName::kVarchar || type.name == TypeName::kVarbinary) {
    fail();  // VARCHAR and VARBINARY need a length
  }
  if (integer || real || decimal) {
    for (;;) {
      if (accept(Keyword::kUnsigned)) {
        type.is_unsigned = true;
      } else if (accept(Keyword::kSigned)) {
        type.is_unsigned = false;
      } else if (accept(Keyword::kZerofill)) {
        type.zerofill = true;
        type.is_unsigned = true;  // ZEROFILL implies UNSIGNED in MySQL
      } else {
        break;
      }
    }
  }
  if (string) {
    parse_charset_collate(type);
    // CHAR(10) BINARY means the charset's binary collation.
    if (accept(Keyword::kBinary)) {
      if (!type.collate) type.collate = "binary";
    }
    parse_charset_collate(type);
  }
  return type;
}

std::vector<IndexColumn> Parser::parse_index_columns() {
  expect(TokenKind::kLeftParen);
  std::vector<IndexColumn> columns;
  do {
    IndexColumn c;
    c.name = parse_identifier();
    if (accept(TokenKind::kLeftParen)) {
      c.prefix_length = parse_unsigned();
      expect(TokenKind::kRightParen);
    }
    if (accept(Keyword::kDesc)) {
      c.descending = true;
    } else {
      accept(Keyword::kAsc);
    }
    columns.push_back(std::move(c));
  } while (accept(TokenKind::kComma));
  expect(TokenKind::kRightParen);
  return columns;
}

IndexAlgorithm Parser::parse_index_algorithm() {
  if (accept(Keyword::kHash)) return IndexAlgorithm::kHash;
  expect(Keyword::kBtree);
  return IndexAlgorithm::kBtree;
}

IndexDef Parser::parse_index_def() {
  IndexDef index;
  if (accept(Keyword::kConstraint)) {
    if (peek_identifier()) index.constraint_name = parse_identifier();
    if (!peek().is(Keyword::kPrimary) && !peek().is(Keyword::kUnique)) fail();
  }
  if (accept(Keyword::kPrimary)) {
    expect(Keyword::kKey);
    index.kind = IndexKind::kPrimary;
  } else if (accept(Keyword::kUnique)) {
    if (!accept(Keyword::kKey)) accept(Keyword::kIndex);
    index.kind = IndexKind::kUnique;
    if (peek_identifier() && !peek().is(Keyword::kUsing)) index.name = parse_identifier();
  } else {
    if (!accept(Keyword::kKey)) expect(Keyword::kIndex);
    index.kind = IndexKind::kIndex;
    if (peek_identifier()) index.name = parse_identifier();
  }
  if (accept(Keyword::kUsing)) index.algorithm = parse_index_algorithm();
  index.columns = parse_index_columns();
  for (;;) {
    if (accept(Keyword::kUsing)) {
      index.algorithm = parse_index_algorithm();
    } else if (accept(Keyword::kComment)) {
      index.comment = parse_string();
    } else {
      return index;
    }
  }
}

StatementPtr Parser::parse_create_index(SourcePos pos, bool unique) {
  auto stmt = std::make_unique<CreateIndexStatement>(pos);
  stmt->index.kind = unique ? IndexKind::kUnique : IndexKind::kIndex;
  stmt->index.name = parse_identifier();
  if (accept(Keyword::kUsing)) stmt->index.algorithm = parse_index_algorithm();
  expect(Keyword::kOn);
  stmt->table = parse_object_name();
  stmt->index.columns = parse_index_columns();
  for (;;) {
    if (accept(Keyword::kUsing)) {
      stmt->index.algorithm = parse_index_algorithm();
    } else if (accept(Keyword::kComment)) {
      stmt->index.comment = parse_string();
    } else if (accept(Keyword::kAlgorithm) || accept(Keyword::kLock)) {
      // ALGORITHM=INPLACE / LOCK=NONE: how MySQL executes the change, not what it is.
      accept(TokenKind::kEq);
      parse_name_or_string();
    } else {
      return stmt;
    }
  }
}

StatementPtr Parser::parse_drop() {
  SourcePos pos = here();
  expect(Keyword::kDrop);
  if (peek_word("PREPARE")) return parse_deallocate_prepare();
  if (peek().is(Keyword::kView)) return parse_drop_view(pos);
  if (peek().is(Keyword::kDatabase) || peek().is(Keyword::kSchema)) {
    take();
    auto stmt = std::make_unique<DropDatabaseStatement>(pos);
    if (accept(Keyword::kIf)) {
      expect(Keyword::kExists);
      stmt->if_exists = true;
    }
    stmt->name = parse_identifier();
    return stmt;
  }
  if (peek().is(Keyword::kTemporary) || peek().is(Keyword::kTable)) {
    auto stmt = std::make_unique<DropTableStatement>(pos);
    stmt->temporary = accept(Keyword::kTemporary);
    expect(Keyword::kTable);
    if (accept(Keyword::kIf)) {
      expect(Keyword::kExists);
      stmt->if_exists = true;
    }
    do {
      stmt->tables.push_back(parse_object_name());
    } while (accept(TokenKind::kComma));
    if (!accept(Keyword::kRestrict)) accept(Keyword::kCascade);
    return stmt;
  }
  if (accept(Keyword::kIndex)) {
    auto stmt = std::make_unique<DropIndexStatement>(pos);
    if (peek().is(Keyword::kPrimary)) {
      stmt->name = Identifier{"PRIMARY", false, here()};
      take();
    } else {
      stmt->name = parse_identifier();
    }
    expect(Keyword::kOn);
    stmt->table = parse_object_name();
    return stmt;
  }
  if (accept(Keyword::kUser)) return parse_user_statement(StatementKind::kDropUser, pos);
  if (peek_disk_object()) return parse_disk_object(pos, DiskObjectVerb::kDrop);
  fail();
}

StatementPtr Parser::parse_alter() {
  SourcePos pos = here();
  expect(Keyword::kAlter);
  if (accept(Keyword::kUser)) return parse_user_statement(StatementKind::kAlterUser, pos);
  if (peek_disk_object()) return parse_disk_object(pos, DiskObjectVerb::kAlter);
  if (peek_view_definition()) return parse_view_definition(pos, /*alter=*/true);
  expect(Keyword::kTable);
  auto stmt = std::make_unique<AlterTableStatement>(pos);
  stmt->table = parse_object_name();
  do {
    AlterAction action;
    if (accept(Keyword::kAdd)) {
      const Token& t = peek();
      if (t.is(Keyword::kPrimary) || t.is(Keyword::kUnique) || t.is(Keyword::kKey) ||
          t.is(Keyword::kIndex) || t.is(Keyword::kConstraint)) {
        action.kind = AlterActionKind::kAddIndex;
        action.index = parse_index_def();
      } else {
        accept(Keyword::kColumn);
        if (peek().is(TokenKind::kLeftParen)) {
          // ADD [COLUMN] (c1 def, c2 def): one action per column.
          take();
          do {
            AlterAction add;
            add.kind = AlterActionKind::kAddColumn;
            add.column = parse_column_def();
            stmt->actions.push_back(std::move(add));
          } while (accept(TokenKind::kComma));
          expect(TokenKind::kRightParen);
          continue;
        }
        action.kind = AlterActionKind::kAddColumn;
        action.column = parse_column_def();
        parse_column_position(&action);
      }
    } else if (accept(Keyword::kModify)) {
      accept(Keyword::kColumn);
      action.kind = AlterActionKind::kModifyColumn;
      action.column = parse_column_def();
      parse_column_position(&action);
    } else if (accept(Keyword::kChange)) {
      accept(Keyword::kColumn);
      action.kind = AlterActionKind::kChangeColumn;
      action.name = parse_identifier();
      action.column = parse_column_def();
      parse_column_position(&action);
    } else if (accept(Keyword::kRename)) {
      if (!accept(Keyword::kTo)) accept(Keyword::kAs);
      action.kind = AlterActionKind::kRenameTable;
      action.new_name = parse_object_name();
    } else if (accept(Keyword::kAlter)) {
      accept(Keyword::kColumn);
      action.name = parse_identifier();
      if (accept(Keyword::kSet)) {
        expect(Keyword::kDefault);
        action.kind = AlterActionKind::kSetDefault;
        // A literal, a signed number or (expr), as DEFAULT in a column definition.
        if (peek().is(TokenKind::kLeftParen)) {
          take();
          action.default_value = parse_expr();
          expect(TokenKind::kRightParen);
        } else {
          action.default_value = parse_unary();
        }
      } else {
        expect(Keyword::kDrop);
        expect(Keyword::kDefault);
        action.kind = AlterActionKind::kDropDefault;
      }
    } else if (accept(Keyword::kDrop)) {
      if (peek().is(Keyword::kPrimary)) {
        take();
        expect(Keyword::kKey);
        action.kind = AlterActionKind::kDropPrimaryKey;
      } else if (accept(Keyword::kIndex) || accept(Keyword::kKey)) {
        action.kind = AlterActionKind::kDropIndex;
        action.name = parse_identifier();
      } else {
        accept(Keyword::kColumn);
        action.kind = AlterActionKind::kDropColumn;
        action.name = parse_identifier();
      }
    } else if (accept(Keyword::kAlgorithm) || accept(Keyword::kLock)) {
      accept(TokenKind::kEq);
      stmt->algorithm = to_upper(parse_name_or_string());
      continue;
    } else {
      action.kind = AlterActionKind::kTableOptions;
      if (!parse_table_option(action.options)) fail();
      while (parse_table_option(action.options)) {
      }
    }
    stmt->actions.push_back(std::move(action));
  } while (accept(TokenKind::kComma));
  return stmt;
}

void Parser::parse_column_position(AlterAction* action) {
  if (accept(Keyword::kFirst)) {
    action->position = ColumnPosition::kFirst;
  } else if (accept(Keyword::kAfter)) {
    action->position = ColumnPosition::kAfter;
    action->after = parse_identifier();
  }
}

StatementPtr Parser::parse_rename() {
  auto stmt = std::make_unique<RenameTableStatement>(here());
  expect(Keyword::kRename);
  if (!accept(Keyword::kTable)) expect(Keyword::kTables);
  do {
    ObjectName from = parse_object_name();
    expect(Keyword::kTo);
    stmt->renames.emplace_back(std::move(from), parse_object_name());
  } while (accept(TokenKind::kComma));
  return stmt;
}

StatementPtr Parser::parse_truncate() {
  auto stmt = std::make_unique<TruncateTableStatement>(here());
  expect(Keyword::kTruncate);
  accept(Keyword::kTable);
  stmt->table = parse_object_name();
  return stmt;
}

}  // namespace duo::sql
