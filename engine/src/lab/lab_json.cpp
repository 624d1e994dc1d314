#include "attn/lab/lab.h"

#include "../core/json_config.h"
#include "../text/unicode.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace attn::lab {

std::string to_json(const LabRequest& request) {
  const LabParams& p = request.params;
  nlohmann::json j = {
      {"query", request.query},
      {"source", request.source},
      {"mechanism", info(p.mechanism).key},
      {"score", score_key(p.score)},
      {"normaliser", normaliser_key(p.normaliser)},
      {"temperature", p.temperature},
      {"window", p.window},
      {"sigma", p.sigma},
      {"heads", p.heads},
      {"causal", p.causal},
      {"shuffle", p.shuffle},
      {"positions", positions_key(p.positions)},
      {"seed", p.seed},
      {"dim", p.dim},
  };
  for (const CountParam& c : count_params()) j[std::string(c.key)] = p.*c.field;
  // Replace, not throw, on invalid UTF-8: the editors only ever hold valid text.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<LabRequest> lab_request_from_json(std::string_view text, std::string_view what) {
  if (auto bad = text::unicode::check_utf8(text, std::string(what))) return std::unexpected(std::move(*bad));
  const auto parsed = detail::parse_json(text, std::string(what));
  if (!parsed) return std::unexpected(parsed.error());
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return fail(ErrorKind::Malformed, "is not a JSON object", std::string(what));
  LabRequest r;
  r.query = std::string(kDefaultQuery);
  r.source = std::string(kDefaultSource);
  LabParams& p = r.params;
  std::string problem;
  ErrorKind problem_kind = ErrorKind::Malformed;
  // A number is checked against its field's type before it is converted: get<int>() of 1e10 is a float-to-int
  // conversion out of range (undefined), and get<float>() of 1e300 an infinity that to_json cannot write back.
  auto read = [&](const char* key, auto& target) {
    const auto it = j.find(key);
    if (it == j.end() || !problem.empty()) return;
    using T = std::decay_t<decltype(target)>;
    const auto refuse = [&](ErrorKind kind, const std::string& why) {
      problem = std::string("field \"") + key + "\" " + why;
      problem_kind = kind;
    };
    if constexpr (std::is_same_v<T, std::string>) {
      if (!it->is_string()) return refuse(ErrorKind::Malformed, "has the wrong type");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!it->is_boolean()) return refuse(ErrorKind::Malformed, "has the wrong type");
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!it->is_number()) return refuse(ErrorKind::Malformed, "has the wrong type");
      if (!(std::abs(it->template get<double>()) <= std::numeric_limits<T>::max())) {
        return refuse(ErrorKind::OutOfRange, "is " + it->dump() + ", beyond the range of a float");
      }
    } else {
      if (!it->is_number()) return refuse(ErrorKind::Malformed, "has the wrong type");
      if (it->is_number_float()) {  // 4.0 or 1e10: a whole number written as a float, compared as a double
        const double v = it->template get<double>();
        if (std::trunc(v) != v) return refuse(ErrorKind::Malformed, "is " + it->dump() + ", not a whole number");
        const double limit = std::ldexp(1.0, std::numeric_limits<T>::digits);  // 2^31 for int, 2^64 for uint64
        if (!(v < limit && v >= (std::is_signed_v<T> ? -limit : 0.0))) {
          return refuse(ErrorKind::OutOfRange, "is " + it->dump() + ", out of range");
        }
        target = static_cast<T>(v);
        return;
      }
      const bool fits = it->is_number_unsigned()
                            ? std::cmp_less_equal(it->template get<std::uint64_t>(), std::numeric_limits<T>::max())
                            : std::in_range<T>(it->template get<std::int64_t>());
      if (!fits) return refuse(ErrorKind::OutOfRange, "is " + it->dump() + ", out of range");
    }
    target = it->template get<T>();
  };
  std::string mechanism, score, normaliser, positions;
  read("query", r.query);
  read("source", r.source);
  read("mechanism", mechanism);
  read("score", score);
  read("normaliser", normaliser);
  read("temperature", p.temperature);
  read("window", p.window);
  read("sigma", p.sigma);
  read("heads", p.heads);
  read("causal", p.causal);
  read("shuffle", p.shuffle);
  read("positions", positions);
  read("seed", p.seed);
  read("dim", p.dim);
  for (const CountParam& c : count_params()) read(c.key.data(), p.*c.field);
  if (!problem.empty()) return fail(problem_kind, problem, std::string(what));
  if (!mechanism.empty()) {
    const MechanismInfo* m = find_mechanism(mechanism);
    if (!m) return fail(ErrorKind::Unsupported, "unknown mechanism \"" + mechanism + "\"", std::string(what));
    p.mechanism = m->id;
  }
  if (!score.empty()) {
    const ScoreKind* s = find_score(score);
    if (!s) return fail(ErrorKind::Unsupported, "unknown score \"" + score + "\"", std::string(what));
    p.score = *s;
  }
  if (!normaliser.empty()) {
    const Normaliser* n = find_normaliser(normaliser);
    if (!n) return fail(ErrorKind::Unsupported, "unknown normaliser \"" + normaliser + "\"", std::string(what));
    p.normaliser = *n;
  }
  if (!positions.empty()) {
    const PositionKind* k = find_positions(positions);
    if (!k) return fail(ErrorKind::Unsupported, "unknown positions \"" + positions + "\"", std::string(what));
    p.positions = *k;
  }
  return r;
}

}  // namespace attn::lab
