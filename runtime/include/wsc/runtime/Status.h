// Error values of the runtime API: nothing is thrown across it and nothing aborts.
#ifndef WSC_RUNTIME_STATUS_H
#define WSC_RUNTIME_STATUS_H

#include <optional>
#include <string>
#include <utility>

namespace wsc::runtime {

/// Success, or an error with a human-readable message (without "error: ").
class [[nodiscard]] Status {
public:
  Status() = default;
  static Status success() { return Status(); }
  static Status failure(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string &message() const { return message_; }

private:
  bool failed_ = false;
  std::string message_;
};

/// A value or the error that prevented computing it.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : value_(std::move(value)) {}
  /// `status` must be a failure.
  Expected(Status status) : status_(std::move(status)) {
    if (status_.ok())
      status_ = Status::failure("internal error: Expected built from a success");
  }
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return status_; }
  const std::string &error() const { return status_.message(); }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  T take() { return std::move(*value_); }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace wsc::runtime

#endif
