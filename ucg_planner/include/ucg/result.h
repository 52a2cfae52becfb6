// SPDX-License-Identifier: BSD-3-Clause
// Result<T>: a value or an error message, for recoverable failures inside
// the planner (bad input, malformed files). No std::expected: clang 14.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ucg {

/// What went wrong, in words a user can act on (names the line, key...).
struct Error {
    std::string message;
};

template <class T> class [[nodiscard]] Result {
  public:
    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T &value() &
    {
        assert(ok());
        return std::get<0>(v_);
    }
    const T &value() const &
    {
        assert(ok());
        return std::get<0>(v_);
    }
    T &&value() &&
    {
        assert(ok());
        return std::get<0>(std::move(v_));
    }
    T &operator*() & { return value(); }
    const T &operator*() const & { return value(); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }

    const Error &error() const
    {
        assert(!ok());
        return std::get<1>(v_);
    }

  private:
    std::variant<T, Error> v_;
};

template <> class [[nodiscard]] Result<void> {
  public:
    Result() = default;
    Result(Error error) : error_(std::move(error)), ok_(false) {}

    bool ok() const { return ok_; }
    explicit operator bool() const { return ok_; }
    const Error &error() const
    {
        assert(!ok_);
        return error_;
    }

  private:
    Error error_;
    bool ok_ = true;
};

/// Shorthand: `return ucg::fail("line 3: expected ...");`
inline Error fail(std::string message)
{
    return Error{std::move(message)};
}

} // namespace ucg
