// The abstract syntax tree the parser produces and the binder/planner consumes.
//
// Nodes are plain owning structs (std::unique_ptr children, std::string names), built
// once per statement and read-only afterwards. Every expression carries the source
// position of its first token so that later stages can point at it; identifiers keep
// their spelling and whether they were quoted; literals keep their original text and
// their kind, because MySQL types a literal by how it was written (1 vs 1.0 vs 1e0).
// Names are not resolved here: `t.c` is a ColumnRef with qualifiers, checked by the
// binder (1054/1146 are its errors, not the parser's).
//
// Expr and Statement are tagged hierarchies: switch on `kind`, then `as<T>()`.
//
// Thread-safety: immutable after parsing; safe to read from several threads.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace duo::sql {

// Where a node starts: byte offset in the whole (multi-statement) text, and line
// within its statement (1-based, as in MySQL's messages).
struct SourcePos {
  uint32_t offset = 0;
  uint32_t line = 1;
};

struct Identifier {
  std::string name;     // decoded: `a``b` -> a`b
  bool quoted = false;  // written with backticks
  SourcePos pos;
};

// [db.]name of a table (or, for SHOW/DESCRIBE, a database-qualified object).
struct ObjectName {
  std::optional<Identifier> db;
  Identifier name;
};

// ---------------------------------------------------------------------------------
// Data types (column definitions and CAST targets)

enum class TypeName : uint8_t {
  kTinyInt,
  kSmallInt,
  kMediumInt,
  kInt,
  kBigInt,
  kFloat,
  kDouble,
  kDecimal,
  kChar,
  kVarchar,
  kBinary,
  kVarbinary,
  kDate,
  kTime,
  kDatetime,
  kTimestamp,
  kYear,
  kBit,
  kTinyBlob,
  kBlob,
  kMediumBlob,
  kLongBlob,
  kTinyText,
  kText,
  kMediumText,
  kLongText,
  kJson,
  kSigned,    // CAST(x AS SIGNED [INTEGER]) only
  kUnsigned,  // CAST(x AS UNSIGNED [INTEGER]) only
  kEnum,      // ENUM('a', 'b', ...): `values`
  kSet,       // SET('a', 'b', ...): `values`
};

struct DataType {
  TypeName name = TypeName::kInt;
  // Display width / length / precision / fractional-second digits, as written:
  // INT(11), VARCHAR(n), DECIMAL(p, s), DATETIME(fsp), FLOAT(m, d).
  std::optional<uint64_t> length;
  std::optional<uint64_t> scale;
  bool is_unsigned = false;
  bool zerofill = false;
  std::optional<std::string> charset;  // CHARACTER SET x / CHARSET x
  std::optional<std::string> collate;  // COLLATE x written as part of the type
  std::vector<std::string> values;     // ENUM's / SET's permitted values, as written
};

// ---------------------------------------------------------------------------------
// Expressions

enum class ExprKind : uint8_t {
  kLiteral,
  kColumn,          // [[db.]table.]column
  kStar,            // * or t.* in a select list
  kPlaceholder,     // ? of a prepared statement
  kUserVariable,    // @name
  kSystemVariable,  // @@[session.|global.]name
  kUnary,
  kBinary,
  kIs,          // x IS [NOT] NULL|TRUE|FALSE|UNKNOWN
  kBetween,     // x [NOT] BETWEEN a AND b
  kInList,      // x [NOT] IN (a, b, ...)
  kInSubquery,  // x [NOT] IN (SELECT ...)
  kExists,      // EXISTS (SELECT ...)
  kSubquery,    // (SELECT ...) as a scalar or row
  kLike,        // x [NOT] LIKE p [ESCAPE e]
  kRegexp,      // x [NOT] REGEXP p
  kFunction,    // name(args), COUNT(*), COUNT(DISTINCT ...)
  kCase,
  kCast,                // CAST(x AS type), CONVERT(x, type), BINARY x
  kConvertUsing,        // CONVERT(x USING charset)
  kInterval,            // INTERVAL x unit (in date arithmetic and DATE_ADD)
  kExtract,             // EXTRACT(unit FROM x)
  kCollate,             // x COLLATE name
  kRow,                 // (a, b, ...)
  kDefault,             // DEFAULT in VALUES / SET
  kInsertValue,         // VALUES(col) in ON DUPLICATE KEY UPDATE
  kAssignUserVariable,  // @name := expr inside an expression (deprecated in MySQL 8.0)
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
struct QueryExpr;
using QueryPtr = std::unique_ptr<QueryExpr>;

struct Expr {
  explicit Expr(ExprKind k, SourcePos p) : kind(k), pos(p) {}
  virtual ~Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;

  template <typename T>
  const T& as() const {
    assert(kind == T::kKind);
    return static_cast<const T&>(*this);
  }
  template <typename T>
  T& as() {
    assert(kind == T::kKind);
    return static_cast<T&>(*this);
  }

