#include "attn/glimpse/settings.h"

#include "../core/json_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <numbers>
#include <optional>
#include <vector>

namespace attn::glimpse {

int StnSettings::output_width() const { return std::clamp(out_w, 1, kMaxStnSide); }

int StnSettings::output_height() const { return std::clamp(out_h, 1, kMaxStnSide); }

Theta StnSettings::theta(int width, int height) const {
  switch (family) {
    case Family::Affine: return affine;
    case Family::NoShear: return theta_of(no_shear);
    case Family::Similarity: return theta_of(similarity, width, height);
    case Family::TranslationScale: return theta_of(translation_scale);
  }
  return kIdentityTheta;
}

namespace {

// ---------------------------------------------------------------------------------------------------------
// key=value,... with byte offsets

struct Item {
  std::string_view key;
  std::string_view value;
  std::int64_t key_at = 0;
  std::int64_t value_at = 0;
};

bool is_space(char c) { return c == ' ' || c == '\t'; }

// Trims spaces and tabs off [begin, end) of `text`, moving `begin` past the leading ones.
std::string_view trimmed(std::string_view text, std::size_t& begin, std::size_t end) {
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

Result<std::vector<Item>> split_spec(std::string_view spec, const std::string& what) {
  std::vector<Item> items;
  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t end = spec.find(',', start);
    if (end == std::string_view::npos) end = spec.size();
    std::size_t item_at = start;
    const std::string_view item = trimmed(spec, item_at, end);
    if (!item.empty()) {  // empty items (a trailing comma, ",,") are skipped
      const std::size_t eq = spec.find('=', item_at);
      if (eq == std::string_view::npos || eq >= end) {
        return fail(ErrorKind::Malformed, "expected key=value, got " + in_quotes(item), what,
                    static_cast<std::int64_t>(item_at));
      }
      std::size_t key_at = item_at;
      const std::string_view key = trimmed(spec, key_at, eq);
      if (key.empty()) {
        return fail(ErrorKind::Malformed, "a value has no key before '='", what, static_cast<std::int64_t>(item_at));
      }
      std::size_t value_at = eq + 1;
      const std::string_view value = trimmed(spec, value_at, end);
      if (value.empty()) {
        return fail(ErrorKind::Malformed, in_quotes(key) + " has no value", what, static_cast<std::int64_t>(eq + 1));
      }
      for (const Item& seen : items) {
        if (seen.key == key) {
          return fail(ErrorKind::Malformed, in_quotes(key) + " is given twice", what,
                      static_cast<std::int64_t>(key_at));
        }
      }
      items.push_back({key, value, static_cast<std::int64_t>(key_at), static_cast<std::int64_t>(value_at)});
    }
    start = end + 1;
  }
  return items;
}

std::optional<double> to_number(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

Result<double> number(const Item& item, const std::string& what) {
  if (const auto v = to_number(item.value)) return *v;
  return fail(ErrorKind::Malformed, in_quotes(item.key) + " needs a number, got " + in_quotes(item.value), what,
              item.value_at);
}

Result<int> whole(const Item& item, int lo, int hi, const std::string& what) {
  const auto v = to_number(item.value);
  if (!v || *v != std::floor(*v) || *v < lo || *v > hi) {
    return fail(ErrorKind::OutOfRange,
                in_quotes(item.key) + " needs a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                    ", got " + in_quotes(item.value),
                what, item.value_at);
  }
  return static_cast<int>(*v);
}

// A value set by one key, remembered so that a second key setting the same thing is refused.
template <class T>
struct Slot {
  std::optional<T> value;
  const Item* by = nullptr;
};

template <class T>
std::optional<Error> set(Slot<T>& slot, T value, const Item& item, std::string_view what_it_is,
                         const std::string& what) {
  if (slot.by) {
    return Error{what, item.key_at, -1,
                 in_quotes(item.key) + " and " + in_quotes(slot.by->key) + " both set " + std::string(what_it_is),
                 ErrorKind::Malformed};
  }
  slot.value = value;
  slot.by = &item;
  return std::nullopt;
}

struct AxisSlots {
  Slot<double> first;  // u, ux / uy, or (as a centre) cx / cy
  Slot<double> centre;
  Slot<double> stride;
  Slot<double> sigma;
  Slot<int> n;
};

constexpr std::string_view kGaussianKeys =
    "u, ux, uy, cx, cy, d, dx, dy, s, sx, sy, N, Nx, Ny, gamma; or gx~, gy~, logsigma2, logdelta~, loggamma";
constexpr std::array<std::string_view, 5> kPaperKeys{"gx~", "gy~", "logsigma2", "logdelta~", "loggamma"};

// A key of the pixel parameterisation: one letter for both axes, or with x / y for one.
struct PixelKey {
  std::string_view key;
  Slot<double> AxisSlots::*slot;
  std::string_view quantity;
  bool both, only_x;
};
constexpr std::array<PixelKey, 11> kPixelKeys{{
    {"u", &AxisSlots::first, "the first centre", true, false},
    {"ux", &AxisSlots::first, "the first centre", false, true},
    {"uy", &AxisSlots::first, "the first centre", false, false},
    {"cx", &AxisSlots::centre, "the window centre", false, true},
    {"cy", &AxisSlots::centre, "the window centre", false, false},
    {"d", &AxisSlots::stride, "the stride", true, false},
    {"dx", &AxisSlots::stride, "the stride", false, true},
    {"dy", &AxisSlots::stride, "the stride", false, false},
    {"s", &AxisSlots::sigma, "sigma", true, false},
    {"sx", &AxisSlots::sigma, "sigma", false, true},
    {"sy", &AxisSlots::sigma, "sigma", false, false},
}};

// What a --gaussian spec set, key by key: the pixel parameterisation's slots per axis (and gamma), or the
// paper's five numbers; the filter counts go with either.
struct GaussianKeys {
  AxisSlots x, y;
  Slot<double> gamma;
  std::array<std::optional<double>, 5> paper;
  const Item* first_pixel = nullptr;  // the first key of each parameterisation, to name in a mix-up
  const Item* first_paper = nullptr;
};

// N, Nx or Ny: the number of filters along both axes or one.
Result<void> read_filter_count(const Item& item, GaussianKeys& keys, const std::string& what) {
  const auto n = whole(item, 1, kMaxFilters, what);
  if (!n) return std::unexpected(n.error());
  std::optional<Error> e;
  if (item.key != "Ny" && !e) e = set(keys.x.n, *n, item, "the number of filters along x", what);
  if (item.key != "Nx" && !e) e = set(keys.y.n, *n, item, "the number of filters along y", what);
  if (e) return std::unexpected(*e);
  return {};
}

// One of the paper's five keys (index into kPaperKeys).
Result<void> read_paper_key(const Item& item, std::size_t index, GaussianKeys& keys, const std::string& what) {
  if (keys.first_pixel) {
    return fail(ErrorKind::Mismatch,
                in_quotes(item.key) + " belongs to the paper's parameterisation and cannot be mixed with the pixel " +
                    "one's " + in_quotes(keys.first_pixel->key),
                what, item.key_at);
  }
  if (!keys.first_paper) keys.first_paper = &item;
  const auto v = number(item, what);
  if (!v) return std::unexpected(v.error());
  keys.paper[index] = *v;
  return {};
}

// A key of the pixel parameterisation (or gamma), set on the axes it names.
Result<void> read_pixel_key(const Item& item, GaussianKeys& keys, const std::string& what) {
  const std::string_view k = item.key;
  const auto target = std::find_if(kPixelKeys.begin(), kPixelKeys.end(), [&](const PixelKey& t) { return t.key == k; });
  if (target == kPixelKeys.end() && k != "gamma") {
    return fail(ErrorKind::Malformed,
                "unknown key " + in_quotes(k) + " (Gaussian keys: " + std::string(kGaussianKeys) + ")", what,
                item.key_at);
  }
  if (keys.first_paper) {
    return fail(ErrorKind::Mismatch,
                in_quotes(k) + " belongs to the pixel parameterisation and cannot be mixed with the paper's " +
                    in_quotes(keys.first_paper->key),
                what, item.key_at);
  }
  if (!keys.first_pixel) keys.first_pixel = &item;
  const auto v = number(item, what);
  if (!v) return std::unexpected(v.error());
  if (k == "gamma") {
    keys.gamma.value = *v;
    return {};
  }
  for (AxisSlots* axis : {&keys.x, &keys.y}) {
    const bool is_x = axis == &keys.x;
    if (!target->both && target->only_x != is_x) continue;
    const std::string quantity = std::string(target->quantity) + " along " + (is_x ? "x" : "y");
    // A first centre and a window centre are two ways to place the same axis.
    const bool position = target->slot == &AxisSlots::first || target->slot == &AxisSlots::centre;
    Slot<double>& other = target->slot == &AxisSlots::first ? axis->centre : axis->first;
    if (position && other.by) {
      return fail(
          ErrorKind::Mismatch,
          in_quotes(k) + " and " + in_quotes(other.by->key) + " both place the window along " + (is_x ? "x" : "y"),
          what, item.key_at);
    }
    if (auto e = set(axis->*(target->slot), *v, item, quantity, what)) return std::unexpected(*e);
  }
  return {};
}

// The glimpse of the paper's parameterisation: all five keys, converted by from_draw.
Result<GaussianGlimpse> from_paper_keys(const GaussianKeys& keys, int width, int height, const GaussianGlimpse& base,
                                        const std::string& what) {
  for (std::size_t i = 0; i < kPaperKeys.size(); ++i) {
    if (!keys.paper[i]) {
      return fail(ErrorKind::Malformed,
                  "the paper's parameterisation needs all five of gx~, gy~, logsigma2, logdelta~, loggamma; " +
                      in_quotes(kPaperKeys[i]) + " is missing",
                  what, keys.first_paper->key_at);
    }
  }
  DrawParams p;
  p.gx_tilde = *keys.paper[0];
  p.gy_tilde = *keys.paper[1];
  p.log_sigma2 = *keys.paper[2];
  p.log_delta_tilde = *keys.paper[3];
  p.log_gamma = *keys.paper[4];
  p.nx = keys.x.n.value.value_or(base.x.n);
  p.ny = keys.y.n.value.value_or(base.y.n);
  return from_draw(p, width, height);
}

// The base glimpse with the pixel keys given applied.
GaussianGlimpse from_pixel_keys(const GaussianKeys& keys, const GaussianGlimpse& base) {
  GaussianGlimpse g = base;
  for (auto [axis, from] : {std::pair{&keys.x, &g.x}, std::pair{&keys.y, &g.y}}) {
    // With no position given the window keeps its centre, so "N=20" or "d=3" grows it in place.
    const double centre = from->centre();
    from->n = axis->n.value.value_or(from->n);
    from->stride = axis->stride.value.value_or(from->stride);
    from->sigma = axis->sigma.value.value_or(from->sigma);
    const double half = 0.5 * (from->n - 1) * from->stride;
    if (axis->first.value) {
      from->first = *axis->first.value;
    } else {
      from->first = axis->centre.value.value_or(centre) - half;
    }
  }
  g.gamma = keys.gamma.value.value_or(g.gamma);
  return g;
}

}  // namespace

Result<GaussianGlimpse> parse_gaussian_spec(std::string_view spec, int width, int height, const GaussianGlimpse& base) {
  const std::string what = "--gaussian";
  auto items = split_spec(spec, what);
  if (!items) return std::unexpected(items.error());
  GaussianKeys keys;
  for (const Item& item : *items) {
    const std::string_view k = item.key;
    const auto paper_index =
        static_cast<std::size_t>(std::find(kPaperKeys.begin(), kPaperKeys.end(), k) - kPaperKeys.begin());
    Result<void> read;
    if (k == "N" || k == "Nx" || k == "Ny") {
      read = read_filter_count(item, keys, what);
    } else if (paper_index < kPaperKeys.size()) {
      read = read_paper_key(item, paper_index, keys, what);
    } else {
      read = read_pixel_key(item, keys, what);
    }
    if (!read) return std::unexpected(read.error());
  }
  if (keys.first_paper) return from_paper_keys(keys, width, height, base, what);
  return from_pixel_keys(keys, base);
}

namespace {

// The STN keys and the families they belong to.
struct StnKey {
  std::string_view key;
  std::array<bool, 4> in;  // Affine, NoShear, Similarity, TranslationScale
};
constexpr std::array<StnKey, 6> kFamilyKeys{{
    {"sx", {false, true, false, false}},
    {"sy", {false, true, false, false}},
    {"tx", {false, true, true, true}},
    {"ty", {false, true, true, true}},
    {"scale", {false, false, true, true}},
    {"rotation", {false, false, true, false}},
}};

constexpr std::array<Family, 4> kFamilies{Family::Affine, Family::NoShear, Family::Similarity,
                                          Family::TranslationScale};

std::optional<Family> family_named(std::string_view name) {
  for (Family f : kFamilies) {
    if (to_string(f) == name) return f;
  }
  return std::nullopt;
}

std::string_view sampling_key(Sampling s) { return s == Sampling::Nearest ? "nearest" : "bilinear"; }
std::string_view padding_key(Padding p) { return p == Padding::Border ? "border" : "zeros"; }

Result<double> angle(const Item& item, const std::string& what) {
  std::string_view text = item.value;
  double unit = 1.0;
  if (text.ends_with("deg")) {
    text.remove_suffix(3);
    while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
    unit = std::numbers::pi / 180.0;
  }
  if (const auto v = to_number(text)) return *v * unit;
  return fail(ErrorKind::Malformed,
              in_quotes(item.key) + " needs an angle in radians or with a \"deg\" suffix, got " + in_quotes(item.value),
              what, item.value_at);
}

Result<Theta> theta_list(const Item& item, const std::string& what) {
  Theta theta{};
  std::size_t start = 0, count = 0;
  const std::string_view v = item.value;
  while (start <= v.size()) {
    std::size_t end = v.find(';', start);
    if (end == std::string_view::npos) end = v.size();
    std::size_t at = start;
    const std::string_view part = trimmed(v, at, end);
    const auto offset = item.value_at + static_cast<std::int64_t>(at);
    if (count == theta.size()) {
      return fail(ErrorKind::Malformed, "\"theta\" needs six numbers a;b;c;d;e;f, got more", what, offset);
    }
    const auto number = to_number(part);
    if (!number) {
      return fail(ErrorKind::Malformed, "\"theta\" needs six numbers a;b;c;d;e;f; " + in_quotes(part) + " is not one",
                  what, offset);
    }
    theta[count++] = *number;
    start = end + 1;
  }
  if (count != theta.size()) {
    return fail(ErrorKind::Malformed, "\"theta\" needs six numbers a;b;c;d;e;f, got " + std::to_string(count), what,
                item.value_at);
  }
  return theta;
}

}  // namespace

Result<StnSettings> parse_stn_spec(std::string_view spec, const StnSettings& base) {
  const std::string what = "--stn";
  auto items = split_spec(spec, what);
  if (!items) return std::unexpected(items.error());

  StnSettings s = base;
  // The family first: it decides what the other keys mean, wherever it stands.
  for (const Item& item : *items) {
    if (item.key != "family") continue;
    const auto f = family_named(item.value);
    if (!f) {
      return fail(
          ErrorKind::Unsupported,
          "\"family\" is " + in_quotes(item.value) + "; expected affine, no-shear, similarity or translation-scale",
          what, item.value_at);
    }
    s.family = *f;
  }
  const auto family_index =
      static_cast<std::size_t>(std::find(kFamilies.begin(), kFamilies.end(), s.family) - kFamilies.begin());

  for (const Item& item : *items) {
    const std::string_view k = item.key;
    if (k == "family") continue;
    const auto family_key =
        std::find_if(kFamilyKeys.begin(), kFamilyKeys.end(), [&](const StnKey& f) { return f.key == k; });
    if (family_key != kFamilyKeys.end()) {
      if (!family_key->in[family_index]) {
        std::string hint = "give theta=a;b;c;d;e;f";
        for (std::size_t f = 0; f < kFamilies.size(); ++f) {
          if (family_key->in[f]) {
            hint = "set family=" + std::string(to_string(kFamilies[f]));
            break;
          }
        }
        return fail(
            ErrorKind::Mismatch,
            in_quotes(k) + " is not a parameter of the " + std::string(to_string(s.family)) + " family (" + hint + ")",
            what, item.key_at);
      }
      const auto v = k == "rotation" ? angle(item, what) : number(item, what);
      if (!v) return std::unexpected(v.error());
      const bool tx = k == "tx", ty = k == "ty", scale = k == "scale";
      switch (s.family) {
        case Family::NoShear:
          if (k == "sx") s.no_shear.scale_x = *v;
          if (k == "sy") s.no_shear.scale_y = *v;
          if (tx) s.no_shear.shift_x = *v;
          if (ty) s.no_shear.shift_y = *v;
          break;
        case Family::Similarity:
          if (scale) s.similarity.scale = *v;
          if (k == "rotation") s.similarity.rotation = *v;
          if (tx) s.similarity.shift_x = *v;
          if (ty) s.similarity.shift_y = *v;
          break;
        case Family::TranslationScale:
          if (scale) s.translation_scale.scale = *v;
          if (tx) s.translation_scale.shift_x = *v;
          if (ty) s.translation_scale.shift_y = *v;
          break;
        case Family::Affine: break;
      }
    } else if (k == "theta") {
      if (s.family != Family::Affine) {
        return fail(ErrorKind::Mismatch, "\"theta\" is a parameter of the affine family only (set family=affine)", what,
                    item.key_at);
      }
      const auto theta = theta_list(item, what);
      if (!theta) return std::unexpected(theta.error());
      s.affine = *theta;
    } else if (k == "w" || k == "h") {
      const auto side = whole(item, 1, kMaxStnSide, what);
      if (!side) return std::unexpected(side.error());
      (k == "w" ? s.out_w : s.out_h) = *side;
    } else if (k == "sampling") {
      if (item.value != "bilinear" && item.value != "nearest") {
        return fail(ErrorKind::Unsupported,
                    "\"sampling\" is " + in_quotes(item.value) + "; expected bilinear or nearest", what, item.value_at);
      }
      s.sampler.sampling = item.value == "nearest" ? Sampling::Nearest : Sampling::Bilinear;
    } else if (k == "padding") {
      if (item.value != "zeros" && item.value != "border") {
        return fail(ErrorKind::Unsupported, "\"padding\" is " + in_quotes(item.value) + "; expected zeros or border",
                    what, item.value_at);
      }
      s.sampler.padding = item.value == "border" ? Padding::Border : Padding::Zeros;
    } else {
      return fail(ErrorKind::Malformed,
                  "unknown key " + in_quotes(k) +
                      " (STN keys: family, sx, sy, tx, ty, scale, rotation, theta, w, h, sampling, padding)",
                  what, item.key_at);
    }
  }
  return s;
}

// ---------------------------------------------------------------------------------------------------------
// JSON

namespace {

constexpr std::string_view kFormat = "attnscope.glimpse";
constexpr int kVersion = 1;

using ojson = nlohmann::ordered_json;

ojson axis_json(const GaussianAxis& a) {
  return {{"first", a.first}, {"stride", a.stride}, {"sigma", a.sigma}, {"n", a.n}};
}

ojson theta_json(const Theta& t) { return ojson(std::vector<double>(t.begin(), t.end())); }

// Strict reading: every field named by its dotted path when it is missing or of the wrong type.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  const nlohmann::json* object(const nlohmann::json& parent, const std::string& path, const char* key) {
    const nlohmann::json* j = field(parent, path, key);
    if (j && !j->is_object()) return wrong(ErrorKind::Malformed, path, key, "an object");
    return j;
  }
  void number(const nlohmann::json& parent, const std::string& path, const char* key, double& out) {
    const nlohmann::json* j = field(parent, path, key);
    if (!j) return;
    if (!j->is_number()) {
      wrong(ErrorKind::Malformed, path, key, "a number");
      return;
    }
    out = j->get<double>();
  }
  void integer(const nlohmann::json& parent, const std::string& path, const char* key, int lo, int hi, int& out) {
    const nlohmann::json* j = field(parent, path, key);
    if (!j) return;
    if (!j->is_number_integer() || j->get<std::int64_t>() < lo || j->get<std::int64_t>() > hi) {
      const ErrorKind kind = !j->is_number_integer()       ? ErrorKind::Malformed
                             : j->get<std::int64_t>() < lo ? ErrorKind::OutOfRange
                                                           : ErrorKind::TooLarge;
      wrong(kind, path, key, "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
      return;
    }
    out = static_cast<int>(j->get<std::int64_t>());
  }
  void boolean(const nlohmann::json& parent, const std::string& path, const char* key, bool& out) {
    const nlohmann::json* j = field(parent, path, key);
    if (!j) return;
    if (!j->is_boolean()) {
      wrong(ErrorKind::Malformed, path, key, "true or false");
      return;
    }
    out = j->get<bool>();
  }
  std::optional<std::string> string(const nlohmann::json& parent, const std::string& path, const char* key) {
    const nlohmann::json* j = field(parent, path, key);
    if (!j) return std::nullopt;
    if (!j->is_string()) {
      wrong(ErrorKind::Malformed, path, key, "a string");
      return std::nullopt;
    }
    return j->get<std::string>();
  }
  void theta(const nlohmann::json& parent, const std::string& path, const char* key, Theta& out) {
    const nlohmann::json* j = field(parent, path, key);
    if (!j) return;
    if (!j->is_array() || j->size() != out.size() ||
        !std::all_of(j->begin(), j->end(), [](const nlohmann::json& v) { return v.is_number(); })) {
      wrong(ErrorKind::Malformed, path, key, "an array of six numbers");
      return;
    }
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = (*j)[i].get<double>();
  }
  void axis(const nlohmann::json& parent, const std::string& path, const char* key, GaussianAxis& out) {
    const std::string p = dotted(path, key);
    if (const nlohmann::json* a = object(parent, path, key)) {
      number(*a, p, "first", out.first);
      number(*a, p, "stride", out.stride);
      number(*a, p, "sigma", out.sigma);
      integer(*a, p, "n", 1, kMaxFilters, out.n);
    }
  }
  void problem(ErrorKind kind, std::string reason) {
    if (!error_) error_ = Error{source_, -1, -1, std::move(reason), kind};
  }
  const std::optional<Error>& error() const { return error_; }

  static std::string dotted(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }

 private:
  const nlohmann::json* field(const nlohmann::json& parent, const std::string& path, const char* key) {
    if (error_) return nullptr;
    const auto it = parent.find(key);
    if (it == parent.end()) {
      problem(ErrorKind::Malformed, "field \"" + dotted(path, key) + "\" is missing");
      return nullptr;
    }
    return &*it;
  }
  const nlohmann::json* wrong(ErrorKind kind, const std::string& path, const char* key, const std::string& expected) {
    problem(kind, "field \"" + dotted(path, key) + "\" must be " + expected);
    return nullptr;
  }

  std::string source_;
  std::optional<Error> error_;
};

}  // namespace

std::string to_json(const GlimpseSettings& settings, int image_width, int image_height, std::string_view image_path) {
  const GaussianGlimpse& g = settings.gaussian;
  const DrawFit fit = to_draw(g, image_width, image_height);
  const StnSettings& s = settings.stn;
  ojson image = {{"width", image_width}, {"height", image_height}};
  if (!image_path.empty()) image["path"] = std::string(image_path);
  const ojson j = {
      {"format", kFormat},
      {"version", kVersion},
      {"image", image},
      {"gaussian", {{"x", axis_json(g.x)}, {"y", axis_json(g.y)}, {"gamma", g.gamma}}},
      {"draw",
       {{"gx_tilde", fit.params.gx_tilde},
        {"gy_tilde", fit.params.gy_tilde},
        {"log_sigma2", fit.params.log_sigma2},
        {"log_delta_tilde", fit.params.log_delta_tilde},
        {"log_gamma", fit.params.log_gamma},
        {"nx", fit.params.nx},
        {"ny", fit.params.ny},
        {"exact", fit.exact}}},
      {"stn",
       {{"family", to_string(s.family)},
        {"no_shear",
         {{"scale_x", s.no_shear.scale_x},
          {"shift_x", s.no_shear.shift_x},
          {"scale_y", s.no_shear.scale_y},
          {"shift_y", s.no_shear.shift_y}}},
        {"similarity",
         {{"scale", s.similarity.scale},
          {"rotation", s.similarity.rotation},
          {"shift_x", s.similarity.shift_x},
          {"shift_y", s.similarity.shift_y}}},
        {"translation_scale",
         {{"scale", s.translation_scale.scale},
          {"shift_x", s.translation_scale.shift_x},
          {"shift_y", s.translation_scale.shift_y}}},
        {"affine", theta_json(s.affine)},
        {"theta", theta_json(s.theta(image_width, image_height))},
        {"out_w", s.out_w},
        {"out_h", s.out_h},
        {"sampling", sampling_key(s.sampler.sampling)},
        {"padding", padding_key(s.sampler.padding)}}},
      {"same_window", settings.same_window},
  };
  // Replace, not throw, on invalid UTF-8 in the image path.
  return j.dump(2, ' ', false, ojson::error_handler_t::replace);
}

Result<GlimpseSettings> glimpse_settings_from_json(std::string_view json, std::string_view source) {
  const std::string what(source);
  const auto parsed = detail::parse_json(json, what);
  if (!parsed) return std::unexpected(parsed.error());
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return fail(ErrorKind::Malformed, "not a JSON object", what);

  Reader r(what);
  GlimpseSettings out;
  if (const auto format = r.string(j, "", "format"); format && *format != kFormat) {
    r.problem(ErrorKind::Unsupported,
              "field \"format\" is " + in_quotes(*format) + ", not \"" + std::string(kFormat) + "\"");
  }
  if (const auto it = j.find("version"); it == j.end()) {
    r.problem(ErrorKind::Malformed, "field \"version\" is missing");
  } else if (*it != kVersion) {
    r.problem(ErrorKind::Unsupported,
              "field \"version\" is " + it->dump() + "; this program reads version " + std::to_string(kVersion));
  }

  // "image", "draw" and "stn.theta" are written for the reader of the file; they follow from the rest.
  if (const nlohmann::json* g = r.object(j, "", "gaussian")) {
    r.axis(*g, "gaussian", "x", out.gaussian.x);
    r.axis(*g, "gaussian", "y", out.gaussian.y);
    r.number(*g, "gaussian", "gamma", out.gaussian.gamma);
  }
  if (const nlohmann::json* s = r.object(j, "", "stn")) {
    StnSettings& stn = out.stn;
    if (const auto family = r.string(*s, "stn", "family")) {
      if (const auto f = family_named(*family)) {
        stn.family = *f;
      } else {
        r.problem(ErrorKind::Unsupported, "field \"stn.family\" is " + in_quotes(*family) +
                                              "; expected affine, no-shear, similarity or translation-scale");
      }
    }
    if (const nlohmann::json* p = r.object(*s, "stn", "no_shear")) {
      r.number(*p, "stn.no_shear", "scale_x", stn.no_shear.scale_x);
      r.number(*p, "stn.no_shear", "shift_x", stn.no_shear.shift_x);
      r.number(*p, "stn.no_shear", "scale_y", stn.no_shear.scale_y);
      r.number(*p, "stn.no_shear", "shift_y", stn.no_shear.shift_y);
    }
    if (const nlohmann::json* p = r.object(*s, "stn", "similarity")) {
      r.number(*p, "stn.similarity", "scale", stn.similarity.scale);
      r.number(*p, "stn.similarity", "rotation", stn.similarity.rotation);
      r.number(*p, "stn.similarity", "shift_x", stn.similarity.shift_x);
      r.number(*p, "stn.similarity", "shift_y", stn.similarity.shift_y);
    }
    if (const nlohmann::json* p = r.object(*s, "stn", "translation_scale")) {
      r.number(*p, "stn.translation_scale", "scale", stn.translation_scale.scale);
      r.number(*p, "stn.translation_scale", "shift_x", stn.translation_scale.shift_x);
      r.number(*p, "stn.translation_scale", "shift_y", stn.translation_scale.shift_y);
    }
    r.theta(*s, "stn", "affine", stn.affine);
    r.integer(*s, "stn", "out_w", 1, kMaxStnSide, stn.out_w);
    r.integer(*s, "stn", "out_h", 1, kMaxStnSide, stn.out_h);
    if (const auto sampling = r.string(*s, "stn", "sampling")) {
      if (*sampling == "bilinear" || *sampling == "nearest") {
        stn.sampler.sampling = *sampling == "nearest" ? Sampling::Nearest : Sampling::Bilinear;
      } else {
        r.problem(ErrorKind::Unsupported,
                  "field \"stn.sampling\" is " + in_quotes(*sampling) + "; expected bilinear or nearest");
      }
    }
    if (const auto padding = r.string(*s, "stn", "padding")) {
      if (*padding == "zeros" || *padding == "border") {
        stn.sampler.padding = *padding == "border" ? Padding::Border : Padding::Zeros;
      } else {
        r.problem(ErrorKind::Unsupported,
                  "field \"stn.padding\" is " + in_quotes(*padding) + "; expected zeros or border");
      }
    }
  }
  r.boolean(j, "", "same_window", out.same_window);
  if (r.error()) return std::unexpected(*r.error());
  return out;
}

}  // namespace attn::glimpse
