#include "attn/io/session.h"

#include "../core/atomic_write.h"
#include "../core/file_read.h"
#include "../core/json_config.h"
#include "../core/try.h"
#include "../text/unicode.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <utility>

namespace attn::io {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// ---- where things are in the text ----
// nlohmann keeps no positions; errors should name the byte of the key at fault. The text has parsed before
// this runs, so the scan only has to follow strings and brackets.
struct Positions {
  std::map<std::string, std::int64_t, std::less<>> keys;  // "tabs.lab.request" -> offset of its opening quote
  std::optional<Error> duplicate;
};

// The end of the string whose opening quote is at `open` (the index of its closing quote, or text.size()).
std::size_t string_end(std::string_view text, std::size_t open) {
  std::size_t i = open + 1;
  while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
  return std::min(i, text.size());
}

Positions key_positions(std::string_view text, const std::string& name) {
  struct Frame {
    bool object = false;
    std::string path;
    bool expect_key = false;
    int index = 0;
    std::set<std::string, std::less<>> seen;
  };
  Positions out;
  std::vector<Frame> stack;
  std::string last_key_path;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t close = string_end(text, i);
      if (!stack.empty() && stack.back().object && stack.back().expect_key) {
        Frame& frame = stack.back();
        const std::string_view raw = text.substr(i, close + 1 - i);
        std::string key;
        if (raw.find('\\') == std::string_view::npos) {
          key = std::string(raw.substr(1, raw.size() >= 2 ? raw.size() - 2 : 0));
        } else {
          const json decoded = json::parse(raw, nullptr, false);
          key = decoded.is_string() ? decoded.get<std::string>() : std::string(raw);
        }
        const std::string path = frame.path.empty() ? key : frame.path + "." + key;
        if (!frame.seen.insert(key).second && !out.duplicate) {
          out.duplicate = Error{name, static_cast<std::int64_t>(i), -1, "key " + detail::quote(path) + " appears twice",
                                ErrorKind::Malformed};
        }
        out.keys.emplace(path, static_cast<std::int64_t>(i));
        last_key_path = path;
        frame.expect_key = false;
      }
      i = close;
    } else if (c == '{' || c == '[') {
      std::string path;
      if (!stack.empty()) {
        path = stack.back().object ? last_key_path : stack.back().path + "[" + std::to_string(stack.back().index) + "]";
      }
      stack.push_back({c == '{', std::move(path), c == '{', 0, {}});
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
    } else if (c == ',' && !stack.empty()) {
      if (stack.back().object) {
        stack.back().expect_key = true;
      } else {
        ++stack.back().index;
      }
    }
  }
  return out;
}

