#pragma once
// Result<T>: a value or an error message, the library's way of reporting
// failure without exceptions, printing or exiting (STYLE.md "Parsers never
// exit or assert on input"). Kept local to scaling_laws/ until core/base
// offers a shared Status/Expected type; the interface is deliberately tiny so
// the swap is mechanical.

#include <string>
#include <utility>
#include <variant>

namespace orrery::scaling_laws {

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

}  // namespace orrery::scaling_laws
