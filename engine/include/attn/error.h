// Errors cross the engine's API as values: std::expected<T, Error>. Nothing aborts, nothing throws out.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace attn {

// What went wrong, for callers that react differently (and for tests that check the exact failure). Every
// loader of untrusted input (safetensors, configs, tokenizers, dumps, images, sessions) sets it deliberately.
enum class ErrorKind : std::uint8_t {
  Malformed,    // broken syntax or structure: bad JSON, a header that contradicts itself, a duplicate entry
  Io,           // the file cannot be opened, read or written
  Truncated,    // the input ends before what its own header promises
  Encoding,     // text that is not valid UTF-8
  Unsupported,  // well-formed, but a format, dtype or feature AttnScope does not handle (pickle, GIF)
  TooLarge,     // a size over a stated limit, refused before anything is allocated
  OutOfRange,   // a value outside what it may be: a zero or negative dimension, an id past the vocabulary
  Mismatch,     // parts that disagree: a config and its tensors, a dtype and its byte count
  Cancelled,    // the user stopped it
};

// "malformed", "io", "truncated", "encoding", "unsupported", "too-large", "out-of-range", "mismatch",
// "cancelled"
std::string_view to_string(ErrorKind kind);

struct Error {
  std::string file;          // the input the error is about ("query", a path, ...); may be empty
  std::int64_t offset = -1;  // byte offset into that input, -1 when not applicable
  std::int64_t line = -1;    // 1-based line, -1 when not applicable
  std::string reason;
  ErrorKind kind = ErrorKind::Malformed;

  // "file: byte 12: reason" / "file:3: reason" / "reason". A reason longer than kMaxReasonBytes (a tensor name of a
  // megabyte echoed back) is cut there, at a character boundary, with "… (N more bytes)": an error is one line.
  // The longest reason written on purpose, the how-to for a pickled checkpoint, is about 650 bytes.
  std::string message() const;
  static constexpr std::size_t kMaxReasonBytes = 720;
};

template <class T>
using Result = std::expected<T, Error>;

// Every failure says what kind it is: there is no overload without one.
// 1234567 -> "1,234,567": counts in messages.
std::string with_commas(long long n);

inline std::unexpected<Error> fail(ErrorKind kind, std::string reason, std::string file = {}, std::int64_t offset = -1,
                                   std::int64_t line = -1) {
  return std::unexpected(Error{std::move(file), offset, line, std::move(reason), kind});
}

}  // namespace attn
