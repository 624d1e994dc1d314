// Which attribution to believe (issue 44): the deletion and insertion curves (attn/models/faithfulness.h,
// attn/models/word_faithfulness.h) of every attribution method over a held-out set of each bundled text model, their
// areas averaged over the inputs with a 95% bootstrap interval, and each method's paired difference from a reference
// method's on the same inputs (AttnLRP for the transformers, the model's own attention for the word models; its
// bootstrap interval: a difference whose interval excludes 0 is one the inputs agree on). Prints a Markdown table per
// model (docs/BENCHMARKS.md, "Which attribution to believe") and writes one CSV row per input and method.
//
//   bench_faithfulness [--inputs N] [--fast] [--model NAME]... [--steps N] [--removal replace|delete] [--csv FILE]
//
// NAME: induction-gpt2, stories260k (the transformers), sentiment-pooling, sentiment-hierarchical, sentiment-lstm,
// sentiment-cnn, entailment-wbw (the word models); every one by default.
//
// Held-out inputs, generated here with fixed seeds (nothing is downloaded):
//   induction-gpt2: a string S of 8 to 20 distinct random lowercase letters, then its first m letters again
//     (2 <= m < |S|): the model should copy S[m] (MODEL_CARD.md); seed 4401, not training's 0 nor its metrics' 1000.
//   stories260k: there is no TinyStories text in the repository, so the model writes its own: one of 10 seed phrases,
//     continued by sampling at temperature 1 (seed 4402 + i), cut at a random length of 16 to 48 tokens.
//   the review models: tests/data/faithfulness/reviews.jsonl, the first 200 reviews of their held-out set (seed 2);
//   entailment-wbw: tests/data/faithfulness/entailment.jsonl, the first 200 pairs of its held-out set (premises held
//     out from training); both written by tools/train/heldout_inputs.py, the training scripts' own splits.
// The word models: the predicted label's probability; methods gradient x input, integrated gradients (256 steps, as
// the Alignment tab), the model's own weights ("attention": the pooling's word weights averaged over the heads, times
// the sentence's weight in the hierarchical model; the LSTM's and the CNN's saliency, which are not attention; the
// entailment model's attention over the premise averaged over the hypothesis words) and random; words replaced by
// <unk>; entailment: the premise's words only (the words its attention weighs).
// Explained (transformers): the model's top next-token prediction at the last token, as a logit
// (AttributionTarget::Logit). Every method of attn::models::all_methods() is tried on every input; one that fails is
// reported with its first error and left out of the table (flow, until it exists). Removal: replacement by the
// tokenizer's pad, unknown or end-of-text token (the table says which), or with --removal delete the tokens deleted;
// deletion and insertion curves alike.
// --benchmark_list_tests: the models it would evaluate, one a line (the docs' command check).
// --fast: 3 inputs per model and every 4th point of each curve (the smoke test in ctest).
#include "attn/models/attribution.h"
#include "attn/models/faithfulness.h"
#include "attn/models/word_faithfulness.h"
#include "attn/random.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace attn;
using namespace attn::models;

const std::vector<std::string> kModels = {"induction-gpt2",         "stories260k",    "sentiment-pooling",
                                          "sentiment-hierarchical", "sentiment-lstm", "sentiment-cnn",
                                          "entailment-wbw"};

bool word_model(const std::string& name) { return name.starts_with("sentiment-") || name == "entailment-wbw"; }