  const ExprKind kind;
  SourcePos pos;
};

enum class LiteralKind : uint8_t {
  kNull,
  kTrue,
  kFalse,
  kInteger,  // 42
  kDecimal,  // 4.2
  kFloat,    // 4.2e0
  kString,   // 'x', "x", N'x', _utf8mb4'x'
  kHex,      // X'0A', 0x0A
  kBit,      // B'01', 0b01
};

struct LiteralExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kLiteral;
  explicit LiteralExpr(SourcePos p) : Expr(kKind, p) {}
  LiteralKind literal_kind = LiteralKind::kNull;
  // The literal as written (adjacent strings 'a' 'b' keep all of their text).
  std::string text;
  // Strings: the decoded bytes; hex/bit: the bytes they denote; numbers: the digits
  // (text without a charset introducer); NULL/TRUE/FALSE: empty.
  std::string value;
  // String charset introducer without the underscore (_utf8mb4'x' -> "utf8mb4",
  // N'x' -> "utf8mb3"); also allowed before hex/bit literals (_binary 0x41).
  std::optional<std::string> charset;
};

struct ColumnExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kColumn;
  explicit ColumnExpr(SourcePos p) : Expr(kKind, p) {}
  std::optional<Identifier> db;
  std::optional<Identifier> table;
  Identifier column;
};

struct StarExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kStar;
  explicit StarExpr(SourcePos p) : Expr(kKind, p) {}
  std::optional<Identifier> db;
  std::optional<Identifier> table;  // t.* ; none for a bare *
};

struct PlaceholderExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kPlaceholder;
  explicit PlaceholderExpr(SourcePos p) : Expr(kKind, p) {}
  uint32_t index = 0;  // 0-based, in order of appearance in the statement
};

struct UserVariableExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kUserVariable;
  explicit UserVariableExpr(SourcePos p) : Expr(kKind, p) {}
  std::string name;  // without '@'
};

enum class VariableScope : uint8_t {
  kDefault,  // @@x (session value, or global if the variable is global-only)
  kSession,  // @@session.x, @@local.x, SET SESSION x, SET LOCAL x
  kGlobal,   // @@global.x, SET GLOBAL x
};

struct SystemVariableExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kSystemVariable;
  explicit SystemVariableExpr(SourcePos p) : Expr(kKind, p) {}
  VariableScope scope = VariableScope::kDefault;
  std::string name;  // as written (system variable names are case-insensitive)
};

enum class UnaryOp : uint8_t {
  kNegate,  // -x
  kBitNot,  // ~x
  kNot,     // NOT x and !x (same meaning; ! binds tighter, which the tree records)
};

struct UnaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kUnary;
  explicit UnaryExpr(SourcePos p) : Expr(kKind, p) {}
  UnaryOp op = UnaryOp::kNegate;
  ExprPtr operand;
};

enum class BinaryOp : uint8_t {
  kOr,
  kXor,
  kAnd,
  kEq,
  kNullSafeEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kBitOr,
  kBitAnd,
  kShiftLeft,
  kShiftRight,
  kAdd,
  kSub,
  kMul,
  kDiv,     // /
  kIntDiv,  // DIV
  kMod,     // MOD and %
  kBitXor,
};

struct BinaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kBinary;
  explicit BinaryExpr(SourcePos p) : Expr(kKind, p) {}
  BinaryOp op = BinaryOp::kAdd;
  ExprPtr left;
  ExprPtr right;
};

enum class IsWhat : uint8_t { kNull, kTrue, kFalse, kUnknown };

struct IsExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kIs;
  explicit IsExpr(SourcePos p) : Expr(kKind, p) {}
  ExprPtr operand;
  IsWhat what = IsWhat::kNull;
  bool negated = false;
};

struct BetweenExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kBetween;
  explicit BetweenExpr(SourcePos p) : Expr(kKind, p) {}
  ExprPtr operand;
  ExprPtr low;
  ExprPtr high;
  bool negated = false;
};

struct InListExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kInList;
  explicit InListExpr(SourcePos p) : Expr(kKind, p) {}
  ExprPtr operand;
  std::vector<ExprPtr> list;
  bool negated = false;
};

struct InSubqueryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kInSubquery;
  explicit InSubqueryExpr(SourcePos p) : Expr(kKind, p) {}
  ExprPtr operand;
  QueryPtr query;
  bool negated = false;
};

struct ExistsExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kExists;
  explicit ExistsExpr(SourcePos p) : Expr(kKind, p) {}
  QueryPtr query;
};

struct SubqueryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kSubquery;
  explicit SubqueryExpr(SourcePos p) : Expr(kKind, p) {}
  QueryPtr query;
};

// LIKE and REGEXP share a shape (REGEXP never has an ESCAPE).
struct PatternExpr : Expr {
  explicit PatternExpr(ExprKind k, SourcePos p) : Expr(k, p) {}
  ExprPtr operand;
  ExprPtr pattern;
  ExprPtr escape;  // LIKE ... ESCAPE e; null when absent
  bool negated = false;
};
struct LikeExpr : PatternExpr {
  static constexpr ExprKind kKind = ExprKind::kLike;
  explicit LikeExpr(SourcePos p) : PatternExpr(kKind, p) {}
};
struct RegexpExpr : PatternExpr {
  static constexpr ExprKind kKind = ExprKind::kRegexp;
  explicit RegexpExpr(SourcePos p) : PatternExpr(kKind, p) {}
};

