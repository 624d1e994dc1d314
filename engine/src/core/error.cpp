#include "attn/error.h"

namespace attn {

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
