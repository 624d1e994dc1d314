#include "attn/io/session.h"

#include "../core/atomic_write.h"
#include "../core/file_read.h"
#include "../core/json_config.h"
#include "../core/try.h"
#include "../text/unicode.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <system_error>
#include <utility>

namespace attn::io {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr std::string_view kFormat = "attnscope.session";
constexpr int kVersion = 1;

constexpr std::array kTabKeys = {std::pair{SessionTab::Alignment, std::string_view("alignment")},
                                 std::pair{SessionTab::Caption, std::string_view("caption")},
                                 std::pair{SessionTab::Lab, std::string_view("lab")},
                                 std::pair{SessionTab::Glimpse, std::string_view("glimpse")},
                                 std::pair{SessionTab::Transformer, std::string_view("transformer")}};
constexpr std::array<std::string_view, 6> kColormaps = {"viridis", "magma", "inferno", "plasma", "cividis", "greys"};
constexpr std::array<std::string_view, 6> kViews = {"head", "model", "stats", "overlay", "matrix", "lens"};
constexpr std::array<std::string_view, 3> kMatrixModes = {"head", "layer-mean", "rollout"};
constexpr std::array<std::string_view, 3> kFusions = {"mean", "max", "min"};
constexpr std::array<std::string_view, 2> kOverlaySources = {"rollout", "head"};
constexpr std::array<std::string_view, 2> kStyles = {"colour", "light-mask"};

// What each tab's section is called in warnings.
std::string_view tab_title(SessionTab tab) {
  switch (tab) {
    case SessionTab::Alignment: return "the Alignment tab";
    case SessionTab::Caption: return "the Captioning tab";
    case SessionTab::Lab: return "the Mechanism Lab";
    case SessionTab::Glimpse: return "the Glimpse tab";
    case SessionTab::Transformer: return "the Transformer tab";
  }
  return "the tab";
}

// Strings are written as they are; a string that is not UTF-8 (it cannot come from a text box) is repaired
// rather than thrown on, so saving never fails half-way through building the text.
std::string dump(const ojson& j) { return j.dump(2, ' ', false, ojson::error_handler_t::replace); }

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

// ---- typed reads ----

std::string join(std::span<const std::string_view> names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

class Reader {
 public:
  Reader(const Positions& positions, std::string name) : positions_(positions), name_(std::move(name)) {}

  const std::string& name() const { return name_; }

  std::int64_t offset(std::string_view path) const {
    const auto it = positions_.keys.find(path);
    return it == positions_.keys.end() ? -1 : it->second;
  }
  std::unexpected<Error> error(ErrorKind kind, std::string_view path, std::string reason) const {
    return fail(kind, std::string(path) + ": " + std::move(reason), name_, offset(path));
  }
  void warn(std::string_view path, std::string reason, std::vector<Error>& warnings) const {
    warnings.push_back(Error{name_, offset(path), -1, std::move(reason), ErrorKind::Malformed});
  }

 private:
  const Positions& positions_;
  std::string name_;
};

// One JSON object of the file: typed reads of its members that leave the target as it is when the member
// is absent (older files, hand-written ones) and refuse a member of the wrong type or out of range.
class Members {
 public:
  Members(const Reader& reader, const json& object, std::string path)
      : reader_(reader), object_(object), path_(std::move(path)) {}

  std::string path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  const json* find(std::string_view key) {
    known_.insert(std::string(key));
    const auto it = object_.find(std::string(key));
    return it == object_.end() ? nullptr : &*it;
  }
  std::unexpected<Error> error(ErrorKind kind, std::string_view key, std::string reason) const {
    return reader_.error(kind, path(key), std::move(reason));
  }

  template <class Int>
  Result<void> whole(std::string_view key, std::int64_t lo, std::int64_t hi, Int& out) {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_number_integer()) return error(ErrorKind::Malformed, key, "is " + type(*v) + ", not a whole number");
    // Unsigned first: a value above INT64_MAX must not wrap into range.
    const bool above = v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi);
    if (above || v->get<std::int64_t>() < lo || v->get<std::int64_t>() > hi) {
      return error(ErrorKind::OutOfRange, key,
                   v->dump() + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    out = static_cast<Int>(v->get<std::int64_t>());
    return {};
  }

  template <class Real>
  Result<void> number(std::string_view key, double lo, double hi, Real& out) {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_number()) return error(ErrorKind::Malformed, key, "is " + type(*v) + ", not a number");
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) {
      return error(ErrorKind::OutOfRange, key, v->dump() + " is outside " + real(lo) + ".." + real(hi));
    }
    out = static_cast<Real>(d);
    return {};
  }