struct FunctionExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kFunction;
  explicit FunctionExpr(SourcePos p) : Expr(kKind, p) {}
  // Upper-cased for built-in spelling independence (count(*) == COUNT(*)); a
  // schema-qualified call keeps `db`.
  std::string name;
  std::optional<Identifier> db;
  std::vector<ExprPtr> args;
  bool star = false;      // COUNT(*)
  bool distinct = false;  // COUNT(DISTINCT a), SUM(DISTINCT a) ...
  // Written without parentheses: CURRENT_TIMESTAMP, CURRENT_USER, LOCALTIME ...
  bool no_parens = false;
};

struct CaseExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kCase;
  explicit CaseExpr(SourcePos p) : Expr(kKind, p) {}
  ExprPtr operand;                                 // CASE x WHEN ...; null for CASE WHEN cond ...
  std::vector<std::pair<ExprPtr, ExprPtr>> whens;  // (WHEN, THEN)
  ExprPtr else_value;                              // null when absent
};

struct CastExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kCast;
  explicit CastExpr(SourcePos p) : Expr(kKind, p) {}
  ExprPtr operand;
  DataType type;
};

struct ConvertUsingExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kConvertUsing;
  explicit ConvertUsingExpr(SourcePos p) : Expr(kKind, p) {}
  ExprPtr operand;
  std::string charset;
};

enum class IntervalUnit : uint8_t {
  kMicrosecond,
  kSecond,
  kMinute,
  kHour,
  kDay,
  kWeek,
  kMonth,
  kQuarter,
  kYear,
  kSecondMicrosecond,
  kMinuteMicrosecond,
  kMinuteSecond,
  kHourMicrosecond,
  kHourSecond,
  kHourMinute,
  kDayMicrosecond,
  kDaySecond,
  kDayMinute,
  kDayHour,
  kYearMonth,
};

struct IntervalExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kInterval;
  explicit IntervalExpr(SourcePos p) : Expr(kKind, p) {}
  ExprPtr value;
  IntervalUnit unit = IntervalUnit::kDay;
};

struct ExtractExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kExtract;
  explicit ExtractExpr(SourcePos p) : Expr(kKind, p) {}
  IntervalUnit unit = IntervalUnit::kDay;
  ExprPtr operand;
};

struct CollateExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kCollate;
  explicit CollateExpr(SourcePos p) : Expr(kKind, p) {}
  ExprPtr operand;
  std::string collation;
};

struct RowExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kRow;
  explicit RowExpr(SourcePos p) : Expr(kKind, p) {}
  std::vector<ExprPtr> items;  // at least two
};

struct DefaultExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kDefault;
  explicit DefaultExpr(SourcePos p) : Expr(kKind, p) {}
};

struct InsertValueExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kInsertValue;
  explicit InsertValueExpr(SourcePos p) : Expr(kKind, p) {}
  std::unique_ptr<ColumnExpr> column;
};

// @name := value as an expression (SELECT @n := @n + 1 FROM t): sets the variable when
// evaluated and gives the value. `value` is a whole expression (MySQL's grammar:
// '@' ident SET_VAR expr), so @a := 1 + 2 assigns 3.
struct AssignUserVariableExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kAssignUserVariable;
  explicit AssignUserVariableExpr(SourcePos p) : Expr(kKind, p) {}
  std::string name;  // without '@'
  ExprPtr value;
};

// ---------------------------------------------------------------------------------
// Queries

struct SelectItem {
  ExprPtr expr;
  std::optional<Identifier> alias;
};

struct OrderItem {
  ExprPtr expr;
  bool descending = false;
};

// LIMIT [offset,] count / LIMIT count OFFSET offset. Integer literals or placeholders.
struct Limit {
  ExprPtr count;
  ExprPtr offset;  // null when absent
};

enum class TableRefKind : uint8_t { kTable, kDerived, kJoin };
enum class JoinKind : uint8_t {
  kInner,  // JOIN, INNER JOIN, CROSS JOIN
  kLeft,
  kRight,
  kStraight,  // STRAIGHT_JOIN
};
enum class IndexHintKind : uint8_t { kUse, kForce, kIgnore };

struct IndexHint {
  IndexHintKind kind = IndexHintKind::kUse;
  std::vector<Identifier> indexes;  // names; PRIMARY is spelled "PRIMARY"
};

struct TableRef;
using TableRefPtr = std::unique_ptr<TableRef>;

struct TableRef {
  TableRefKind kind = TableRefKind::kTable;
  SourcePos pos;
  // kTable
  ObjectName table;
  std::vector<IndexHint> index_hints;
  // kTable and kDerived (required for kDerived)
  std::optional<Identifier> alias;
  // kDerived
  QueryPtr query;
  // kJoin
  JoinKind join = JoinKind::kInner;
  bool natural = false;
  TableRefPtr left;
  TableRefPtr right;
  ExprPtr on;                      // ON condition; null when absent
  std::vector<Identifier> using_;  // USING (a, b)
};

