// The session file's frame (*.attnscope.json): what the engine guarantees of any session, whatever its tabs.
// Format 1:
//   {"format": "attnscope.session", "version": 1, "tab": "<a section's key>", "tabs": {"<key>": {...}, ...}}
// The engine reads the frame (size, UTF-8, nesting depth, JSON syntax, duplicate keys, format, version, the
// "tab" key) and writes it atomically; it knows no tab. The sections are defined, read and written by their
// owners (ui/session/), with the typed reads below, which refuse a value of the wrong type or out of range
// with the byte of its key and leave a missing value at its default. Reading is strict about what is there and
// lenient about what is not: a missing or unknown section or key is a warning, never an error.
#pragma once

#include "attn/error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::io {

inline constexpr std::string_view kSessionFormat = "attnscope.session";
inline constexpr int kSessionVersion = 1;

// Refused before parsing: larger than any session a window can hold (texts are at most kMaxSessionText).
inline constexpr std::int64_t kMaxSessionBytes = 64ll << 20;
// A text box's content (the lab opens text files up to 16 MiB).
inline constexpr std::int64_t kMaxSessionText = 16ll << 20;
// A path, a model or sample key, a colour map's name.
inline constexpr std::int64_t kMaxSessionName = 4096;
// Nesting deeper than any section needs: refused before parsing, so no parser recursion is ever deep.
inline constexpr int kMaxSessionDepth = 16;
// Ranges shared by the sections' readers and the widgets that show them.
inline constexpr int kMaxSessionBeam = 16;
inline constexpr int kMaxSessionIndex = 1 << 20;  // layers, heads, steps, words, hypotheses
inline constexpr std::uint64_t kMaxSessionSeed = (std::uint64_t{1} << 53) - 1;  // exact in a JSON double

// The file's name and where each key is in its text ("tabs.lab.request" -> the offset of its opening quote):
// nlohmann keeps no positions, and errors name the byte of the key at fault.
class SessionReader {
 public:
  SessionReader(std::map<std::string, std::int64_t, std::less<>> keys, std::string name)
      : keys_(std::move(keys)), name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  std::int64_t offset(std::string_view path) const;
  std::unexpected<Error> error(ErrorKind kind, std::string_view path, std::string reason) const;
  void warn(std::string_view path, std::string reason, std::vector<Error>& warnings) const;

 private:
  std::map<std::string, std::int64_t, std::less<>> keys_;
  std::string name_;
};

// One JSON object of the file: typed reads of its members that leave the target as it is when the member is
// absent (older files, hand-written ones) and refuse a member of the wrong type or out of range.
class SessionMembers {
 public:
  using json = nlohmann::json;
  SessionMembers(const SessionReader& reader, const json& object, std::string path)
      : reader_(reader), object_(object), path_(std::move(path)) {}

  const SessionReader& reader() const { return reader_; }
  std::string path(std::string_view key) const;
  // The member (null when absent); marks the key as known.
  const json* find(std::string_view key);
  std::unexpected<Error> error(ErrorKind kind, std::string_view key, std::string reason) const;

  template <class Int>
  Result<void> whole(std::string_view key, std::int64_t lo, std::int64_t hi, Int& out) {
    std::int64_t v = 0;
    auto got = whole_value(key, lo, hi, v);
    if (!got) return std::unexpected(std::move(got.error()));
    if (*got) out = static_cast<Int>(v);
    return {};
  }
  template <class Real>
  Result<void> number(std::string_view key, double lo, double hi, Real& out) {
    double v = 0;
    auto got = number_value(key, lo, hi, v);
    if (!got) return std::unexpected(std::move(got.error()));
    if (*got) out = static_cast<Real>(v);
    return {};
  }
  Result<void> boolean(std::string_view key, bool& out);
  // A string of at most `limit` bytes; `name`: a path or a key, so no NUL and (when `nonempty`) not empty.
  Result<void> text(std::string_view key, std::int64_t limit, std::string& out, bool name = false,
                    bool nonempty = false);
  Result<void> string_value(const json& v, std::string_view key, std::int64_t limit, std::string& out, bool name,
                            bool nonempty) const;
  // One of `names`; `out` is set to the index.
  template <class Enum>
  Result<void> choice(std::string_view key, std::span<const std::string_view> names, Enum& out) {
    std::size_t index = 0;
    auto got = choice_index(key, names, index);
    if (!got) return std::unexpected(std::move(got.error()));
    if (*got) out = static_cast<Enum>(index);
    return {};
  }
  // The member as an object (null when absent).
  Result<const json*> object(std::string_view key);
  // Warns of the members no read asked for (a newer version's, or a typo's): they are ignored.
  void warn_unknown(std::vector<Error>& warnings) const;