struct Args {
  int inputs = 200;
  bool fast = false;
  int steps = 0;
  std::vector<std::string> models;
  std::string csv = "faithfulness.csv";
  FaithfulnessOptions::Removal removal = FaithfulnessOptions::Removal::Replace;
  bool list = false;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "bench_faithfulness: %s\nusage: bench_faithfulness [--inputs N] [--fast] [--model NAME]... [--steps N] "
               "[--removal replace|delete] [--csv FILE]\n  NAME: induction-gpt2, stories260k, sentiment-pooling, "
               "sentiment-hierarchical, sentiment-lstm, sentiment-cnn, entailment-wbw\n",
               why.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  bool inputs_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(std::string(arg) + " needs a value");
      return argv[++i];
    };
    auto number = [&](int lo, int hi) {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < lo || n > hi)
        usage(std::string(arg) + " " + v + ": not a whole number in " + std::to_string(lo) + " .. " +
              std::to_string(hi));
      return static_cast<int>(n);
    };
    if (arg == "--inputs") {
      a.inputs = number(1, 100000);
      inputs_given = true;
    } else if (arg == "--fast") {
      a.fast = true;
    } else if (arg == "--steps") {
      a.steps = number(0, 1024);
    } else if (arg == "--model") {
      const std::string m = value();
      if (std::find(kModels.begin(), kModels.end(), m) == kModels.end()) usage("unknown model " + m);
      a.models.push_back(m);
    } else if (arg == "--csv") {
      a.csv = value();
    } else if (arg == "--removal") {
      const std::string r = value();
      if (r != "replace" && r != "delete") usage("--removal " + r + ": replace or delete");
      a.removal = r == "delete" ? FaithfulnessOptions::Removal::Delete : FaithfulnessOptions::Removal::Replace;
    } else if (arg == "--benchmark_list_tests") {
      a.list = true;
    } else {
      usage("unknown argument " + std::string(arg));
    }
  }
  if (a.fast) {
    if (!inputs_given) a.inputs = 3;
    if (a.steps == 0) a.steps = 4;
  }
  // The word models replace words by <unk> only; --removal delete is for the transformers.
  const bool deleting = a.removal == FaithfulnessOptions::Removal::Delete;
  if (a.models.empty())
    for (const std::string& m : kModels)
      if (!deleting || !word_model(m)) a.models.push_back(m);
  for (const std::string& m : a.models)
    if (deleting && word_model(m)) usage(m + ": its words are replaced by <unk>, not deleted (leave out --removal)");
  return a;
}

int below(SplitMix64& rng, int n) { return static_cast<int>(rng.next() % static_cast<std::uint64_t>(n)); }

// S (8 to 20 distinct letters) and its first m letters again.
std::vector<std::vector<int>> induction_inputs(TransformerRunner& runner, int count) {
  SplitMix64 rng(4401);
  std::vector<std::vector<int>> out;
  for (int i = 0; i < count; ++i) {
    std::string letters = "abcdefghijklmnopqrstuvwxyz";
    const int length = 8 + below(rng, 13);
    for (int j = 0; j < length; ++j)
      std::swap(letters[static_cast<std::size_t>(j)], letters[static_cast<std::size_t>(j + below(rng, 26 - j))]);
    const std::string s = letters.substr(0, static_cast<std::size_t>(length));
    const int m = 2 + below(rng, length - 2);
    auto enc = runner.model().tokenizer()->encode_for_model(s + s.substr(0, static_cast<std::size_t>(m)));
    if (!enc) usage(enc.error().message());
    std::vector<int> ids;
    for (const text::Token& t : enc->tokens) ids.push_back(t.id);
    out.push_back(std::move(ids));
  }
  return out;
}

// The model's own stories: a seed phrase, sampled on at temperature 1, cut at 16 to 48 tokens.
std::vector<std::vector<int>> story_inputs(TransformerRunner& runner, int count) {
  static const char* const kSeeds[] = {"Once upon a time", "One day",         "Lily was", "Tom and his dog",
                                       "The little bird",  "There was a big", "Mom said", "The sun was",
                                       "A boy named Ben",  "In the park"};
  SplitMix64 rng(4402);
  std::vector<std::vector<int>> out;
  for (std::uint64_t attempt = 0; static_cast<int>(out.size()) < count; ++attempt) {
    GenerateOptions g;
    g.max_new_tokens = 48;
    g.temperature = 1.0f;
    g.seed = 4402 + attempt;
    RunOptions o;
    o.top_k = 0;
    auto run = runner.generate_text(kSeeds[attempt % std::size(kSeeds)], g, o);
    if (!run) usage(run.error().message());
    const int cut = 16 + below(rng, 33);
    if (static_cast<int>(run->ids.size()) < cut) continue;  // the story ended early: draw another
    const auto& eos = runner.model().config().decoder.eos;
    if (std::any_of(run->ids.begin() + 1, run->ids.begin() + cut,
                    [&](int id) { return std::find(eos.begin(), eos.end(), id) != eos.end(); }))
      continue;  // a story's end inside the input
    out.emplace_back(run->ids.begin(), run->ids.begin() + cut);
  }
  return out;
}

struct Row {
  std::string model, method;
  int input = 0, tokens = 0, removable = 0;
  double p0 = 0, deletion = 0, insertion = 0;
};

