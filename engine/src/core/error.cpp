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
  if (reason.size() <= kMaxReasonBytes) {
    out += reason;
  } else {
    // Cut at a character boundary (never inside a UTF-8 sequence), and say how much is left out.
    std::size_t cut = kMaxReasonBytes;
    while (cut > 0 && (static_cast<unsigned char>(reason[cut]) & 0xC0) == 0x80) --cut;
    out.append(reason, 0, cut);
    out += "\u2026 (" + std::to_string(reason.size() - cut) + " more bytes)";
  }
  return out;
}

std::string with_commas(long long n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace attn