enum class LockMode : uint8_t { kNone, kForUpdate, kShare };

// One SELECT block: SELECT ... FROM ... WHERE ... GROUP BY ... HAVING ... ORDER BY ...
// LIMIT ... [FOR UPDATE | LOCK IN SHARE MODE].
struct SelectBlock {
  SourcePos pos;
  bool distinct = false;
  bool sql_calc_found_rows = false;
  std::vector<SelectItem> items;
  std::vector<TableRefPtr> from;  // comma-separated: an implicit inner join
  ExprPtr where;
  std::vector<ExprPtr> group_by;
  bool with_rollup = false;
  ExprPtr having;
  std::vector<OrderItem> order_by;
  std::optional<Limit> limit;
  LockMode lock = LockMode::kNone;
};

// A query expression: one SELECT block, or a UNION of two query expressions, with
// the ORDER BY / LIMIT that apply to the union as a whole.
struct QueryExpr {
  SourcePos pos;
  std::unique_ptr<SelectBlock> select;  // set for a single block
  // Set for a union: left UNION [ALL] right (left-associative).
  QueryPtr left;
  QueryPtr right;
  bool union_all = false;
  // The whole union's ORDER BY / LIMIT; a parenthesised block that had its own keeps
  // them in its SelectBlock.
  std::vector<OrderItem> order_by;
  std::optional<Limit> limit;
  bool parenthesized = false;  // written as ( ... ), so it printed back that way

  bool is_union() const { return select == nullptr; }
};

// ---------------------------------------------------------------------------------
// Statements

enum class StatementKind : uint8_t {
  kSelect,
  kInsert,
  kUpdate,
  kDelete,
  kCreateDatabase,
  kDropDatabase,
  kUse,
  kCreateTable,
  kDropTable,
  kTruncateTable,
  kRenameTable,
  kAlterTable,
  kCreateIndex,
  kDropIndex,
  kTransaction,
  kSet,
  kShow,
  kDescribe,
  kExplain,
  kKill,
  kCreateUser,
  kDropUser,
  kAlterUser,
  kGrant,  // GRANT and REVOKE
  kFlush,
  kPrepare,            // PREPARE name FROM 'text' | @variable
  kExecute,            // EXECUTE name [USING @a, ...]
  kDeallocatePrepare,  // {DEALLOCATE | DROP} PREPARE name
  kDiskObject,         // CREATE/ALTER/DROP LOGFILE GROUP and TABLESPACE (NDB disk data)
  kLoadData,           // LOAD DATA [LOCAL] INFILE
  kView,               // CREATE [OR REPLACE] / ALTER / DROP VIEW
  kTableMaintenance,   // ANALYZE / OPTIMIZE / CHECK TABLE
};

struct Statement {
  explicit Statement(StatementKind k, SourcePos p) : kind(k), pos(p) {}
  virtual ~Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  template <typename T>
  const T& as() const {
    assert(kind == T::kKind);
    return static_cast<const T&>(*this);
  }
  template <typename T>
  T& as() {
    assert(kind == T::kKind);
    return static_cast<T&>(*this);
  }

  const StatementKind kind;
  SourcePos pos;
  uint32_t placeholder_count = 0;  // number of ? in the statement
  // @x := expr inside expressions (not SET's own @x := v): MySQL 8.0 warns 1287 for each.
  uint32_t user_variable_assignments = 0;
};
using StatementPtr = std::unique_ptr<Statement>;

struct SelectStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kSelect;
  explicit SelectStatement(SourcePos p) : Statement(kKind, p) {}
  QueryPtr query;
  // DO expr [, expr ...]: a SELECT without FROM whose values are computed (for their
  // effects: SLEEP, @x := ..., warnings) and not sent; the client gets an OK.
  bool discard_result = false;
};

struct Assignment {
  std::unique_ptr<ColumnExpr> column;
  ExprPtr value;
};

struct InsertStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kInsert;
  explicit InsertStatement(SourcePos p) : Statement(kKind, p) {}
  bool replace = false;  // REPLACE instead of INSERT
  bool ignore = false;
  ObjectName table;
  std::vector<Identifier> columns;         // (a, b); empty: all columns
  std::vector<std::vector<ExprPtr>> rows;  // VALUES (..), (..)
  std::vector<Assignment> set;             // INSERT ... SET a = 1
  QueryPtr select;                         // INSERT ... SELECT
  std::vector<Assignment> on_duplicate;    // ON DUPLICATE KEY UPDATE
};

struct UpdateStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kUpdate;
  explicit UpdateStatement(SourcePos p) : Statement(kKind, p) {}
  bool ignore = false;
  std::vector<TableRefPtr> tables;  // the single-table form: one table
  std::vector<Assignment> set;
  ExprPtr where;
  std::vector<OrderItem> order_by;
  std::optional<Limit> limit;
  // The multi-table form (several tables or a join): its tables and WHERE as the
  // SELECT block the executor joins (`tables` and `where` are then empty).
  std::unique_ptr<SelectBlock> join;
};