struct Evaluation {
  std::vector<Row> rows;
  std::map<std::string, std::string> first_error;  // method -> its first error
  std::map<std::string, int> errors;
  std::string removal;
  double seconds = 0;
  int inputs = 0;
};

// One input: every method's ranking and its two curves.
void evaluate_input(TransformerRunner& runner, const std::string& name, int index, const std::vector<int>& ids,
                    const Args& args, Evaluation& e) {
  auto run = runner.run_ids(ids);
  if (!run) usage(run.error().message());
  const int position = static_cast<int>(ids.size()) - 1;
  Index best = 0;
  run->logits.row(0).maxCoeff(&best);
  AttributionTarget target;
  target.position = position;
  target.token = static_cast<int>(best);
  for (const AttributionMethod method : all_methods()) {
    const std::string method_text(method_name(method));
    AttributeOptions ao;
    ao.method = method;
    ao.seed = mix_seed(4403, static_cast<std::uint64_t>(index));
    auto a = attribute(runner.model(), *run, target, ao);
    if (!a) {
      if (!e.errors[method_text]++) e.first_error[method_text] = a.error().message();
      continue;
    }
    FaithfulnessOptions fo;
    fo.position = position;
    fo.token = target.token;
    fo.steps = args.steps;
    fo.removal = args.removal;
    auto del = deletion_curve(runner, *run, a->scores, fo);
    auto ins = insertion_curve(runner, *run, a->scores, fo);
    if (!del || !ins) usage((del ? ins.error() : del.error()).message());
    e.removal = del->removal;
    e.rows.push_back(Row{name, method_text, index, static_cast<int>(ids.size()), static_cast<int>(del->ranked.size()),
                         del->probability.front(), aopc(*del), aopc(*ins)});
  }
}

Evaluation evaluate(const std::string& name, const Args& args) {
  const fs::path folder = fs::path(ATTN_SOURCE_DIR) / "resources" / "models" / name;
  auto model = TransformerModel::load(folder);
  if (!model) usage(model.error().message());
  TransformerRunner runner(*model);
  const auto t0 = std::chrono::steady_clock::now();
  const auto inputs = name == "stories260k" ? story_inputs(runner, args.inputs) : induction_inputs(runner, args.inputs);
  Evaluation e;
  e.inputs = static_cast<int>(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    evaluate_input(runner, name, static_cast<int>(i), inputs[i], args, e);
    if ((i + 1) % 20 == 0) std::fprintf(stderr, "%s: %zu / %zu inputs\n", name.c_str(), i + 1, inputs.size());
  }
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return e;
}

// ---- the word models

const std::vector<std::string> kWordMethods = {"grad-x-input", "integrated-gradients", "attention", "random"};
constexpr int kWordSteps = 256;  // integrated gradients, as the Alignment tab

// The first `count` inputs of a held-out file of tests/data/faithfulness: its "text" (and "pair") fields.
std::vector<std::pair<std::string, std::string>> word_inputs(const std::string& file, int count) {
  const fs::path path = fs::path(ATTN_SOURCE_DIR) / "tests" / "data" / "faithfulness" / file;
  std::ifstream in(path);
  if (!in) usage("cannot read " + path.string() + " (tools/train/heldout_inputs.py writes it)");
  std::vector<std::pair<std::string, std::string>> out;
  std::string line;
  for (int number = 1; static_cast<int>(out.size()) < count && std::getline(in, line); ++number) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("text") || !j["text"].is_string() ||
        (j.contains("pair") && !j["pair"].is_string()))
      usage(path.string() + " line " + std::to_string(number) + ": not {\"text\": ..., \"pair\": ...}");
    out.emplace_back(j["text"].get<std::string>(), j.value("pair", std::string()));
  }
  return out;
}

std::vector<float> random_scores(std::size_t n, int index) {
  SplitMix64 rng(mix_seed(4403, static_cast<std::uint64_t>(index)));
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.next() >> 40) / static_cast<float>(1 << 24);
  return v;
}

