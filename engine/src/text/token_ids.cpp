#include "attn/text/token_ids.h"

#include <charconv>
#include <string>

namespace attn::text {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_separator(char c) { return is_space(c) || c == ','; }

// A token of the list quoted for a message: at most 24 bytes.
std::string quoted(std::string_view token) {
  if (token.size() > 24) return "\"" + std::string(token.substr(0, 24)) + "...\"";
  return "\"" + std::string(token) + "\"";
}

}  // namespace

std::optional<std::string_view> token_ids_text(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && is_space(text[i])) ++i;
  const std::string_view rest = text.substr(i);
  if (rest.size() < 4) return std::nullopt;
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
  if (lower(rest[0]) != 'i' || lower(rest[1]) != 'd' || lower(rest[2]) != 's' || rest[3] != ':') return std::nullopt;
  return rest.substr(4);
}

Result<std::vector<int>> parse_token_ids(std::string_view list, int vocab_size, std::string_view what) {
  std::vector<int> ids;
  std::size_t i = 0;
  bool comma = false;  // a comma since the last id: two in a row leave an id out
  while (i < list.size()) {
    if (is_space(list[i])) {
      ++i;
      continue;
    }
    if (list[i] == ',') {
      if (comma || ids.empty()) {
        return fail(ErrorKind::Malformed,
                    "id " + std::to_string(ids.size()) + ": missing (an empty place between commas)", std::string(what),
                    std::int64_t(i));
      }
      comma = true;
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < list.size() && !is_separator(list[end])) ++end;
    const std::string_view token = list.substr(i, end - i);
    const std::string position = "id " + std::to_string(ids.size()) + " " + quoted(token);
    long long value = 0;
    const char* first = token.data() + (token.front() == '+' ? 1 : 0);
    const auto [stop, ec] = std::from_chars(first, token.data() + token.size(), value);
    if (ec == std::errc::result_out_of_range) {
      return fail(ErrorKind::OutOfRange, position + ": too large for a token id", std::string(what), std::int64_t(i));
    }
    if (ec != std::errc() || stop != token.data() + token.size()) {
      return fail(ErrorKind::Malformed, position + ": not a whole number", std::string(what), std::int64_t(i));
    }
    if (value < 0) {
      return fail(ErrorKind::OutOfRange, position + ": negative (ids count from 0)", std::string(what),
                  std::int64_t(i));
    }
    if (vocab_size > 0 && value >= vocab_size) {
      return fail(ErrorKind::OutOfRange,
                  position + ": outside the vocabulary (0-" + std::to_string(vocab_size - 1) + ")", std::string(what),
                  std::int64_t(i));
    }
    if (value > 0x7fffffff) {
      return fail(ErrorKind::OutOfRange, position + ": too large for a token id", std::string(what), std::int64_t(i));
    }
    ids.push_back(int(value));
    comma = false;
    i = end;
  }
  if (comma) {
    return fail(ErrorKind::Malformed, "id " + std::to_string(ids.size()) + ": missing after the last comma",
                std::string(what), std::int64_t(list.size()));
  }
  if (ids.empty()) {
    return fail(ErrorKind::OutOfRange, "no token ids: give whole numbers, e.g. 5 17 3", std::string(what));
  }
  return ids;
}

}  // namespace attn::text
