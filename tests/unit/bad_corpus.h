// tests/data/bad (tools/bad/make_bad_corpus.py): its MANIFEST.tsv, and running one input through the loader
// the manifest names. Shared by test_bad_corpus.cpp (kinds and messages) and test_alloc_limits.cpp (the
// largest allocation a hostile input can cause).
#pragma once

#include "attn/audio/audio.h"
#include "attn/error.h"
#include "attn/io/attention_dump.h"
#include "attn/io/safetensors.h"
#include "attn/lab/lab.h"
#include "session/session.h"
#include "attn/models/captioner.h"
#include "attn/models/classifier.h"
#include "attn/models/entailment.h"
#include "attn/models/config.h"
#include "attn/models/seq2seq.h"
#include "attn/models/transformer.h"
#include "attn/text/tokenizer.h"
#include "attn/vision/image.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace attn::test {

inline const std::filesystem::path kBadDir = std::filesystem::path(ATTN_TEST_DATA_DIR) / "bad";

struct BadInput {
  std::string path;    // relative to tests/data/bad
  std::string loader;  // safetensors, image, wordpiece, bpe, tokenizer_json, tokenizer_model, config, dump,
                       // dump-heads, session, model, audio, lab
  std::string expect;  // an ErrorKind as to_string spells it, "warning" or "ok"
  std::string names;   // the file (relative to tests/data/bad) the message or the warning must name
  std::string what;    // what is wrong with it, in words
};

inline std::vector<BadInput> read_bad_manifest() {
  std::vector<BadInput> out;
  std::ifstream in(kBadDir / "MANIFEST.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1) {
      fields.push_back(line.substr(start, tab - start));
    }
    fields.push_back(line.substr(start));
    if (fields.size() != 5) continue;  // the test counts the rows, so a broken line cannot pass unseen
    out.push_back({fields[0], fields[1], fields[2], fields[3], fields[4]});
  }
  return out;
}

// What a loader made of an input: its error, or the warnings it loaded with, and the decoded image or
// tensor file for the inputs that must load.
struct LoadOutcome {
  std::optional<Error> error;
  std::vector<std::string> warnings;
  std::optional<Image> image;
  std::optional<io::SafeTensors> tensors;
  bool ran = false;  // false: the loader name is unknown
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline LoadOutcome run_loader(const BadInput& input) {
  namespace fs = std::filesystem;
  const fs::path path = kBadDir / input.path;
  LoadOutcome out;
  out.ran = true;
  const auto take = [&out](const auto& result) {
    if (!result) out.error = result.error();
  };
  if (input.loader == "safetensors") {
    auto file = io::SafeTensors::open(path);
    take(file);
    if (file) {
      for (const io::TensorInfo& t : file->tensors()) {
        auto values = file->to_float(t);
        if (!values) {
          out.error = values.error();
          break;
        }
        if (auto note = io::nonfinite_warning(*file, t, *values)) out.warnings.push_back(*note);
      }
      out.tensors = std::move(*file);
    }
  } else if (input.loader == "image") {
    auto image = load_image(path);
    take(image);
    if (image) out.image = std::move(*image);
  } else if (input.loader == "image-224") {
    // As the Transformer tab reads a photo for ViT: the model's input and a view, from one decode.
    const ImageSize sizes[] = {{.fit = ImageSize::Fit::Exact, .width = 224, .height = 224},
                               {.fit = ImageSize::Fit::Within, .max_side = 1024}};
    auto images = load_image_sizes(path, sizes);
    take(images);
    if (images) out.image = std::move(images->front());
  } else if (input.loader == "wordpiece") {
    take(text::load_wordpiece(path, text::WordPieceOptions{}));
  } else if (input.loader == "tokenizer_json") {
    take(text::load_tokenizer_json(path));
  } else if (input.loader == "tokenizer_model") {
    // A SentencePiece tokenizer.model, used as the app uses it: encode (a long run of one letter too, which a
    // trie with a cycle keeps matching), then decode what came out.
    auto tokenizer = text::load_sentencepiece(path);
    take(tokenizer);
    if (tokenizer) {
      for (const std::string& sample :
           {std::string("hello world"), std::string("\uff21 \ufb01\u2460 a"), std::string(65536, 'a')}) {
        auto tokens = (*tokenizer)->encode(sample);
        if (!tokens) {
          out.error = tokens.error();
          break;
        }
        std::vector<int> ids;
        for (const text::Token& t : *tokens) ids.push_back(t.id);
        (void)(*tokenizer)->decode(ids);
      }
    }
  } else if (input.loader == "bpe") {
    take(text::load_byte_level_bpe(path / "vocab.json", path / "merges.txt"));
  } else if (input.loader == "config") {
    take(models::parse_config(slurp(path), path.string()));
  } else if (input.loader == "dump") {
    auto dump = io::read_attention_dump(path);
    take(dump);
    if (dump) out.warnings = dump->warnings;
  } else if (input.loader == "dump-heads") {
    // A dump opened, then every head checked as a view checks it before drawing it (OnDemandLayer::verify).
    auto dump = io::read_attention_dump(path);
    take(dump);
    if (dump) {
      out.warnings = dump->warnings;
      for (const OnDemandLayer& layer : dump->on_demand) {
        for (int h = 0; h < layer.heads() && !out.error; ++h) {
          if (auto ok = layer.verify(h); !ok) out.error = ok.error();
        }
      }
    }
  } else if (input.loader == "session") {
    take(ui::load_session(path));
  } else if (input.loader == "audio") {
    take(audio::read_audio(path));
  } else if (input.loader == "lab") {
    // A request as the Lab's settings file holds it, then run: the budget refuses it before anything is built. The
    // run's error names the request, which here is the file.
    auto request = lab::lab_request_from_json(slurp(path), path.string());
    take(request);
    if (request) {
      auto run = lab::run_lab(*request);
      if (!run) {
        out.error = run.error();
        out.error->file = path.string();
      }
    }
  } else if (input.loader == "model") {
    // Which loader: the one the folder's config.json names, as the app's model pickers decide.
    const std::string config = slurp(path / "config.json");
    const auto load = [&](auto result) {
      take(result);
      if (result) out.warnings = (*result)->warnings();
    };
    if (config.find("AttnScopeCaptioner") != std::string::npos) {
      load(models::CaptionerModel::load(path));
    } else if (config.find("AttnScopeClassifier") != std::string::npos) {
      load(models::ClassifierModel::load(path));
    } else if (config.find("AttnScopeSeq2Seq") != std::string::npos) {
      load(models::Seq2SeqModel::load(path));
    } else if (config.find("AttnScopeEntailment") != std::string::npos) {
      load(models::EntailmentModel::load(path));
    } else {
      load(models::TransformerModel::load(path));
    }
  } else {
    out.ran = false;
  }
  return out;
}

}  // namespace attn::test