struct DeleteStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kDelete;
  explicit DeleteStatement(SourcePos p) : Statement(kKind, p) {}
  bool ignore = false;
  bool quick = false;
  ObjectName table;
  std::optional<Identifier> alias;
  ExprPtr where;
  std::vector<OrderItem> order_by;
  std::optional<Limit> limit;
  // The multi-table forms `DELETE t1, t2 FROM <join> ...` and `DELETE FROM t1, t2 USING
  // <join> ...`: the tables rows are deleted from (names or aliases of the join's
  // tables) and the join with the WHERE (`table` and `where` are then empty).
  std::vector<ObjectName> targets;
  std::unique_ptr<SelectBlock> join;
};

struct CreateDatabaseStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kCreateDatabase;
  explicit CreateDatabaseStatement(SourcePos p) : Statement(kKind, p) {}
  Identifier name;
  bool if_not_exists = false;
  std::optional<std::string> charset;
  std::optional<std::string> collate;
};

struct DropDatabaseStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kDropDatabase;
  explicit DropDatabaseStatement(SourcePos p) : Statement(kKind, p) {}
  Identifier name;
  bool if_exists = false;
};

struct UseStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kUse;
  explicit UseStatement(SourcePos p) : Statement(kKind, p) {}
  Identifier db;
};

enum class ColumnStorage : uint8_t { kDefault, kDisk, kMemory };
enum class ColumnFormat : uint8_t { kDefault, kFixed, kDynamic };

struct ColumnDef {
  Identifier name;
  DataType type;
  std::optional<bool> nullable;  // NULL -> true, NOT NULL -> false, unset: default
  ExprPtr default_value;         // DEFAULT expr; null when absent
  ExprPtr on_update;             // ON UPDATE CURRENT_TIMESTAMP[(fsp)]
  bool auto_increment = false;
  bool primary_key = false;  // PRIMARY KEY / KEY on the column
  bool unique = false;       // UNIQUE [KEY]
  std::optional<std::string> comment;
  ColumnStorage storage = ColumnStorage::kDefault;
  ColumnFormat format = ColumnFormat::kDefault;
};

enum class IndexKind : uint8_t { kPrimary, kUnique, kIndex };
enum class IndexAlgorithm : uint8_t { kDefault, kHash, kBtree };

struct IndexColumn {
  Identifier name;
  std::optional<uint64_t> prefix_length;  // c(10)
  bool descending = false;
};

struct IndexDef {
  IndexKind kind = IndexKind::kIndex;
  std::optional<Identifier> constraint_name;  // CONSTRAINT c PRIMARY KEY ...
  std::optional<Identifier> name;             // index name (never set for PRIMARY)
  std::vector<IndexColumn> columns;
  IndexAlgorithm algorithm = IndexAlgorithm::kDefault;  // USING HASH|BTREE
  std::optional<std::string> comment;
};

struct TableOptions {
  std::optional<std::string> engine;  // as written: NDB, ndbcluster, InnoDB ...
  std::optional<uint64_t> auto_increment;
  std::optional<std::string> charset;  // [DEFAULT] CHARSET / CHARACTER SET
  std::optional<std::string> collate;  // [DEFAULT] COLLATE
  std::optional<std::string> comment;  // may carry "NDB_TABLE=READ_BACKUP=1"
  std::optional<std::string> row_format;
  std::optional<std::string> tablespace;
  ColumnStorage storage = ColumnStorage::kDefault;  // STORAGE DISK|MEMORY
  bool empty() const {
    return !engine && !auto_increment && !charset && !collate && !comment && !row_format &&
           !tablespace && storage == ColumnStorage::kDefault;
  }
};

struct CreateTableStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kCreateTable;
  explicit CreateTableStatement(SourcePos p) : Statement(kKind, p) {}
  bool if_not_exists = false;
  bool temporary = false;
  ObjectName table;
  std::vector<ColumnDef> columns;
  std::vector<IndexDef> indexes;  // table constraints, in order
  TableOptions options;
  std::optional<ObjectName> like;  // CREATE TABLE t LIKE s (columns empty then)
  // CREATE TABLE t [(defs)] [options] [AS] SELECT ...: the rows to fill it with (columns
  // may be empty: the query's then).
  QueryPtr select;
  // PARTITION BY KEY () [PARTITIONS n]: partitioned by the primary key (as every table
  // is), in n fragments when given (nullopt: the cluster's default count).
  bool partition_by_key = false;
  std::optional<uint64_t> partitions;
};

