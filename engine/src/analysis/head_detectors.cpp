#include "attn/analysis/head_detectors.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <random>
#include <set>
#include <string>
#include <utility>

namespace attn::analysis {

namespace {

constexpr std::array kDetectors{HeadDetector::PreviousToken, HeadDetector::DuplicateToken, HeadDetector::Induction,
                                HeadDetector::Sink};

// The mean of A[i, i + shift] over rows i in [first, last).
double diagonal_mean(const HeadStack& maps, int head, Index first, Index last, Index shift) {
  if (last <= first) return 0.0;
  double sum = 0.0;
  for (Index i = first; i < last; ++i) sum += maps.at(head, i, i + shift);
  return sum / double(last - first);
}

double column_mean(const HeadStack& maps, int head, Index first, Index last, Index column) {
  if (last <= first) return 0.0;
  double sum = 0.0;
  for (Index i = first; i < last; ++i) sum += maps.at(head, i, column);
  return sum / double(last - first);
}

// induction = max over k >= 1 of stripe(k), at the smallest such k.
void pick_induction(HeadScore& s) {
  s.duplicate_token = s.stripes.empty() ? 0.0f : s.stripes[0];
  s.induction = 0.0f;
  s.induction_offset = 1;
  for (std::size_t k = 1; k < s.stripes.size(); ++k) {
    if (k == 1 || s.stripes[k] > s.induction) {
      s.induction = s.stripes[k];
      s.induction_offset = int(k);
    }
  }
}

std::string model_name(const models::TransformerModel& model, const HeadDetectionOptions& options) {
  return options.model_name.empty() ? model.description() : options.model_name;
}

// What S is drawn from (the header says the rule) and how the result describes it.
struct TokenPool {
  std::vector<int> ids;
  std::string description;
};

Result<TokenPool> token_pool(const text::Tokenizer& tokenizer, int vocab_size, const HeadDetectionOptions& options,
                             const std::string& name) {
  const auto& s = tokenizer.specials();
  std::set<int> special;
  for (const auto& id : {s.unk, s.cls, s.sep, s.pad, s.mask, s.bos, s.eos}) {
    if (id) special.insert(*id);
  }
  const int vocabulary = std::min(vocab_size, tokenizer.vocab_size());
  const auto usable = [&](int id) { return id >= 0 && id < vocabulary && !special.contains(id); };
  TokenPool pool;
  std::set<int> seen;
  if (!options.alphabet.empty()) {
    auto tokens = tokenizer.encode(options.alphabet);
    if (!tokens) return std::unexpected(tokens.error());
    for (const auto& t : *tokens) {
      if (usable(t.id) && seen.insert(t.id).second) pool.ids.push_back(t.id);
    }
    pool.description = std::to_string(pool.ids.size()) + " distinct tokens of the alphabet given";
    return pool;
  }
  if (vocabulary <= kCharacterVocabulary) {
    for (char c = 'a'; c <= 'z'; ++c) {
      auto tokens = tokenizer.encode(std::string(1, c));
      if (tokens && tokens->size() == 1 && usable(tokens->front().id) && seen.insert(tokens->front().id).second) {
        pool.ids.push_back(tokens->front().id);
      }
    }
    if (pool.ids.size() == 26) {
      pool.description = "the 26 tokens of the letters a-z (a character-level vocabulary of " +
                         std::to_string(vocabulary) + " tokens)";
      return pool;
    }
    pool.ids.clear();
  }
  for (int id = 0; id < vocabulary; ++id) {
    if (!usable(id) || tokenizer.token(id).empty()) continue;
    // Added special tokens ("<|im_start|>", "[unused0]" marked special) decode to nothing when skipped.
    const int one[] = {id};
    if (tokenizer.decode(one, true).empty()) continue;
    pool.ids.push_back(id);
  }
  pool.description = with_commas(static_cast<long long>(pool.ids.size())) + " ordinary tokens of the vocabulary";
  if (pool.ids.empty()) {
    return fail(ErrorKind::Unsupported, "head detectors: the tokenizer has no ordinary token to draw from", name);
  }
  return pool;
}

Result<void> check_options(const HeadDetectionOptions& o, const std::string& name) {
  if (o.sequence_length < 2) {
    return fail(ErrorKind::OutOfRange,
                "head detectors: sequence length R = " + std::to_string(o.sequence_length) + " (at least 2)", name);
  }
  if (o.sequences < 1 || o.sequences > kMaxDetectionSequences) {
    return fail(ErrorKind::OutOfRange,
                "head detectors: B = " + std::to_string(o.sequences) + " sequences (1 to " +
                    std::to_string(kMaxDetectionSequences) + ")",
                name);
  }
  if (o.max_offset < 1 || o.max_offset >= o.sequence_length) {
    return fail(ErrorKind::OutOfRange,
                "head detectors: largest induction offset K = " + std::to_string(o.max_offset) +
                    " (1 to R-1 = " + std::to_string(o.sequence_length - 1) + ", R the sequence length)",
                name);
  }
  return {};
}

// The family's special tokens around S S (the header says which), refused when the input is past the model's
// positions.
struct DetectionFrame {
  std::vector<int> prefix, suffix;
  DetectionLayout layout;
};

Result<DetectionFrame> detection_frame(const models::TransformerConfig& config, const text::Tokenizer& tokenizer,
                                       int length, const std::string& name) {
  DetectionFrame out;
  const auto& specials = tokenizer.specials();
  if (config.causal()) {
    const std::optional<int> bos = specials.bos ? specials.bos : config.decoder.bos;
    if (bos) out.prefix.push_back(*bos);
  } else {
    if (specials.cls) out.prefix.push_back(*specials.cls);
    if (specials.sep) out.suffix.push_back(*specials.sep);
  }
  out.layout = DetectionLayout{.prefix = int(out.prefix.size()), .length = length, .suffix = int(out.suffix.size())};
  const Index tokens = out.layout.tokens();
  if (tokens > config.context()) {
    const Index longest = (config.context() - out.layout.prefix - out.layout.suffix) / 2;
    return fail(ErrorKind::TooLarge,
                "head detectors: sequence length R = " + std::to_string(length) + " makes inputs of " +
                    std::to_string(tokens) + " tokens (" + std::to_string(out.layout.prefix) + " + 2 x " +
                    std::to_string(length) + " + " + std::to_string(out.layout.suffix) + "), over the model's " +
                    std::to_string(config.context()) + " positions (R at most " +
                    std::to_string(std::max<Index>(longest, 0)) + ")",
                name);
  }
  return out;
}

}  // namespace

std::string_view to_string(HeadDetector detector) {
  switch (detector) {
    case HeadDetector::PreviousToken: return "previous-token";
    case HeadDetector::DuplicateToken: return "duplicate-token";
    case HeadDetector::Induction: return "induction";
    case HeadDetector::Sink: return "sink";
  }
  return "?";
}

std::optional<HeadDetector> find_head_detector(std::string_view name) {
  for (auto d : kDetectors) {
    if (to_string(d) == name) return d;
  }
  return std::nullopt;
}

std::span<const HeadDetector> head_detectors() { return kDetectors; }

std::vector<HeadScore> score_heads(const LayeredTrace& trace, const DetectionLayout& layout, int max_offset) {
  std::vector<HeadScore> out;
  const Index n = layout.tokens(), p = layout.prefix, r = layout.length;
  const int k_max = std::clamp(max_offset, 0, std::max(0, layout.length - 1));
  for (std::size_t l = 0; l < trace.layers.size(); ++l) {
    const auto& layer = trace.layers[l];
    const HeadStack& maps = layer.maps;
    const bool shaped = maps.rows() == n && maps.cols() == n && r >= 1;
    for (int h = 0; h < maps.heads(); ++h) {
      HeadScore s;
      s.layer = layer.layer;
      s.head = h;
      s.stripes.assign(std::size_t(k_max) + 1, 0.0f);
      if (shaped) {
        s.previous_token = float(diagonal_mean(maps, h, p + 1, p + 2 * r, -1));
        s.sink = float(column_mean(maps, h, std::max<Index>(p, 1), p + 2 * r, 0));
        for (int k = 0; k <= k_max; ++k) {
          s.stripes[std::size_t(k)] = float(diagonal_mean(maps, h, p + r, p + 2 * r, k - r));
        }
        pick_induction(s);
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

Result<HeadDetection> detect_heads(const std::shared_ptr<const models::TransformerModel>& model,
                                   const HeadDetectionOptions& options, const std::atomic<bool>* cancel,
                                   const std::function<void(double fraction)>& progress) {
  const auto& config = model->config();
  const std::string name = model_name(*model, options);
  if (config.family == models::Family::Vit) {
    return fail(ErrorKind::Unsupported, "head detectors need text: a vision transformer (ViT) has no tokens to repeat",
                name);
  }
  const text::Tokenizer* tokenizer = model->tokenizer();
  if (!tokenizer) {
    return fail(ErrorKind::Unsupported,
                "head detectors need the model's tokenizer (tokenizer.json, tokenizer.model, vocab.txt or vocab.json + "
                "merges.txt) to "
                "draw tokens from; the folder has none",
                name);
  }
  if (auto checked = check_options(options, name); !checked) return std::unexpected(checked.error());

  auto frame = detection_frame(config, *tokenizer, options.sequence_length, name);
  if (!frame) return std::unexpected(frame.error());
  const std::vector<int>& prefix = frame->prefix;
  const std::vector<int>& suffix = frame->suffix;
  HeadDetection out;
  out.layout = frame->layout;
  auto pool = token_pool(*tokenizer, config.vocab_size, options, name);
  if (!pool) return std::unexpected(pool.error());
  if (pool->ids.size() < std::size_t(options.sequence_length)) {
    return fail(ErrorKind::OutOfRange,
                "head detectors: sequence length R = " + std::to_string(options.sequence_length) +
                    " needs as many distinct tokens, but there are " + pool->description + " (R at most " +
                    std::to_string(pool->ids.size()) + ")",
                name);
  }
  out.pool = pool->description;
  out.sequences = options.sequences;
  out.max_offset = options.max_offset;
  out.layers = config.layers;
  out.heads = config.heads;

  // mt19937_64's output is fixed by the standard (its distributions are not): S is drawn with it directly, so the
  // same seed gives the same inputs with any standard library.
  std::mt19937_64 rng(options.seed);
  models::TransformerRunner runner(model);
  std::vector<int> draw = pool->ids;
  std::vector<HeadScore> sum;
  const double per_input = 1.0 / double(options.sequences);
  for (int b = 0; b < options.sequences; ++b) {
    if (cancel && cancel->load()) return fail(ErrorKind::Cancelled, "head detectors: cancelled", name);
    // A partial Fisher-Yates shuffle: R distinct tokens.
    std::vector<int> s;
    for (std::size_t i = 0; i < std::size_t(options.sequence_length); ++i) {
      const std::size_t j = i + std::size_t(rng() % (draw.size() - i));
      std::swap(draw[i], draw[j]);
      s.push_back(draw[i]);
    }
    std::vector<int> ids = prefix;
    ids.insert(ids.end(), s.begin(), s.end());
    ids.insert(ids.end(), s.begin(), s.end());
    ids.insert(ids.end(), suffix.begin(), suffix.end());
    models::RunOptions run;
    run.top_k = 0;
    run.cancel = cancel;
    if (progress) {
      run.on_progress = [&](int done, int layers, Index) {
        progress((double(b) + double(done) / double(std::max(1, layers))) * per_input);
      };
    }
    auto result = runner.run_ids(ids, {}, run);
    if (!result) {
      if (cancel && cancel->load()) return fail(ErrorKind::Cancelled, "head detectors: cancelled", name);
      return std::unexpected(result.error());
    }
    auto scores = score_heads(result->attention, out.layout, options.max_offset);
    if (sum.empty()) {
      sum = std::move(scores);
    } else {
      for (std::size_t i = 0; i < sum.size() && i < scores.size(); ++i) {
        sum[i].previous_token += scores[i].previous_token;
        sum[i].sink += scores[i].sink;
        for (std::size_t k = 0; k < sum[i].stripes.size(); ++k) sum[i].stripes[k] += scores[i].stripes[k];
      }
    }
    out.inputs.push_back(std::move(ids));
  }
  // The means; the induction offset is the argmax of the mean stripes, not a vote of each input's.
  const float scale = float(per_input);
  for (auto& s : sum) {
    s.previous_token *= scale;
    s.sink *= scale;
    for (auto& v : s.stripes) v *= scale;
    pick_induction(s);
  }
  out.scores = std::move(sum);
  if (progress) progress(1.0);
  return out;
}

}  // namespace attn::analysis
