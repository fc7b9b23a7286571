// Errors as values: Status (ok or a message) and Result<T> (a value or a failed Status).
#pragma once
#include <optional>
#include <string>
#include <utility>

namespace pk {

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  static Status ok() { return Status(); }
  static Status error(std::string message) { return Status(std::move(message), true); }

  bool is_ok() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  const std::string& message() const { return message_; }

  // Prefixes the message with context ("while loading kernel k: ..."); ok stays ok.
  Status with_context(const std::string& context) const {
    return failed_ ? Status::error(context + ": " + message_) : *this;
  }

 private:
  Status(std::string m, bool failed) : message_(std::move(m)), failed_(failed) {}
  std::string message_;
  bool failed_ = false;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}                      // NOLINT: implicit by design
  Result(Status status)                                                // NOLINT
      : status_(status.is_ok() ? Status::error("Result constructed from an ok Status")
                               : std::move(status)) {}

  bool is_ok() const { return value_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const { return status_; }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace pk

#define PK_CONCAT_INNER(a, b) a##b
#define PK_CONCAT(a, b) PK_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` failed.
#define PK_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::pk::Status pk_status_ = (expr);             \
    if (!pk_status_.is_ok()) return pk_status_;   \
  } while (0)

// `lhs = value of expr`, or return its Status.
#define PK_ASSIGN_OR_RETURN(lhs, expr)                                       \
  auto PK_CONCAT(pk_result_, __LINE__) = (expr);                             \
  if (!PK_CONCAT(pk_result_, __LINE__).is_ok())                              \
    return PK_CONCAT(pk_result_, __LINE__).status();                         \
  lhs = std::move(PK_CONCAT(pk_result_, __LINE__)).value()
