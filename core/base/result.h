#pragma once
// Result<T>: a value or an error message, the library's way of reporting
// failure without exceptions, printing or exiting (STYLE.md "Parsers never
// exit or assert on input").

#include <string>
#include <utility>
#include <variant>

namespace orrery::base {

// An error carries a human-readable message that names the failing input
// (file, line, column name, value) and the rule it broke.
struct Error {
  std::string message;
};

template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}      // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  // Precondition: ok().
  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  // Precondition: !ok().
  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

}  // namespace orrery::base
