// Status and Result<T>: the error type of every layer below SQL (storage, kernel, RPC).
//
// No exceptions are thrown below the SQL layer. A function that can fail returns a
// Status (or Result<T>); each ErrorCode maps to the MySQL error number and SQLSTATE the
// SQL front-end will send, so an error raised deep in the storage engine reaches the
// client with the right code without translation tables elsewhere.
//
// Debug builds abort when a failed Status is destroyed without being looked at
// (RocksDB's ASSERT_STATUS_CHECKED idea, limited to errors so that `ok()` paths stay
// cheap). Values are thread-compatible: distinct objects may be used from distinct
// threads; one object needs external synchronisation.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace duo {

// The error classes of DuoDB. Keep in sync with error_info() in status.cc.
enum class ErrorCode : uint16_t {
  kOk = 0,
  kInvalidArgument,    // caller passed something malformed (a bug or bad user input)
  kNotFound,           // row / object does not exist
  kDuplicateKey,       // unique or primary key already present (MySQL 1062)
  kTableFull,          // a memory area is exhausted (MySQL 1114)
  kRowTooBig,          // row exceeds the row-size limit (MySQL 1118)
  kDataTooLong,        // value longer than its column (MySQL 1406)
  kOutOfRange,         // numeric value out of range, e.g. k = k + 1 overflow (MySQL 1690)
  kNotNullViolation,   // NULL into a NOT NULL column (MySQL 1048)
  kLockWaitTimeout,    // lock wait exceeded the deadlock-detection timeout (MySQL 1205)
  kDeadlock,           // deadlock detected (MySQL 1213)
  kTransactionState,   // operation not valid in the transaction's current state
  kConfigError,        // bad configuration (config.ini line, range, unknown parameter)
  kCorruption,         // checksum mismatch or broken invariant in stored data
  kIoError,            // file system / device error
  kTemporary,          // overload or transient condition; the client may retry (MySQL 1297)
  kNotSupported,       // valid request the current build does not support
  kNoSuchTable,        // table (or other schema object) does not exist (MySQL 1146)
  kTableExists,        // table already exists (MySQL 1050)
  kSchemaVersion,      // request names an old version of a table (MySQL 1412, retry)
  kTablespaceFull,     // no free extent in the tablespace (NDB 1601; MySQL 1114)
  kOutOfUndoSpace,     // the logfile group's undo files are full (NDB 1501, temporary; MySQL 1297)
  kInternal,           // bug: should not happen; always the last code
};

// How an ErrorCode is presented by the SQL front-end.
struct ErrorInfo {
  const char* name;      // "DuplicateKey"
  uint16_t mysql_errno;  // 1062
  const char* sqlstate;  // "23000"
};
const ErrorInfo& error_info(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string_view message)
      : state_(code == ErrorCode::kOk ? nullptr : new State{code, std::string(message)}) {}
  Status(const Status& other) : state_(other.state_ ? new State(*other.state_) : nullptr) {
    other.mark_checked();
  }
  Status(Status&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  Status& operator=(const Status& other) {
    if (this != &other) {
      check_before_overwrite();
      delete state_;
      state_ = other.state_ ? new State(*other.state_) : nullptr;
      other.mark_checked();
    }
    return *this;
  }
  Status& operator=(Status&& other) noexcept {
    if (this != &other) {
      check_before_overwrite();
      delete state_;
      state_ = std::exchange(other.state_, nullptr);
    }
    return *this;
  }
  ~Status() {
    check_before_overwrite();
    delete state_;
  }

  static Status OK() { return Status(); }

  bool ok() const {
    mark_checked();
    return state_ == nullptr;
  }
  ErrorCode code() const {
    mark_checked();
    return state_ ? state_->code : ErrorCode::kOk;
  }
  bool is(ErrorCode c) const { return code() == c; }
  const std::string& message() const;
  // "DuplicateKey: Duplicate entry '1' for key 'PRIMARY'".
  std::string to_string() const;
  // Explicitly drop an error the caller has decided not to act on.
  void ignore_error() const { mark_checked(); }

 private:
  struct State {
    ErrorCode code;
    std::string message;
#ifndef NDEBUG
    mutable bool checked = false;
#endif
  };
  void mark_checked() const {
#ifndef NDEBUG
    if (state_) state_->checked = true;
#endif
  }
  void check_before_overwrite() const {
#ifndef NDEBUG
    if (state_ && !state_->checked) {
      std::fprintf(stderr, "unchecked error status destroyed: %s\n", state_->message.c_str());
      std::abort();
    }
#endif
  }

  State* state_ = nullptr;  // null means OK: the success path allocates nothing.
};

// Result<T>: a T or an error Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : has_value_(true) { new (&value_) T(std::move(value)); }  // NOLINT
  Result(Status status) : status_(std::move(status)) {                        // NOLINT
    if (status_.ok()) status_ = Status(ErrorCode::kInternal, "Result built from OK status");
  }
  Result(const Result& o) : status_(o.status_), has_value_(o.has_value_) {
    if (has_value_) new (&value_) T(o.value_);
  }
  Result(Result&& o) noexcept : status_(std::move(o.status_)), has_value_(o.has_value_) {
    if (has_value_) new (&value_) T(std::move(o.value_));
  }
  Result& operator=(Result o) {
    this->~Result();
    new (this) Result(std::move(o));
    return *this;
  }
  ~Result() {
    if (has_value_) value_.~T();
  }

  bool ok() const {
    status_.ignore_error();
    return has_value_;
  }
  const Status& status() const { return status_; }
  Status take_status() { return std::move(status_); }
  T& value() & { return checked_value(); }
  const T& value() const& { return const_cast<Result*>(this)->checked_value(); }
  T&& value() && { return std::move(checked_value()); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }

 private:
  T& checked_value() {
    if (!has_value_) {
      std::fprintf(stderr, "Result::value() on error: %s\n", status_.to_string().c_str());
      std::abort();
    }
    return value_;
  }

  Status status_;
  bool has_value_ = false;
  union {
    T value_;
  };
};

}  // namespace duo

// Propagate an error Status to the caller.
#define DUO_RETURN_IF_ERROR(expr)          \
  do {                                     \
    ::duo::Status duo_status_ = (expr);    \
    if (!duo_status_.ok()) return duo_status_; \
  } while (0)

#define DUO_CONCAT_INNER(a, b) a##b
#define DUO_CONCAT(a, b) DUO_CONCAT_INNER(a, b)
// DUO_ASSIGN_OR_RETURN(auto x, f()): unwrap a Result or return its Status.
#define DUO_ASSIGN_OR_RETURN(lhs, expr) \
  DUO_ASSIGN_OR_RETURN_IMPL(DUO_CONCAT(duo_result_, __LINE__), lhs, expr)
#define DUO_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.take_status();        \
  lhs = std::move(tmp).value()