// NDB's disk-data objects. Sizes are kept as written ("16M", "1048576"): the executor
// checks them with MySQL's errors (1531 / 1532), as MySQL's parser does after lexing.
enum class DiskObjectAction : uint8_t {
  kCreateLogfileGroup,  // CREATE LOGFILE GROUP lg ADD UNDOFILE 'f' ...
  kAddUndofile,         // ALTER LOGFILE GROUP lg ADD UNDOFILE 'f' ...
  kDropLogfileGroup,    // DROP LOGFILE GROUP lg ...
  kCreateTablespace,    // CREATE TABLESPACE ts ADD DATAFILE 'f' USE LOGFILE GROUP lg ...
  kAddDatafile,         // ALTER TABLESPACE ts ADD DATAFILE 'f' ...
  kDropDatafile,        // ALTER TABLESPACE ts DROP DATAFILE 'f' ...
  kDropTablespace,      // DROP TABLESPACE ts ...
};

struct DiskObjectStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kDiskObject;
  explicit DiskObjectStatement(SourcePos p) : Statement(kKind, p) {}
  DiskObjectAction action = DiskObjectAction::kCreateLogfileGroup;
  Identifier name;
  std::string file;                          // ADD/DROP UNDOFILE|DATAFILE 'file'
  std::optional<Identifier> logfile_group;   // USE LOGFILE GROUP lg
  std::optional<std::string> initial_size;
  std::optional<std::string> undo_buffer_size;
  std::optional<std::string> redo_buffer_size;
  std::optional<std::string> extent_size;
  std::optional<std::string> autoextend_size;
  std::optional<std::string> max_size;
  std::optional<std::string> comment;
  std::optional<std::string> engine;  // as written
  bool wait = false;
};

struct DropTableStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kDropTable;
  explicit DropTableStatement(SourcePos p) : Statement(kKind, p) {}
  bool if_exists = false;
  bool temporary = false;
  std::vector<ObjectName> tables;
};

struct TruncateTableStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kTruncateTable;
  explicit TruncateTableStatement(SourcePos p) : Statement(kKind, p) {}
  ObjectName table;
};

struct RenameTableStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kRenameTable;
  explicit RenameTableStatement(SourcePos p) : Statement(kKind, p) {}
  std::vector<std::pair<ObjectName, ObjectName>> renames;  // (from, to)
};

enum class AlterActionKind : uint8_t {
  kAddColumn,
  kDropColumn,
  kAddIndex,
  kDropIndex,
  kDropPrimaryKey,
  kTableOptions,  // ENGINE=..., COMMENT=... inside ALTER TABLE
  kRenameTable,   // RENAME [TO|AS] new_name
  kModifyColumn,  // MODIFY [COLUMN] def [FIRST|AFTER c]
  kChangeColumn,  // CHANGE [COLUMN] old def [FIRST|AFTER c]
  kSetDefault,    // ALTER [COLUMN] c SET DEFAULT v
  kDropDefault,   // ALTER [COLUMN] c DROP DEFAULT
};

enum class ColumnPosition : uint8_t { kDefault, kFirst, kAfter };

struct AlterAction {
  AlterActionKind kind = AlterActionKind::kAddColumn;
  ColumnDef column;  // kAddColumn, kModifyColumn, kChangeColumn (the new definition)
  ColumnPosition position = ColumnPosition::kDefault;
  std::optional<Identifier> after;  // kAdd/Modify/ChangeColumn ... AFTER col
  // kDropColumn, kDropIndex; the column of kChangeColumn (old name), kSet/DropDefault.
  Identifier name;
  IndexDef index;                      // kAddIndex
  TableOptions options;                // kTableOptions
  std::optional<ObjectName> new_name;  // kRenameTable
  ExprPtr default_value;               // kSetDefault
};

struct AlterTableStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kAlterTable;
  explicit AlterTableStatement(SourcePos p) : Statement(kKind, p) {}
  ObjectName table;
  std::vector<AlterAction> actions;
  // ALGORITHM=INPLACE|COPY (NDB online ALTER), LOCK=...: the last one given, upper case.
  std::optional<std::string> algorithm;
};

struct CreateIndexStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kCreateIndex;
  explicit CreateIndexStatement(SourcePos p) : Statement(kKind, p) {}
  ObjectName table;
  IndexDef index;  // kind kUnique or kIndex; name always set
};

struct DropIndexStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kDropIndex;
  explicit DropIndexStatement(SourcePos p) : Statement(kKind, p) {}
  Identifier name;  // PRIMARY for DROP INDEX `PRIMARY`
  ObjectName table;
};

enum class TransactionAction : uint8_t { kBegin, kCommit, kRollback };
enum class AccessMode : uint8_t { kDefault, kReadOnly, kReadWrite };

struct TransactionStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kTransaction;
  explicit TransactionStatement(SourcePos p) : Statement(kKind, p) {}
  TransactionAction action = TransactionAction::kBegin;
  // START TRANSACTION options (BEGIN has none).
  bool start_transaction = false;  // written START TRANSACTION rather than BEGIN
  AccessMode access = AccessMode::kDefault;
  bool consistent_snapshot = false;
  bool work = false;  // COMMIT WORK / ROLLBACK WORK / BEGIN WORK
};