std::string join(std::span<const std::string_view> names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

std::string real(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

// ---- SessionReader ----

std::int64_t SessionReader::offset(std::string_view path) const {
  const auto it = keys_.find(path);
  return it == keys_.end() ? -1 : it->second;
}

std::unexpected<Error> SessionReader::error(ErrorKind kind, std::string_view path, std::string reason) const {
  return fail(kind, std::string(path) + ": " + std::move(reason), name_, offset(path));
}

void SessionReader::warn(std::string_view path, std::string reason, std::vector<Error>& warnings) const {
  warnings.push_back(Error{name_, offset(path), -1, std::move(reason), ErrorKind::Malformed});
}

// ---- SessionMembers ----

std::string SessionMembers::path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

const SessionMembers::json* SessionMembers::find(std::string_view key) {
  known_.insert(std::string(key));
  const auto it = object_.find(std::string(key));
  return it == object_.end() ? nullptr : &*it;
}

std::unexpected<Error> SessionMembers::error(ErrorKind kind, std::string_view key, std::string reason) const {
  return reader_.error(kind, path(key), std::move(reason));
}

Result<bool> SessionMembers::whole_value(std::string_view key, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
  const json* v = find(key);
  if (!v) return false;
  if (!v->is_number_integer()) return error(ErrorKind::Malformed, key, "is " + type(*v) + ", not a whole number");
  // Unsigned first: a value above INT64_MAX must not wrap into range.
  const bool above = v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi);
  if (above || v->get<std::int64_t>() < lo || v->get<std::int64_t>() > hi) {
    return error(ErrorKind::OutOfRange, key,
                 v->dump() + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  out = v->get<std::int64_t>();
  return true;
}

Result<bool> SessionMembers::number_value(std::string_view key, double lo, double hi, double& out) {
  const json* v = find(key);
  if (!v) return false;
  if (!v->is_number()) return error(ErrorKind::Malformed, key, "is " + type(*v) + ", not a number");
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) {
    return error(ErrorKind::OutOfRange, key, v->dump() + " is outside " + real(lo) + ".." + real(hi));
  }
  out = d;
  return true;
}

Result<void> SessionMembers::boolean(std::string_view key, bool& out) {
  const json* v = find(key);
  if (!v) return {};
  if (!v->is_boolean()) return error(ErrorKind::Malformed, key, "is " + type(*v) + ", not true or false");
  out = v->get<bool>();
  return {};
}

Result<void> SessionMembers::text(std::string_view key, std::int64_t limit, std::string& out, bool name,
                                  bool nonempty) {
  const json* v = find(key);
  if (!v) return {};
  return string_value(*v, key, limit, out, name, nonempty);
}

Result<void> SessionMembers::string_value(const json& v, std::string_view key, std::int64_t limit, std::string& out,
                                          bool name, bool nonempty) const {
  if (!v.is_string()) return error(ErrorKind::Malformed, key, "is " + type(v) + ", not a string");
  const auto& s = v.get_ref<const std::string&>();
  if (std::ssize(s) > limit) {
    return error(ErrorKind::TooLarge, key,
                 "is " + std::to_string(s.size()) + " bytes long; at most " + std::to_string(limit) + " are read");
  }
  if (name && s.find('\0') != std::string::npos) return error(ErrorKind::Malformed, key, "contains a NUL character");
  if (nonempty && s.empty()) return error(ErrorKind::OutOfRange, key, "is empty");
  out = s;
  return {};
}

Result<bool> SessionMembers::choice_index(std::string_view key, std::span<const std::string_view> names,
                                          std::size_t& out) {
  const json* v = find(key);
  if (!v) return false;
  if (!v->is_string()) return error(ErrorKind::Malformed, key, "is " + type(*v) + ", not a string");
  const auto& s = v->get_ref<const std::string&>();
  const auto it = std::find(names.begin(), names.end(), s);
  if (it == names.end()) {
    return error(ErrorKind::OutOfRange, key, "is " + detail::quote(s.substr(0, 64)) + "; expected " + join(names));
  }
  out = static_cast<std::size_t>(it - names.begin());
  return true;
}

Result<const SessionMembers::json*> SessionMembers::object(std::string_view key) {
  const json* v = find(key);
  if (v && !v->is_object()) return error(ErrorKind::Malformed, key, "is " + type(*v) + ", not an object");
  return v;
}

void SessionMembers::warn_unknown(std::vector<Error>& warnings) const {
  for (const auto& [key, value] : object_.items()) {
    if (!known_.contains(key)) {
      reader_.warn(path(key), detail::quote(path(key)) + " is not a setting this version knows; ignored", warnings);
    }
  }
}

std::string SessionMembers::type(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::binary: return "binary";
    case json::value_t::discarded: return "nothing";
    default: return "a number";
  }
}

std::string SessionMembers::quote(std::string_view s) { return detail::quote(s); }

// ---- SessionDocument ----

Result<const SessionDocument::json*> SessionDocument::section(const SessionSectionName& name,
                                                              std::vector<Error>& warnings) const {
  const json* section = nullptr;
  if (has_tabs_) {
    const json& tabs = root_.at("tabs");
    const auto it = tabs.find(std::string(name.key));
    if (it != tabs.end()) section = &*it;
  }
  if (!section) {
    reader_.warn(has_tabs_ ? "tabs" : "",
                 "no " + detail::quote(name.key) + " section; " + std::string(name.title) + " starts with its defaults",
                 warnings);
    return nullptr;
  }
  if (!section->is_object()) {
    return reader_.error(ErrorKind::Malformed, "tabs." + std::string(name.key),
                         "is " + SessionMembers::type(*section) + ", not an object");
  }
  return section;
}

void SessionDocument::warn_unknown(std::span<const SessionSectionName> known, std::vector<Error>& warnings) const {
  if (has_tabs_) {
    for (const auto& item : root_.at("tabs").items()) {
      // Not a structured binding: clang (16) cannot capture one in a lambda when OpenMP is on (the fuzz build).
      const std::string& key = item.key();
      if (std::none_of(known.begin(), known.end(), [&](const SessionSectionName& n) { return n.key == key; })) {
        reader_.warn("tabs." + key,
                     "unknown section " + detail::quote(key.substr(0, 64)) + " (a newer version's?); ignored",
                     warnings);
      }
    }
  }
  SessionMembers top(reader_, root_, "");
  for (const std::string_view key : {"format", "version", "tab", "tabs"}) top.find(key);
  top.warn_unknown(warnings);
}

Result<SessionDocument> read_session_document(std::string_view bytes, const std::string& name,
                                              std::span<const SessionSectionName> sections) {
  if (std::ssize(bytes) > kMaxSessionBytes) {
    return fail(
        ErrorKind::TooLarge,
        "is " + std::to_string(bytes.size()) + " bytes; a session file has at most " + std::to_string(kMaxSessionBytes),
        name);
  }
  if (auto bad = text::unicode::check_utf8(bytes, name)) {
    bad->kind = ErrorKind::Encoding;
    bad->reason = "not UTF-8: " + bad->reason;
    return std::unexpected(std::move(*bad));
  }
  if (const std::int64_t at = detail::json_too_deep_at(bytes, kMaxSessionDepth); at >= 0) {
    return fail(ErrorKind::TooLarge, "nests deeper than " + std::to_string(kMaxSessionDepth) + " levels", name, at);
  }
  json root;
  try {
    root = json::parse(bytes);
  } catch (const json::parse_error& e) {
    // Encoding for an escape that is no character (a lone surrogate), Malformed otherwise.
    return fail(detail::json_error_kind(e), "not valid JSON: " + detail::json_reason(e), name,
                detail::parse_error_offset(e, bytes));
  } catch (const json::exception& e) {
    return fail(detail::json_error_kind(e), "not valid JSON: " + detail::json_reason(e), name);
  }
  if (!root.is_object()) return fail(ErrorKind::Malformed, "is not a JSON object", name, 0);
  Positions positions = key_positions(bytes, name);
  if (positions.duplicate) return std::unexpected(*positions.duplicate);
  SessionDocument doc(std::move(root), SessionReader(std::move(positions.keys), name));
  try {
    ATTN_TRY(doc.read_frame(sections));
  } catch (const json::exception& e) {
    // Defensive: every access checks its type first.
    return fail(ErrorKind::Malformed, "unexpected JSON: " + detail::json_reason(e), name);
  }
  return doc;
}

Result<void> SessionDocument::read_frame(std::span<const SessionSectionName> sections) {
  const std::string& name = reader_.name();
  SessionMembers top(reader_, root_, "");
  std::string format;
  if (!top.find("format")) return fail(ErrorKind::Malformed, "not an AttnScope session: no \"format\"", name, 0);
  ATTN_TRY(top.text("format", kMaxSessionName, format));
  if (format != kSessionFormat) {
    return top.error(ErrorKind::Unsupported, "format",
                     "is " + detail::quote(format.substr(0, 64)) + ", not \"" + std::string(kSessionFormat) + "\"");
  }
  const json* version = top.find("version");
  if (!version) return fail(ErrorKind::Malformed, "no \"version\"", name, 0);
  if (!version->is_number_integer()) {
    return top.error(ErrorKind::Malformed, "version", "is " + SessionMembers::type(*version) + ", not a whole number");
  }
  if (version->is_number_unsigned() ? version->get<std::uint64_t>() > kSessionVersion
                                    : version->get<std::int64_t>() > kSessionVersion) {
    return top.error(
        ErrorKind::Unsupported, "version",
        "is " + version->dump() + "; this AttnScope reads sessions of version " + std::to_string(kSessionVersion));
  }
  if (version->get<std::int64_t>() < 1) return top.error(ErrorKind::OutOfRange, "version", "is " + version->dump());

  if (const json* tab = top.find("tab")) {
    std::string key;
    ATTN_TRY(top.string_value(*tab, "tab", kMaxSessionName, key, true, false));
    if (std::none_of(sections.begin(), sections.end(), [&](const SessionSectionName& n) { return n.key == key; })) {
      std::vector<std::string_view> keys;
      for (const SessionSectionName& n : sections) keys.push_back(n.key);
      return top.error(ErrorKind::OutOfRange, "tab",
                       "is " + detail::quote(key.substr(0, 64)) + "; expected " + join(keys));
    }
    tab_ = std::move(key);
  }
  const json* tabs = nullptr;
  ATTN_ASSIGN(tabs, top.object("tabs"));
  has_tabs_ = tabs != nullptr;
  return {};
}

std::string session_document_text(std::string_view tab, const ojson& tabs) {
  const ojson j = {{"format", kSessionFormat}, {"version", kSessionVersion}, {"tab", tab}, {"tabs", tabs}};
  return j.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

Result<std::string> read_session_file(const fs::path& path) {
  return detail::read_regular_file(path, kMaxSessionBytes, "a session file");
}

Result<void> write_session_file(const fs::path& path, std::string_view bytes) {
  return detail::write_file_atomically(path, path.string(),
                                       std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

}  // namespace attn::io