// The model's own weight of each word: the pooling's (mean over the heads; times the sentence's weight when
// hierarchical), or the LSTM's and the CNN's saliency.
std::vector<float> own_weights(const ClassifierRun& run) {
  if (run.saliency.size() > 0) return {run.saliency.data(), run.saliency.data() + run.saliency.size()};
  std::vector<float> v(run.ids.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = run.word_attention.col(static_cast<Index>(i)).mean() *
           run.sentence_attention(static_cast<Index>(run.input.sentence[i]));
  return v;
}

// The entailment model's attention on each premise word, averaged over the hypothesis's words (0 for the
// hypothesis's own words, which its curves leave in place).
std::vector<float> own_weights(const EntailmentRun& run) {
  std::vector<float> v(run.premise_ids.size() + run.hypothesis_ids.size(), 0.0f);
  for (std::size_t j = 0; j < run.premise_ids.size(); ++j) v[j] = run.attention.col(static_cast<Index>(j)).mean();
  return v;
}

// One input of a word model: every method's ranking and its two curves.
template <class Model, class Runner, class Run>
void evaluate_word_input(const Model& model, Runner& runner, const Run& run, const std::string& name, int index,
                         int words, const Args& args, Evaluation& e) {
  WordFaithfulnessOptions fo;
  fo.steps = args.steps;
  fo.premise_only = name == "entailment-wbw";
  for (const std::string& method : kWordMethods) {
    std::vector<float> scores;
    if (method == "attention") {
      scores = own_weights(run);
    } else if (method == "random") {
      scores = random_scores(static_cast<std::size_t>(words), index);
    } else {
      WordAttributionOptions ao;
      ao.method =
          method == "grad-x-input" ? WordAttributionMethod::GradientXInput : WordAttributionMethod::IntegratedGradients;
      ao.steps = kWordSteps;
      auto a = attribute_words(model, run, ao);
      if (!a) {
        if (!e.errors[method]++) e.first_error[method] = a.error().message();
        continue;
      }
      scores.assign(a->scores.data(), a->scores.data() + a->scores.size());
    }
    auto del = deletion_curve(runner, run, scores, fo);
    auto ins = insertion_curve(runner, run, scores, fo);
    if (!del || !ins) usage((del ? ins.error() : del.error()).message());
    e.removal = del->removal;
    e.rows.push_back(Row{name, method, index, words, static_cast<int>(del->ranked.size()), del->probability.front(),
                         aopc(*del), aopc(*ins)});
  }
}

Evaluation evaluate_words(const std::string& name, const Args& args) {
  const fs::path folder = fs::path(ATTN_SOURCE_DIR) / "resources" / "models" / name;
  Evaluation e;
  const auto t0 = std::chrono::steady_clock::now();
  const bool pairs = name == "entailment-wbw";
  const auto inputs = word_inputs(pairs ? "entailment.jsonl" : "reviews.jsonl", args.inputs);
  e.inputs = static_cast<int>(inputs.size());
  const auto each = [&](auto& model, auto& runner, auto&& run_one) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      auto run = run_one(inputs[i]);
      if (!run) usage(name + " input " + std::to_string(i) + ": " + run.error().message());
      const int words = static_cast<int>(own_weights(*run).size());
      evaluate_word_input(*model, runner, *run, name, static_cast<int>(i), words, args, e);
      if ((i + 1) % 50 == 0) std::fprintf(stderr, "%s: %zu / %zu inputs\n", name.c_str(), i + 1, inputs.size());
    }
  };
  if (pairs) {
    auto model = EntailmentModel::load(folder);
    if (!model) usage(model.error().message());
    EntailmentRunner runner(*model);
    each(*model, runner, [&](const auto& in) { return runner.run(in.first, in.second); });
  } else {
    auto model = ClassifierModel::load(folder);
    if (!model) usage(model.error().message());
    ClassifierRunner runner(*model);
    each(*model, runner, [&](const auto& in) { return runner.run(in.first); });
  }
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return e;
}

// ---- the tables

struct Interval {
  double mean = 0, lo = 0, hi = 0;
};

// The mean and its 95% percentile bootstrap interval (2,000 resamples, seeded).
Interval bootstrap(const std::vector<double>& x) {
  Interval r;
  if (x.empty()) return r;
  double sum = 0;
  for (const double v : x) sum += v;
  r.mean = sum / static_cast<double>(x.size());
  SplitMix64 rng(4404);
  std::vector<double> means;
  for (int b = 0; b < 2000; ++b) {
    double s = 0;
    for (std::size_t i = 0; i < x.size(); ++i) s += x[rng.next() % x.size()];
    means.push_back(s / static_cast<double>(x.size()));
  }
  std::sort(means.begin(), means.end());
  r.lo = means[static_cast<std::size_t>(0.025 * (means.size() - 1))];
  r.hi = means[static_cast<std::size_t>(0.975 * (means.size() - 1))];
  return r;
}

