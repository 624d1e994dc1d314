#include "attn/lab/lab.h"

#include <nlohmann/json.hpp>

#include <string>

namespace attn::lab {

std::string to_json(const LabRequest& request) {
  const LabParams& p = request.params;
  const nlohmann::json j = {
      {"query", request.query},
      {"source", request.source},
      {"mechanism", info(p.mechanism).key},
      {"score", score_key(p.score)},
      {"normaliser", normaliser_key(p.normaliser)},
      {"temperature", p.temperature},
      {"window", p.window},
      {"sigma", p.sigma},
      {"heads", p.heads},
      {"hops", p.hops},
      {"classes", p.classes},
      {"causal", p.causal},
      {"positions", positions_key(p.positions)},
      {"seed", p.seed},
      {"dim", p.dim},
  };
  // Replace, not throw, on invalid UTF-8: the editors only ever hold valid text.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<LabRequest> lab_request_from_json(std::string_view text, std::string_view what) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail("is not valid JSON", std::string(what));
  if (!j.is_object()) return fail("is not a JSON object", std::string(what));
  LabRequest r;
  r.query = std::string(kDefaultQuery);
  r.source = std::string(kDefaultSource);
  LabParams& p = r.params;
  std::string problem;
  auto read = [&](const char* key, auto& target) {
    const auto it = j.find(key);
    if (it == j.end() || !problem.empty()) return;
    using T = std::decay_t<decltype(target)>;
    const bool fits = std::is_same_v<T, std::string> ? it->is_string()
                      : std::is_same_v<T, bool>      ? it->is_boolean()
                                                     : it->is_number();
    if (!fits) {
      problem = std::string("field \"") + key + "\" has the wrong type";
      return;
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
  read("hops", p.hops);
  read("classes", p.classes);
  read("causal", p.causal);
  read("positions", positions);
  read("seed", p.seed);
  read("dim", p.dim);
  if (!problem.empty()) return fail(problem, std::string(what));
  if (!mechanism.empty()) {
    const MechanismInfo* m = find_mechanism(mechanism);
    if (!m) return fail("unknown mechanism \"" + mechanism + "\"", std::string(what));
    p.mechanism = m->id;
  }
  if (!score.empty()) {
    const ScoreKind* s = find_score(score);
    if (!s) return fail("unknown score \"" + score + "\"", std::string(what));
    p.score = *s;
  }
  if (!normaliser.empty()) {
    const Normaliser* n = find_normaliser(normaliser);
    if (!n) return fail("unknown normaliser \"" + normaliser + "\"", std::string(what));
    p.normaliser = *n;
  }
  if (!positions.empty()) {
    const PositionKind* k = find_positions(positions);
    if (!k) return fail("unknown positions \"" + positions + "\"", std::string(what));
    p.positions = *k;
  }
  return r;
}

}  // namespace attn::lab
