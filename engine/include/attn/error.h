// Errors cross the engine's API as values: std::expected<T, Error>. Nothing aborts, nothing throws out.
#pragma once

#include <cstdint>
#include <expected>
#include <string>

namespace attn {

struct Error {
  std::string file;          // the input the error is about ("query", a path, ...); may be empty
  std::int64_t offset = -1;  // byte offset into that input, -1 when not applicable
  std::int64_t line = -1;    // 1-based line, -1 when not applicable
  std::string reason;

  // "file: byte 12: reason" / "file:3: reason" / "reason"
  std::string message() const;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(std::string reason, std::string file = {}, std::int64_t offset = -1,
                                   std::int64_t line = -1) {
  return std::unexpected(Error{std::move(file), offset, line, std::move(reason)});
}

}  // namespace attn