  // "a string", "an object", ...: what a value is, in errors.
  static std::string type(const json& v);
  // `s` in double quotes, as errors name keys and values.
  static std::string quote(std::string_view s);

 private:
  // Whether the member was there.
  Result<bool> whole_value(std::string_view key, std::int64_t lo, std::int64_t hi, std::int64_t& out);
  Result<bool> number_value(std::string_view key, double lo, double hi, double& out);
  Result<bool> choice_index(std::string_view key, std::span<const std::string_view> names, std::size_t& out);

  const SessionReader& reader_;
  const json& object_;
  std::string path_;
  std::set<std::string, std::less<>> known_;
};

// A section of the file as its owner names it: the key under "tabs" and what warnings call it.
struct SessionSectionName {
  std::string_view key;    // "alignment"
  std::string_view title;  // "the Alignment tab"
};

// A session file whose frame has been read and checked; its sections are left to their owners.
class SessionDocument {
 public:
  using json = nlohmann::json;
  SessionDocument(json root, SessionReader reader) : root_(std::move(root)), reader_(std::move(reader)) {}

  const SessionReader& reader() const { return reader_; }
  // The "tab" value, one of the section keys read_session_document was given ("" when absent).
  const std::string& tab() const { return tab_; }
  // The section `name.key`: null when absent (a warning says the tab starts with its defaults), an error when
  // it is not an object.
  Result<const json*> section(const SessionSectionName& name, std::vector<Error>& warnings) const;
  // Warns of the sections not among `known` and of the top-level keys this version does not know.
  void warn_unknown(std::span<const SessionSectionName> known, std::vector<Error>& warnings) const;

 private:
  friend Result<SessionDocument> read_session_document(std::string_view, const std::string&,
                                                       std::span<const SessionSectionName>);
  // The format, the version, "tab" (one of `sections`) and "tabs" (an object when there).
  Result<void> read_frame(std::span<const SessionSectionName> sections);
  json root_;
  SessionReader reader_;
  std::string tab_;
  bool has_tabs_ = false;
};

// The bytes of a session file; `name` stands for it in errors and warnings. A pure function of the bytes.
// Refused (each Error naming `name`, the byte offset of the offending key or byte, and the reason): more than
// kMaxSessionBytes (TooLarge), bytes that are not UTF-8 (Encoding), nesting deeper than kMaxSessionDepth
// (TooLarge), bad JSON or a duplicate key (Malformed), another format (Unsupported when it is a newer
// version), a "tab" that names none of `sections` (OutOfRange), "tabs" not an object (Malformed).
Result<SessionDocument> read_session_document(std::string_view bytes, const std::string& name,
                                              std::span<const SessionSectionName> sections);

// The file's text: the frame around `tabs` (the sections, as their owners wrote them), 2-space indent, keys in
// the order given. A string that is not UTF-8 is repaired rather than thrown on.
std::string session_document_text(std::string_view tab, const nlohmann::ordered_json& tabs);

// The bytes of a session file of at most kMaxSessionBytes (its size checked before reading; a FIFO, a device
// or a folder refused).
Result<std::string> read_session_file(const std::filesystem::path& path);

// Writes `bytes` atomically (a temporary file beside `path`, flushed to disk, renamed over it, the folder
// flushed): a reader, or the next start after a crash, sees the previous file or this one, never a mix.
Result<void> write_session_file(const std::filesystem::path& path, std::string_view bytes);

}  // namespace attn::io