  Result<void> boolean(std::string_view key, bool& out) {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_boolean()) return error(ErrorKind::Malformed, key, "is " + type(*v) + ", not true or false");
    out = v->get<bool>();
    return {};
  }

  // A string of at most `limit` bytes; `name`: a path or a key, so no NUL and (when `nonempty`) not empty.
  Result<void> text(std::string_view key, std::int64_t limit, std::string& out, bool name = false,
                    bool nonempty = false) {
    const json* v = find(key);
    if (!v) return {};
    return string_value(*v, key, limit, out, name, nonempty);
  }

  Result<void> string_value(const json& v, std::string_view key, std::int64_t limit, std::string& out, bool name,
                            bool nonempty) const {
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

  // One of `names`; `out` is set to the index.
  template <class Enum>
  Result<void> choice(std::string_view key, std::span<const std::string_view> names, Enum& out) {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_string()) return error(ErrorKind::Malformed, key, "is " + type(*v) + ", not a string");
    const auto& s = v->get_ref<const std::string&>();
    const auto it = std::find(names.begin(), names.end(), s);
    if (it == names.end()) {
      return error(ErrorKind::OutOfRange, key, "is " + detail::quote(s.substr(0, 64)) + "; expected " + join(names));
    }
    out = static_cast<Enum>(it - names.begin());
    return {};
  }

  Result<void> colormap(std::string_view key, std::string& out) {
    const json* v = find(key);
    if (!v) return {};
    std::size_t index = 0;
    ATTN_TRY(choice(key, kColormaps, index));
    out = std::string(kColormaps[index]);
    return {};
  }

  // The member as an object (null when absent).
  Result<const json*> object(std::string_view key) {
    const json* v = find(key);
    if (v && !v->is_object()) return error(ErrorKind::Malformed, key, "is " + type(*v) + ", not an object");
    return v;
  }

  // Warns of the members no read asked for (a newer version's, or a typo's): they are ignored.
  void warn_unknown(std::vector<Error>& warnings) const {
    for (const auto& [key, value] : object_.items()) {
      if (!known_.contains(key)) {
        reader_.warn(path(key), detail::quote(path(key)) + " is not a setting this version knows; ignored", warnings);
      }
    }
  }

  static std::string type(const json& v) {
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

 private:
  static std::string real(double v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

  const Reader& reader_;
  const json& object_;
  std::string path_;
  std::set<std::string, std::less<>> known_;
};

// A bundled sample's key: short, lower case (the UI looks it up and says so when it has no such sample).
bool is_sample_key(std::string_view key) {
  return !key.empty() && key.size() <= 64 && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

Result<void> read_image(Members& parent, std::string_view key, ImageRef& out) {
  const json* v = nullptr;
  ATTN_ASSIGN(v, parent.object(key));
  if (!v) return {};
  const bool sample = v->contains("sample");
  const bool file = v->contains("file");
  if (sample == file || v->size() != 1) {
    return parent.error(ErrorKind::Malformed, key,
                        "must hold one of \"sample\" (a bundled photo) or \"file\" (a path)");
  }
  ImageRef image;
  image.kind = sample ? ImageRef::Kind::Sample : ImageRef::Kind::File;
  const std::string member = std::string(key) + "." + (sample ? "sample" : "file");
  ATTN_TRY(parent.string_value(*v->begin(), member, kMaxSessionName, image.value, true, true));
  if (sample && !is_sample_key(image.value)) {
    return parent.error(ErrorKind::OutOfRange, member, detail::quote(image.value) + " is not a sample's name");
  }
  out = std::move(image);
  return {};
}

Result<AlignmentSection> read_alignment(const Reader& reader, const json& j, std::vector<Error>& warnings) {
  Members m(reader, j, "tabs.alignment");
  AlignmentSection s;
  ATTN_TRY(m.text("model", kMaxSessionName, s.model, true, true));
  ATTN_TRY(m.text("text", kMaxSessionText, s.text));
  ATTN_TRY(m.text("pair", kMaxSessionText, s.pair));
  ATTN_TRY(m.whole("beam", 1, kMaxSessionBeam, s.beam));
  ATTN_TRY(m.whole("hypothesis", 0, kMaxSessionBeam - 1, s.hypothesis));
  ATTN_TRY(m.whole("step", 0, kMaxSessionIndex, s.step));
  ATTN_TRY(m.colormap("colormap", s.colormap));
  ATTN_TRY(m.boolean("readings", s.readings));
  const json* shaping = nullptr;
  ATTN_ASSIGN(shaping, m.object("shaping"));
  if (shaping) {
    Members o(reader, *shaping, "tabs.alignment.shaping");
    ATTN_TRY(o.number("sharpen", 0.01, 100.0, s.shaping.sharpen));
    ATTN_TRY(o.boolean("smooth", s.shaping.smooth));
    ATTN_TRY(o.whole("top_k", 0, kMaxSessionIndex, s.shaping.top_k));
    ATTN_TRY(o.whole("window", 0, kMaxSessionIndex, s.shaping.window));
    o.warn_unknown(warnings);
    if (s.shaping.smooth) s.shaping.sharpen = 1.0f;  // the sigmoid has no beta
  }
  m.warn_unknown(warnings);
  return s;
}

Result<CaptionSection> read_caption(const Reader& reader, const json& j, std::vector<Error>& warnings) {
  Members m(reader, j, "tabs.caption");
  CaptionSection s;
  ATTN_TRY(m.text("model", kMaxSessionName, s.model, true, true));
  const json* input = nullptr;
  ATTN_ASSIGN(input, m.object("input"));
  if (input) {
    Members in(reader, *input, "tabs.caption.input");
    const int given = int(input->contains("scene")) + int(input->contains("sample")) + int(input->contains("file"));
    if (given != 1 || input->size() != 1) {
      return m.error(ErrorKind::Malformed, "input",
                     "must hold one of \"scene\" (a seed), \"sample\" (a bundled photo) or \"file\" (a path)");
    }
    if (input->contains("scene")) {
      s.input = CaptionSection::Input::Scene;
      ATTN_TRY(in.whole("scene", 0, static_cast<std::int64_t>(kMaxSessionSeed), s.seed));
      s.image.clear();
    } else if (input->contains("sample")) {
      s.input = CaptionSection::Input::Sample;
      ATTN_TRY(in.text("sample", kMaxSessionName, s.image, true, true));
      if (!is_sample_key(s.image)) {
        return in.error(ErrorKind::OutOfRange, "sample", detail::quote(s.image) + " is not a sample's name");
      }
    } else {
      s.input = CaptionSection::Input::File;
      ATTN_TRY(in.text("file", kMaxSessionName, s.image, true, true));
    }
  }
  ATTN_TRY(m.whole("beam", 1, kMaxSessionBeam, s.beam));
  ATTN_TRY(m.whole("hypothesis", 0, kMaxSessionBeam - 1, s.hypothesis));
  ATTN_TRY(m.whole("word", 0, kMaxSessionIndex, s.word));
  const json* overlay = nullptr;
  ATTN_ASSIGN(overlay, m.object("overlay"));
  if (overlay) {
    Members o(reader, *overlay, "tabs.caption.overlay");
    ATTN_TRY(o.number("sigma", 0.0, 24.0, s.sigma));
    ATTN_TRY(o.number("opacity", 0.0, 1.0, s.opacity));
    ATTN_TRY(o.colormap("colormap", s.colormap));
    ATTN_TRY(o.number("threshold", 0.0, 0.95, s.threshold));
    ATTN_TRY(o.choice("style", kStyles, s.style));
    o.warn_unknown(warnings);
  }
  ATTN_TRY(m.whole("per_row", 1, 12, s.per_row));
  m.warn_unknown(warnings);
  return s;
}

Result<LabSection> read_lab(const Reader& reader, const json& j, std::vector<Error>& warnings) {
  Members m(reader, j, "tabs.lab");
  LabSection s;
  const json* request = nullptr;
  ATTN_ASSIGN(request, m.object("request"));
  if (request) {
    // Every field typed and in range here, where the error can name its byte; lab_request_from_json then
    // turns the keys into the lab's enums.
    Members r(reader, *request, "tabs.lab.request");
    lab::LabRequest checked = s.request;
    lab::LabParams& p = checked.params;
    ATTN_TRY(r.text("query", kMaxSessionText, checked.query));
    ATTN_TRY(r.text("source", kMaxSessionText, checked.source));
    std::string key;
    ATTN_TRY(r.text("mechanism", kMaxSessionName, key));
    if (r.find("mechanism") && !lab::find_mechanism(key)) {
      return r.error(ErrorKind::OutOfRange, "mechanism", detail::quote(key.substr(0, 64)) + " is not a mechanism");
    }
    key.clear();
    ATTN_TRY(r.text("score", kMaxSessionName, key));
    if (r.find("score") && !lab::find_score(key)) {
      return r.error(ErrorKind::OutOfRange, "score", detail::quote(key.substr(0, 64)) + " is not a score function");
    }
    key.clear();
    ATTN_TRY(r.text("normaliser", kMaxSessionName, key));
    if (r.find("normaliser") && !lab::find_normaliser(key)) {
      return r.error(ErrorKind::OutOfRange, "normaliser", detail::quote(key.substr(0, 64)) + " is not a normaliser");
    }
    key.clear();
    ATTN_TRY(r.text("positions", kMaxSessionName, key));
    if (r.find("positions") && !lab::find_positions(key)) {
      return r.error(ErrorKind::OutOfRange, "positions",
                     detail::quote(key.substr(0, 64)) + " is not a kind of positions");
    }
    // The lab's own widget ranges (lab_workbench.cpp).
    ATTN_TRY(r.number("temperature", 0.01, 100.0, p.temperature));
    ATTN_TRY(r.whole("window", 0, 256, p.window));
    ATTN_TRY(r.number("sigma", -1.0, 256.0, p.sigma));
    ATTN_TRY(r.whole("heads", 1, 16, p.heads));
    for (const lab::CountParam& c : lab::count_params()) ATTN_TRY(r.whole(c.key, c.min, c.max, p.*c.field));
    ATTN_TRY(r.boolean("causal", p.causal));
    ATTN_TRY(r.boolean("shuffle", p.shuffle));
    ATTN_TRY(r.whole("seed", 0, static_cast<std::int64_t>(kMaxSessionSeed), p.seed));
    ATTN_TRY(r.whole("dim", 4, 1024, p.dim));
    r.warn_unknown(warnings);
    auto parsed =
        lab::lab_request_from_json(request->dump(-1, ' ', false, json::error_handler_t::replace), "tabs.lab.request");
    if (!parsed) return m.error(parsed.error().kind, "request", parsed.error().reason);
    s.request = std::move(*parsed);
  }
  ATTN_TRY(m.colormap("colormap", s.colormap));
  ATTN_TRY(m.boolean("unit_range", s.unit_range));
  ATTN_TRY(m.whole("map", 0, kMaxSessionIndex, s.map));
  m.warn_unknown(warnings);
  return s;
}

Result<GlimpseSection> read_glimpse(const Reader& reader, const json& j, std::vector<Error>& warnings) {
  Members m(reader, j, "tabs.glimpse");
  GlimpseSection s;
  ATTN_TRY(read_image(m, "image", s.image));
  ATTN_TRY(m.whole("image_width", 0, kMaxSessionIndex, s.image_width));
  ATTN_TRY(m.whole("image_height", 0, kMaxSessionIndex, s.image_height));
  const json* settings = nullptr;
  ATTN_ASSIGN(settings, m.object("settings"));
  if (settings) {
    auto parsed = glimpse::glimpse_settings_from_json(settings->dump(-1, ' ', false, json::error_handler_t::replace),
                                                      "tabs.glimpse.settings");
    if (!parsed) return m.error(parsed.error().kind, "settings", parsed.error().reason);
    s.settings = *parsed;
  }
  ATTN_TRY(m.boolean("write", s.write_mode));
  ATTN_TRY(m.boolean("forms", s.window_forms));
  ATTN_TRY(m.boolean("edit_stn", s.edit_stn));
  m.warn_unknown(warnings);
  return s;
}

Result<TransformerSection> read_transformer(const Reader& reader, const json& j, std::vector<Error>& warnings) {
  Members m(reader, j, "tabs.transformer");
  TransformerSection s;
  ATTN_TRY(m.text("source", kMaxSessionName, s.source, true));
  ATTN_TRY(m.text("text", kMaxSessionText, s.text));
  ATTN_TRY(m.text("pair", kMaxSessionText, s.pair));
  ATTN_TRY(read_image(m, "image", s.image));
  ATTN_TRY(m.whole("layer", 0, kMaxSessionIndex, s.layer));
  ATTN_TRY(m.whole("head", 0, kMaxSessionIndex, s.head));
  ATTN_TRY(m.choice("view", kViews, s.view));
  ATTN_TRY(m.choice("matrix", kMatrixModes, s.matrix));
  const json* rollout = nullptr;
  ATTN_ASSIGN(rollout, m.object("rollout"));
  if (rollout) {
    Members r(reader, *rollout, "tabs.transformer.rollout");
    ATTN_TRY(r.choice("fusion", kFusions, s.fusion));
    ATTN_TRY(r.number("discard_ratio", 0.0, 0.99, s.discard_ratio));
    ATTN_TRY(r.number("residual", 0.0, 1.0, s.residual));
    r.warn_unknown(warnings);
  }
  const json* overlay = nullptr;
  ATTN_ASSIGN(overlay, m.object("overlay"));
  if (overlay) {
    Members o(reader, *overlay, "tabs.transformer.overlay");
    ATTN_TRY(o.choice("source", kOverlaySources, s.overlay));
    ATTN_TRY(o.number("alpha", 0.0, 1.0, s.overlay_alpha));
    o.warn_unknown(warnings);
  }
  ATTN_TRY(m.number("line_threshold", 0.0, 0.5, s.line_threshold));
  ATTN_TRY(m.colormap("colormap", s.colormap));
  const json* generate = nullptr;
  ATTN_ASSIGN(generate, m.object("generate"));
  if (generate) {
    Members g(reader, *generate, "tabs.transformer.generate");
    ATTN_TRY(g.whole("new_tokens", 1, 4096, s.new_tokens));
    ATTN_TRY(g.number("temperature", 0.0, 5.0, s.temperature));
    ATTN_TRY(g.whole("top_k", 0, 100000, s.top_k));
    ATTN_TRY(g.number("top_p", 0.01, 1.0, s.top_p));
    ATTN_TRY(g.whole("seed", 0, 1'000'000'000, s.seed));
    ATTN_TRY(g.boolean("generated", s.generated));
    ATTN_TRY(g.whole("step", 0, 4095, s.step));
    g.warn_unknown(warnings);
  }
  m.warn_unknown(warnings);
  return s;
}

ojson image_json(const ImageRef& image) {
  return ojson{{image.kind == ImageRef::Kind::Sample ? "sample" : "file", image.value}};
}

ojson nested(const std::string& text) { return ojson::parse(text); }

}  // namespace

std::string_view to_string(SessionTab tab) {
  for (const auto& [t, key] : kTabKeys) {
    if (t == tab) return key;
  }
  return "alignment";
}

std::optional<SessionTab> session_tab_named(std::string_view key) {
  for (const auto& [t, k] : kTabKeys) {
    if (k == key) return t;
  }
  return std::nullopt;
}

bool is_colormap_key(std::string_view key) {
  return std::find(kColormaps.begin(), kColormaps.end(), key) != kColormaps.end();
}

Session default_session() {
  Session s;
  s.alignment.emplace();
  s.caption.emplace();
  s.lab.emplace();
  s.glimpse.emplace();
  s.transformer.emplace();
  return s;
}

std::string to_json(const Session& session) {
  ojson tabs = ojson::object();
  if (const auto& a = session.alignment) {
    tabs["alignment"] = {{"model", a->model},
                         {"text", a->text},
                         {"pair", a->pair},
                         {"beam", a->beam},
                         {"hypothesis", a->hypothesis},
                         {"step", a->step},
                         {"colormap", a->colormap},
                         {"readings", a->readings},
                         {"shaping",
                          {{"sharpen", a->shaping.sharpen},
                           {"smooth", a->shaping.smooth},
                           {"top_k", a->shaping.top_k},
                           {"window", a->shaping.window}}}};
  }
  if (const auto& c = session.caption) {
    ojson input;
    switch (c->input) {
      case CaptionSection::Input::Scene: input = {{"scene", c->seed}}; break;
      case CaptionSection::Input::Sample: input = {{"sample", c->image}}; break;
      case CaptionSection::Input::File: input = {{"file", c->image}}; break;
    }
    tabs["caption"] = {{"model", c->model},
                       {"input", input},
                       {"beam", c->beam},
                       {"hypothesis", c->hypothesis},
                       {"word", c->word},
                       {"overlay",
                        {{"sigma", c->sigma},
                         {"opacity", c->opacity},
                         {"colormap", c->colormap},
                         {"threshold", c->threshold},
                         {"style", kStyles[static_cast<std::size_t>(c->style)]}}},
                       {"per_row", c->per_row}};
  }
  if (const auto& l = session.lab) {
    tabs["lab"] = {{"request", nested(lab::to_json(l->request))},
                   {"colormap", l->colormap},
                   {"unit_range", l->unit_range},
                   {"map", l->map}};
  }
  if (const auto& g = session.glimpse) {
    tabs["glimpse"] = {{"image", image_json(g->image)},
                       {"image_width", g->image_width},
                       {"image_height", g->image_height},
                       {"settings", nested(glimpse::to_json(g->settings, g->image_width, g->image_height))},
                       {"write", g->write_mode},
                       {"forms", g->window_forms},
                       {"edit_stn", g->edit_stn}};
  }
  if (const auto& t = session.transformer) {
    tabs["transformer"] = {
        {"source", t->source},
        {"text", t->text},
        {"pair", t->pair},
        {"image", image_json(t->image)},
        {"layer", t->layer},
        {"head", t->head},
        {"view", kViews[static_cast<std::size_t>(t->view)]},
        {"matrix", kMatrixModes[static_cast<std::size_t>(t->matrix)]},
        {"rollout",
         {{"fusion", kFusions[static_cast<std::size_t>(t->fusion)]},
          {"discard_ratio", t->discard_ratio},
          {"residual", t->residual}}},
        {"overlay", {{"source", kOverlaySources[static_cast<std::size_t>(t->overlay)]}, {"alpha", t->overlay_alpha}}},
        {"line_threshold", t->line_threshold},
        {"colormap", t->colormap},
        {"generate",
         {{"new_tokens", t->new_tokens},
          {"temperature", t->temperature},
          {"top_k", t->top_k},
          {"top_p", t->top_p},
          {"seed", t->seed},
          {"generated", t->generated},
          {"step", t->step}}}};
  }
  const ojson j = {{"format", kFormat}, {"version", kVersion}, {"tab", to_string(session.tab)}, {"tabs", tabs}};
  return dump(j) + "\n";
}

namespace {

// The bytes as a JSON object: within the size, UTF-8, not nested too deep, valid JSON.
Result<json> parse_session_json(std::string_view bytes, const std::string& name) {
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
  return root;
}

// "format" names an AttnScope session and "version" one this reader knows.
Result<void> check_format_version(Members& top, const std::string& name) {
  std::string format;
  if (!top.find("format")) return fail(ErrorKind::Malformed, "not an AttnScope session: no \"format\"", name, 0);
  ATTN_TRY(top.text("format", kMaxSessionName, format));
  if (format != kFormat) {
    return top.error(ErrorKind::Unsupported, "format",
                     "is " + detail::quote(format.substr(0, 64)) + ", not \"" + std::string(kFormat) + "\"");
  }
  const json* version = top.find("version");
  if (!version) return fail(ErrorKind::Malformed, "no \"version\"", name, 0);
  if (!version->is_number_integer()) {
    return top.error(ErrorKind::Malformed, "version", "is " + Members::type(*version) + ", not a whole number");
  }
  if (version->is_number_unsigned() ? version->get<std::uint64_t>() > kVersion
                                    : version->get<std::int64_t>() > kVersion) {
    return top.error(
        ErrorKind::Unsupported, "version",
        "is " + version->dump() + "; this AttnScope reads sessions of version " + std::to_string(kVersion));
  }
  if (version->get<std::int64_t>() < 1) return top.error(ErrorKind::OutOfRange, "version", "is " + version->dump());
  return {};
}

// "tabs": each tab's section (a missing one warned about, an unknown one too).
Result<void> read_tab_sections(const Reader& reader, Members& top, Session& session) {
  const json* tabs = nullptr;
  ATTN_ASSIGN(tabs, top.object("tabs"));
  std::vector<Error>& warnings = session.warnings;
  for (const auto& [tab, key] : kTabKeys) {
    const json* section = nullptr;
    if (tabs) {
      const auto it = tabs->find(std::string(key));
      if (it != tabs->end()) section = &*it;
    }
    const std::string path = "tabs." + std::string(key);
    if (!section) {
      reader.warn(tabs ? "tabs" : "",
                  "no " + detail::quote(key) + " section; " + std::string(tab_title(tab)) + " starts with its defaults",
                  warnings);
      continue;
    }
    if (!section->is_object()) {
      return reader.error(ErrorKind::Malformed, path, "is " + Members::type(*section) + ", not an object");
    }
    switch (tab) {
      case SessionTab::Alignment: ATTN_ASSIGN(session.alignment, read_alignment(reader, *section, warnings)); break;
      case SessionTab::Caption: ATTN_ASSIGN(session.caption, read_caption(reader, *section, warnings)); break;
      case SessionTab::Lab: ATTN_ASSIGN(session.lab, read_lab(reader, *section, warnings)); break;
      case SessionTab::Glimpse: ATTN_ASSIGN(session.glimpse, read_glimpse(reader, *section, warnings)); break;
      case SessionTab::Transformer:
        ATTN_ASSIGN(session.transformer, read_transformer(reader, *section, warnings));
        break;
    }
  }
  if (tabs) {
    for (const auto& [key, value] : tabs->items()) {
      if (!session_tab_named(key)) {
        reader.warn("tabs." + key,
                    "unknown section " + detail::quote(key.substr(0, 64)) + " (a newer version's?); ignored", warnings);
      }
    }
  }
  return {};
}

}  // namespace

Result<Session> read_session(std::string_view bytes, const std::string& name) {
  auto root = parse_session_json(bytes, name);
  if (!root) return std::unexpected(root.error());
  const Positions positions = key_positions(bytes, name);
  if (positions.duplicate) return std::unexpected(*positions.duplicate);
  const Reader reader(positions, name);

  try {
    Session session;
    Members top(reader, *root, "");
    ATTN_TRY(check_format_version(top, name));
    if (const json* tab = top.find("tab")) {
      std::string key;
      ATTN_TRY(top.string_value(*tab, "tab", kMaxSessionName, key, true, false));
      const auto named = session_tab_named(key);
      if (!named) {
        return top.error(
            ErrorKind::OutOfRange, "tab",
            "is " + detail::quote(key.substr(0, 64)) + "; expected alignment, caption, lab, glimpse or transformer");
      }
      session.tab = *named;
    }
    ATTN_TRY(read_tab_sections(reader, top, session));
    top.warn_unknown(session.warnings);
    return session;
  } catch (const json::exception& e) {
    // Defensive: every access above checks its type first.
    return fail(ErrorKind::Malformed, "unexpected JSON: " + detail::json_reason(e), name);
  }
}

Result<Session> load_session(const fs::path& path) {
  auto bytes = detail::read_regular_file(path, kMaxSessionBytes, "a session file");
  if (!bytes) return std::unexpected(std::move(bytes.error()));
  return read_session(*bytes, path.string());
}

Result<void> save_session(const fs::path& path, const Session& session) {
  const std::string name = path.string();
  const std::string bytes = to_json(session);
  // Never write what the next start could not read: the same checks as loading, before the file is touched.
  if (auto back = read_session(bytes, name); !back) {
    return fail(back.error().kind, "not saved: " + back.error().reason, name);
  }
  return detail::write_file_atomically(path, name,
                                       std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

}  // namespace attn::io