enum class SetKind : uint8_t {
  kSystemVariable,  // SET [GLOBAL|SESSION] x = v, SET @@x = v
  kUserVariable,    // SET @x = v / @x := v
  kNames,           // SET NAMES charset [COLLATE c] / SET NAMES DEFAULT
  kCharacterSet,    // SET CHARACTER SET charset / CHARSET x
  kPassword,        // SET PASSWORD [FOR user] = 'pw'
  kTransaction,     // SET [GLOBAL|SESSION] TRANSACTION ISOLATION LEVEL ... / READ ONLY
};

enum class IsolationLevel : uint8_t {
  kUnset,
  kReadUncommitted,
  kReadCommitted,
  kRepeatableRead,
  kSerializable,
};

struct UserName {
  std::string user;
  std::string host = "%";  // 'u' alone means 'u'@'%'
  bool host_given = false;
  bool current_user = false;  // CURRENT_USER [()]
};

struct SetItem {
  SetKind kind = SetKind::kSystemVariable;
  VariableScope scope = VariableScope::kDefault;
  std::string name;  // variable name; charset for NAMES / CHARACTER SET ("" = DEFAULT)
  ExprPtr value;     // a bare word (ON, OFF, utf8mb4) is a ColumnExpr: binder reads it
  std::optional<std::string> collate;  // SET NAMES x COLLATE y
  std::optional<UserName> user;        // SET PASSWORD FOR user
  std::string password;                // SET PASSWORD = 'pw'
  IsolationLevel isolation = IsolationLevel::kUnset;
  AccessMode access = AccessMode::kDefault;
};

struct SetStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kSet;
  explicit SetStatement(SourcePos p) : Statement(kKind, p) {}
  std::vector<SetItem> items;
};

// CREATE [OR REPLACE] [ALGORITHM = {UNDEFINED|MERGE|TEMPTABLE}] [DEFINER = user]
// [SQL SECURITY {DEFINER|INVOKER}] VIEW v [(cols)] AS query [WITH [CASCADED|LOCAL] CHECK
// OPTION], ALTER VIEW (the same without OR REPLACE), DROP VIEW [IF EXISTS] v [, v ...].
enum class ViewAction : uint8_t { kCreate, kAlter, kDrop };

struct ViewStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kView;
  explicit ViewStatement(SourcePos p) : Statement(kKind, p) {}
  ViewAction action = ViewAction::kCreate;
  bool or_replace = false;
  bool if_exists = false;                 // DROP VIEW IF EXISTS
  std::vector<ObjectName> names;          // one for CREATE/ALTER
  std::string algorithm;                  // "UNDEFINED" (default), "MERGE", "TEMPTABLE"
  std::optional<UserName> definer;        // DEFINER = user, as written
  std::string security;                   // "DEFINER" (default) or "INVOKER"
  std::vector<Identifier> columns;        // (cols), empty when not given
  QueryPtr query;
  // The query's text: [query_begin, query_end) in the statement's source.
  size_t query_begin = 0;
  size_t query_end = 0;
  std::string check_option;  // "" (none), "CASCADED" (WITH CHECK OPTION's default), "LOCAL"
};

// ANALYZE [NO_WRITE_TO_BINLOG | LOCAL] TABLE t [, ...], OPTIMIZE [...] TABLE t [, ...],
// CHECK TABLE t [, ...] [FOR UPGRADE | QUICK | FAST | MEDIUM | EXTENDED | CHANGED].
enum class TableMaintenance : uint8_t { kAnalyze, kOptimize, kCheck };

struct TableMaintenanceStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kTableMaintenance;
  explicit TableMaintenanceStatement(SourcePos p) : Statement(kKind, p) {}
  TableMaintenance operation = TableMaintenance::kAnalyze;
  std::vector<ObjectName> tables;
};

enum class ShowKind : uint8_t {
  kDatabases,
  kTables,
  kColumns,
  kIndex,
  kCreateTable,
  kCreateDatabase,
  kVariables,
  kStatus,
  kWarnings,
  kErrors,
  kEngines,
  kProcesslist,
  kCollation,
  kCharset,
  kGrants,
  kTableStatus,
  kEngineStatus,  // SHOW ENGINE name STATUS
  kCreateView,    // SHOW CREATE VIEW v
};

struct ShowStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kShow;
  explicit ShowStatement(SourcePos p) : Statement(kKind, p) {}
  ShowKind what = ShowKind::kDatabases;
  bool full = false;
  VariableScope scope = VariableScope::kDefault;  // VARIABLES / STATUS
  std::optional<ObjectName> table;                // COLUMNS/INDEX/CREATE TABLE
  std::optional<Identifier> db;                   // FROM db / IN db; CREATE DATABASE name
  bool if_not_exists = false;                     // SHOW CREATE DATABASE IF NOT EXISTS
  std::optional<std::string> like;                // LIKE 'pattern'
  ExprPtr where;                                  // WHERE expr
  std::optional<Limit> limit;                     // SHOW WARNINGS LIMIT ...
  std::optional<UserName> user;                   // SHOW GRANTS FOR user
  std::string engine;                             // SHOW ENGINE name STATUS, as written
};

