#include "attn/error.h"

namespace attn {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Malformed: return "malformed";
    case ErrorKind::Io: return "io";
    case ErrorKind::Truncated: return "truncated";
    case ErrorKind::Encoding: return "encoding";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::TooLarge: return "too-large";
    case ErrorKind::OutOfRange: return "out-of-range";
    case ErrorKind::Mismatch: return "mismatch";
    case ErrorKind::Cancelled: return "cancelled";
  }
  return "malformed";
}

std::string Error::message() const {
  std::string out;
  if (!file.empty()) out += file;
  if (line >= 0) {
    out += (out.empty() ? "line " : ":") + std::to_string(line);
  }
  if (offset >= 0) {
    if (!out.empty()) out += ": ";
    out += "byte " + std::to_string(offset);
  }
  if (!out.empty()) out += ": ";
  out += reason;
  return out;
}

}  // namespace attn
