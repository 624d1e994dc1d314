// Show, Attend and Tell (Xu et al. 2015): a small CNN encoder giving a G x G grid of D-dimensional
// annotations and an LSTM decoder with MLP attention, the gate beta and the deep output layer, soft or
// hard attention, as tools/train/MODELS.md section 4 specifies and tools/train/captioner_torch.py trains.
// Greedy and beam-search decoding keep, for every hypothesis and every word, its alpha over the grid,
// its beta and (hard) the location it looked at.
#pragma once

#include "attn/core.h"
#include "attn/error.h"
#include "attn/trace.h"
#include "attn/vision/image.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::io {
class SafeTensors;
}

namespace attn::models {

enum class CaptionAttention { Soft, Hard };

struct CaptionerConfig {
  std::string task;  // "synthetic scene captions"
  CaptionAttention attention = CaptionAttention::Soft;
  int image_size = 0;  // S: the square input side
  float mean[3] = {0, 0, 0};
  float std[3] = {1, 1, 1};
  std::vector<int> channels;       // conv widths; channels.back() = D
  std::vector<std::string> vocab;  // id -> word ("<pad>" 0, "<start>" 1, "<end>" 2, "<unk>" 3)
  int embedding_size = 0, hidden = 0, attention_size = 0;
  int max_caption_length = 0;

  int grid() const;                                                        // G = S / 2^K
  int features() const { return channels.empty() ? 0 : channels.back(); }  // D

  // Parses and validates config.json (every size > 0 and bounded, S divisible by 2^K, the special
  // words in place); every error names the file and the key.
  static Result<CaptionerConfig> parse(std::string_view json, const std::string& file);
};

struct CaptionOptions {
  int beam = 1;                  // 1: greedy (1 to 64)
  std::optional<int> max_words;  // default: the config's max_caption_length
};

struct CaptionHypothesis {
  std::vector<int> ids;       // word ids without <start>; ends with <end> when the model emitted it
  Labels words;               // one per id: the word, "<end>" for the end
  std::string text;           // the words joined by spaces, without <end>
  float log_prob = 0.0f;      // sum of log-softmax over the emitted ids
  bool finished = false;      // emitted <end>
  Matrix alpha;               // [ids.size(), L]: the alpha of the step that emitted each id
  std::vector<float> beta;    // per id
  std::vector<int> location;  // hard attention: the cell (y * G + x) each step read; else empty
  Matrix log_softmax;         // [ids.size(), V]: each step's log-softmax over the vocabulary (the
                              // runners-up of every word)
};

struct CaptionRun {
  int grid = 0;                               // G (alpha rows reshape to G x G, row-major)
  Matrix features;                            // [L, D] annotations
  std::vector<CaptionHypothesis> hypotheses;  // best first; greedy: one
  std::vector<std::string> warnings;          // e.g. "image resized from 640 x 480 to 128 x 128"

  // A hypothesis' alphas as a map for the generic views: rows = words, columns = grid cells ("r,c").
  std::shared_ptr<const AttentionMap> alpha_map(std::size_t hypothesis = 0) const;
};

class CaptionerModel {
 public:
  // A folder with config.json ("architectures": ["AttnScopeCaptioner"]) and model.safetensors. Every
  // missing or mis-shaped tensor is an error naming the file, the tensor, the expected and found shape.
  static Result<std::shared_ptr<const CaptionerModel>> load(const std::filesystem::path& folder);
  static Result<std::shared_ptr<const CaptionerModel>> from_parts(CaptionerConfig config,
                                                                  const io::SafeTensors& weights);

  ~CaptionerModel();
  const CaptionerConfig& config() const;
  std::string description() const;  // "synthetic scene captions · soft attention · 8 x 8 grid · 412 k parameters"
  std::int64_t parameters() const;
  std::vector<std::string> warnings() const;  // tensors of the file the model does not use

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit CaptionerModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class CaptionerRunner {
 public:
  explicit CaptionerRunner(std::shared_ptr<const CaptionerModel> model);
  ~CaptionerRunner();
  CaptionerRunner(CaptionerRunner&&) noexcept;
  CaptionerRunner& operator=(CaptionerRunner&&) noexcept;

  const CaptionerModel& model() const { return *model_; }

  // Any image (grey or RGB planar float in [0, 1], any size >= 1 x 1): resized to S x S as MODELS.md
  // says, normalised, encoded, decoded.
  Result<CaptionRun> run(const Image& image, const CaptionOptions& options = {});
  // The S x S input already resized (3 planes, values in [0, 1]; tests, parity).
  Result<CaptionRun> run_resized(const Image& input, const CaptionOptions& options = {});
  // Teacher-forced: the decoder fed `ids` (without <start>); alpha row t is the step predicting ids[t].
  // Returns one hypothesis holding those ids, their log-probability, alphas and betas (grounding tests).
  Result<CaptionRun> run_forced(const Image& input, const std::vector<int>& ids);

 private:
  std::shared_ptr<const CaptionerModel> model_;
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

// The S x S, 3-channel model input for an image (the resize of MODELS.md section 4).
Image caption_input(const Image& image, int size);

}  // namespace attn::models