// One method's values per input (NaN where it did not run), for the paired differences.
std::vector<double> per_input(const Evaluation& e, const std::string& method, bool insertion) {
  std::vector<double> v(static_cast<std::size_t>(e.inputs), std::nan(""));
  for (const Row& r : e.rows)
    if (r.method == method) v[static_cast<std::size_t>(r.input)] = insertion ? r.insertion : r.deletion;
  return v;
}

// "0.123 [0.100, 0.150]" of the values, and of their differences from the reference on the same inputs.
std::pair<std::string, std::string> cells(const std::vector<double>& x, const std::vector<double>& reference) {
  std::vector<double> values, differences;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) continue;
    values.push_back(x[i]);
    if (!std::isnan(reference[i])) differences.push_back(x[i] - reference[i]);
  }
  char a[96] = "", b[96] = "";
  const Interval v = bootstrap(values);
  std::snprintf(a, sizeof a, "%.3f [%.3f, %.3f]", v.mean, v.lo, v.hi);
  if (!differences.empty()) {
    const Interval d = bootstrap(differences);
    std::snprintf(b, sizeof b, "%+.3f [%+.3f, %+.3f]", d.mean, d.lo, d.hi);
  }
  return {a, b};
}

// `methods` in order, each method's paired difference from `reference`'s.
void print_table(const std::string& name, const Evaluation& e, const std::vector<std::string>& methods,
                 const std::string& reference) {
  std::printf("\n%s: %d inputs; removed tokens %s; %.0f s\n\n", name.c_str(), e.inputs, e.removal.c_str(), e.seconds);
  std::printf("| method | deletion AOPC | minus %s's (paired) | insertion AUC | minus %s's (paired) | inputs |\n",
              reference.c_str(), reference.c_str());
  std::printf("|---|---|---|---|---|---|\n");
  const auto del_ref = per_input(e, reference, false), ins_ref = per_input(e, reference, true);
  for (const std::string& m : methods) {
    const auto count = std::count_if(e.rows.begin(), e.rows.end(), [&](const Row& r) { return r.method == m; });
    if (count == 0) {
      const auto it = e.first_error.find(m);
      std::printf("| %s | not run: %s | | | | 0 |\n", m.c_str(), it == e.first_error.end() ? "" : it->second.c_str());
      continue;
    }
    const auto [d, dd] = cells(per_input(e, m, false), del_ref);
    const auto [i, id] = cells(per_input(e, m, true), ins_ref);
    std::printf("| %s | %s | %s | %s | %s | %ld |\n", m.c_str(), d.c_str(), m == reference ? "" : dd.c_str(), i.c_str(),
                m == reference ? "" : id.c_str(), static_cast<long>(count));
  }
  for (const auto& [m, n] : e.errors)
    if (n > 0) std::printf("\n%s failed on %d inputs: %s\n", m.c_str(), n, e.first_error.at(m).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  if (args.list) {  // what tests/cli/readme_commands.sh asks of a benchmark: its cases
    for (const std::string& name : args.models) std::printf("%s\n", name.c_str());
    return 0;
  }
  std::ofstream csv(args.csv);
  if (!csv) usage("cannot write " + args.csv);
  csv << "model,input,method,tokens,removable,p0,deletion_aopc,insertion_auc\n";
  std::vector<std::string> transformer_methods;
  for (const AttributionMethod method : all_methods()) transformer_methods.emplace_back(method_name(method));
  for (const std::string& name : args.models) {
    const bool words = word_model(name);
    const Evaluation e = words ? evaluate_words(name, args) : evaluate(name, args);
    if (words)
      print_table(name, e, kWordMethods, "attention");
    else
      print_table(name, e, transformer_methods, std::string(method_name(AttributionMethod::AttnLrp)));
    for (const Row& r : e.rows)
      csv << r.model << ',' << r.input << ',' << r.method << ',' << r.tokens << ',' << r.removable << ',' << r.p0 << ','
          << r.deletion << ',' << r.insertion << '\n';
  }
  csv.flush();
  if (!csv) usage("cannot write " + args.csv);
  std::printf("\nper input: %s\n", args.csv.c_str());
  return 0;
}