struct DescribeStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kDescribe;
  explicit DescribeStatement(SourcePos p) : Statement(kKind, p) {}
  ObjectName table;
  std::optional<Identifier> column;  // DESCRIBE t col
};

struct ExplainStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kExplain;
  explicit ExplainStatement(SourcePos p) : Statement(kKind, p) {}
  StatementPtr statement;             // SELECT / INSERT / REPLACE / UPDATE / DELETE
  std::optional<std::string> format;  // EXPLAIN FORMAT=TREE ...
  bool analyze = false;               // EXPLAIN ANALYZE: run it, with real counts and times
};

struct KillStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kKill;
  explicit KillStatement(SourcePos p) : Statement(kKind, p) {}
  bool query_only = false;  // KILL QUERY n (else the connection)
  ExprPtr id;
};

// SQL-level prepared statements: named per connection (case-insensitive), executed
// with user variables as the `?` values.
struct PrepareStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kPrepare;
  explicit PrepareStatement(SourcePos p) : Statement(kKind, p) {}
  Identifier name;
  std::optional<std::string> text;           // FROM 'text'
  std::optional<std::string> from_variable;  // FROM @variable (without '@')
};

struct ExecuteStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kExecute;
  explicit ExecuteStatement(SourcePos p) : Statement(kKind, p) {}
  Identifier name;
  std::vector<std::string> using_variables;  // without '@'
};

struct DeallocatePrepareStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kDeallocatePrepare;
  explicit DeallocatePrepareStatement(SourcePos p) : Statement(kKind, p) {}
  Identifier name;
};

struct UserSpec {
  UserName user;
  std::optional<std::string> plugin;    // IDENTIFIED WITH plugin
  std::optional<std::string> password;  // BY 'pw'
};

// CREATE USER, ALTER USER and DROP USER share this node (by kind).
struct UserStatement : Statement {
  explicit UserStatement(StatementKind k, SourcePos p) : Statement(k, p) {}
  bool if_exists = false;      // DROP USER / ALTER USER IF EXISTS
  bool if_not_exists = false;  // CREATE USER IF NOT EXISTS
  std::vector<UserSpec> users;
};
struct CreateUserStatement : UserStatement {
  static constexpr StatementKind kKind = StatementKind::kCreateUser;
  explicit CreateUserStatement(SourcePos p) : UserStatement(kKind, p) {}
};
struct DropUserStatement : UserStatement {
  static constexpr StatementKind kKind = StatementKind::kDropUser;
  explicit DropUserStatement(SourcePos p) : UserStatement(kKind, p) {}
};
struct AlterUserStatement : UserStatement {
  static constexpr StatementKind kKind = StatementKind::kAlterUser;
  explicit AlterUserStatement(SourcePos p) : UserStatement(kKind, p) {}
};

struct Privilege {
  std::string name;  // upper case, words joined by one space: "ALL", "CREATE USER"
  std::vector<Identifier> columns;
};

struct GrantStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kGrant;
  explicit GrantStatement(SourcePos p) : Statement(kKind, p) {}
  bool revoke = false;
  std::vector<Privilege> privileges;
  std::string db = "*";     // ON db.table; "*" for all
  std::string table = "*";  // "*" for all; ON t alone means the current db (db empty)
  std::vector<UserName> users;
  bool with_grant_option = false;
};

// LOAD DATA [LOW_PRIORITY | CONCURRENT] [LOCAL] INFILE 'file' [REPLACE | IGNORE] INTO
// TABLE t [CHARACTER SET cs] [{FIELDS | COLUMNS} [TERMINATED BY 's'] [[OPTIONALLY]
// ENCLOSED BY 'c'] [ESCAPED BY 'c']] [LINES [STARTING BY 's'] [TERMINATED BY 's']]
// [IGNORE n {LINES | ROWS}] [(col_or_@var, ...)] [SET col = expr, ...].
struct LoadDataStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kLoadData;
  explicit LoadDataStatement(SourcePos p) : Statement(kKind, p) {}
  bool local = false;
  std::string file;
  bool replace = false;
  bool ignore = false;
  ObjectName table;
  std::optional<std::string> charset;
  std::string fields_terminated = "\t";
  std::string fields_enclosed;  // empty or one byte
  bool optionally_enclosed = false;
  std::string fields_escaped = "\\";  // empty or one byte
  std::string lines_starting;
  std::string lines_terminated = "\n";
  uint64_t ignore_lines = 0;
  // The targets of the fields, in order: a column name, or "@name" for a user variable.
  std::vector<std::string> targets;
  std::vector<Assignment> set;
};

struct FlushStatement : Statement {
  static constexpr StatementKind kKind = StatementKind::kFlush;
  explicit FlushStatement(SourcePos p) : Statement(kKind, p) {}
  bool local = false;                // FLUSH LOCAL / NO_WRITE_TO_BINLOG
  std::vector<std::string> options;  // PRIVILEGES, TABLES, STATUS, LOGS (upper case)
};

}  // namespace duo::sql
