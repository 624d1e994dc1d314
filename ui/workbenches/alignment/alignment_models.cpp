#include "workbenches/alignment/alignment_models.h"
#include "render/strings.h"

#include "workbenches/common/model_files.h"

#include <QCoreApplication>
#include <QDir>

#include <algorithm>
#include <array>
#include <filesystem>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

// This file's texts, under the translation context "AlignmentModels" (Qt's AlignmentModels::tr() outside a QObject).
struct AlignmentModels {
  Q_DECLARE_TR_FUNCTIONS(AlignmentModels)
};

constexpr auto kSeq2Seq = "AttnScopeSeq2Seq";
constexpr auto kClassifier = "AttnScopeClassifier";
constexpr auto kEntailment = "AttnScopeEntailment";

// The names say what a model is in the words of its papers; the order walks from Bahdanau to Luong's
// scores, the local window and the convolutional model, then headlines (words), then the review classifiers: attention
// pooling, and the two saliencies without a query; then entailment, word by word; then speech.
constexpr std::array<KnownModelName, 13> kKnown = {{
    {"date-bahdanau", "Dates \u00b7 Bahdanau (additive)"},
    {"date-luong-dot", "Dates \u00b7 Luong global (dot)"},
    {"date-luong-general", "Dates \u00b7 Luong global (general)"},
    {"date-luong-concat", "Dates \u00b7 Luong global (concat)"},
    {"date-luong-local-p", "Dates \u00b7 Luong local-p (general)"},
    {"date-convs2s", "Dates \u00b7 ConvS2S (multi-step attention)"},
    {"headlines-gru", "Headlines \u00b7 GRU encoder-decoder (Bahdanau)"},
    {"sentiment-pooling", "Reviews \u00b7 attention pooling (2 heads)"},
    {"sentiment-hierarchical", "Reviews \u00b7 hierarchical"},
    {"sentiment-lstm", "Reviews \u00b7 LSTM (forget gate)"},
    {"sentiment-cnn", "Reviews \u00b7 CNN (max pooling)"},
    {"entailment-wbw", "Entailment \u00b7 word by word (Rockt\u00e4schel)"},
    {"speech-location", "Speech \u00b7 location-aware attention (Chorowski)"},
}};

attn::Error unsupported(const QString& shownAs, const QString& architecture) {
  if (architecture.isEmpty()) {
    return modelFileError(attn::ErrorKind::Unsupported, shownAs,
                          AlignmentModels::tr("no \"architectures\": the Alignment tab opens [\"AttnScopeSeq2Seq\"], "
                                              "[\"AttnScopeClassifier\"] and [\"AttnScopeEntailment\"] models"));
  }
  return modelFileError(attn::ErrorKind::Unsupported, shownAs,
                        AlignmentModels::tr("\"architectures\" names %1: the Alignment tab opens AttnScopeSeq2Seq, "
                                            "AttnScopeClassifier and AttnScopeEntailment models (%2)")
                            .arg(architecture, architecture == u"AttnScopeCaptioner"_s
                                                   ? AlignmentModels::tr("captioners open in the Captioning tab")
                                                   : AlignmentModels::tr("transformers open in the Transformer tab")));
}

void describe(AlignmentModel& model) {
  if (model.seq2seq) {
    model.description = fromStd(model.seq2seq->description());
    model.trainedOn = fromStd(model.seq2seq->config().trained_on);
  }
  if (model.classifier) {
    model.description = fromStd(model.classifier->description());
    model.trainedOn = fromStd(model.classifier->config().trained_on);
  }
  if (model.entailment) {
    model.description = fromStd(model.entailment->description());
    model.trainedOn = fromStd(model.entailment->config().trained_on);
  }
}

attn::Result<AlignmentModel> loadBundled(const BundledModel& bundled) {
  const QString configPath = bundled.resource + u"/config.json"_s;
  auto config = readModelConfig(configPath);
  if (!config) return std::unexpected(config.error());
  auto weights = readWeightsInMemory(bundled.resource + u"/model.safetensors"_s);
  if (!weights) return std::unexpected(weights.error());

  AlignmentModel model;
  model.key = bundled.key;
  model.path = bundled.resource;
  model.name = bundled.name;
  model.modelCard = readModelCard(bundled.resource);
  const std::string json = config->bytes.toStdString();
  if (config->architecture == QLatin1String(kSeq2Seq)) {
    auto parsed = attn::models::Seq2SeqConfig::parse(json, pathBytes(configPath).toStdString());
    if (!parsed) return std::unexpected(parsed.error());
    auto loaded = attn::models::Seq2SeqModel::from_parts(std::move(*parsed), *weights);
    if (!loaded) return std::unexpected(loaded.error());
    model.seq2seq = std::move(*loaded);
  } else if (config->architecture == QLatin1String(kClassifier)) {
    auto parsed = attn::models::ClassifierConfig::parse(json, pathBytes(configPath).toStdString());
    if (!parsed) return std::unexpected(parsed.error());
    auto loaded = attn::models::ClassifierModel::from_parts(std::move(*parsed), *weights);
    if (!loaded) return std::unexpected(loaded.error());
    model.classifier = std::move(*loaded);
  } else if (config->architecture == QLatin1String(kEntailment)) {
    auto parsed = attn::models::EntailmentConfig::parse(json, pathBytes(configPath).toStdString());
    if (!parsed) return std::unexpected(parsed.error());
    auto loaded = attn::models::EntailmentModel::from_parts(std::move(*parsed), *weights);
    if (!loaded) return std::unexpected(loaded.error());
    model.entailment = std::move(*loaded);
  } else {
    return std::unexpected(unsupported(configPath, config->architecture));
  }
  describe(model);
  return model;
}

attn::Result<AlignmentModel> loadFolder(const QString& path) {
  auto opened = openModelFolder(path);
  if (!opened) return std::unexpected(opened.error());
  const auto& config = opened->config;
  const QString& folder = opened->folder;
  const QString& configPath = opened->configPath;
  AlignmentModel model;
  model.path = folder;
  model.name = opened->name;
  model.modelCard = readModelCard(folder);
  const std::filesystem::path fsFolder = toPath(folder);
  if (config.architecture == QLatin1String(kSeq2Seq)) {
    auto loaded = attn::models::Seq2SeqModel::load(fsFolder);
    if (!loaded) return std::unexpected(loaded.error());
    model.seq2seq = std::move(*loaded);
  } else if (config.architecture == QLatin1String(kClassifier)) {
    auto loaded = attn::models::ClassifierModel::load(fsFolder);
    if (!loaded) return std::unexpected(loaded.error());
    model.classifier = std::move(*loaded);
  } else if (config.architecture == QLatin1String(kEntailment)) {
    auto loaded = attn::models::EntailmentModel::load(fsFolder);
    if (!loaded) return std::unexpected(loaded.error());
    model.entailment = std::move(*loaded);
  } else {
    return std::unexpected(unsupported(configPath, config.architecture));
  }
  describe(model);
  return model;
}

}  // namespace

std::vector<BundledModel> bundledModels() {
  // Only this tab's families: the captioners are bundled too, for the Captioning tab.
  return bundledModelsOf(kKnown, isAlignmentArchitecture);
}

std::optional<BundledModel> findBundledModel(const QString& key) {
  for (auto& model : bundledModels()) {
    if (model.key == key) return model;
  }
  return std::nullopt;
}

QStringList bundledModelKeys() {
  QStringList keys;
  for (const auto& model : bundledModels()) keys.append(model.key);
  return keys;
}

QString defaultAlignmentModel() { return u"date-bahdanau"_s; }
QString defaultDateText() { return u"Saturday, 21 November 2026"_s; }
QString defaultReviewText() { return reviewExamples().front(); }

QStringList dateExamples() {
  // One of each kind of format the models were trained on (tools/train/dates_data.py), and one with
  // characters outside the vocabulary.
  return {defaultDateText(),      u"21.11.2026"_s,        u"Nov 21st 2026"_s,       u"the 3rd of March, 1999"_s,
          u"04/07/76"_s,          u"Sat, Nov 21, 2026"_s, u"15-Aug-1947"_s,         u"2026 Nov 21"_s,
          u"DECEMBER 31, 1999"_s, u"Nov 21 '26"_s,        u"21\u00b711\u00b72026"_s};
}

QStringList reviewExamples() {
  return {
      u"I watched the film on a Sunday evening with my sister. The plot follows a family moving to a small "
      "town. The acting was truly superb. It runs for about 120 minutes."_s,
      u"We stayed 3 nights in May with my brother. Our room was on the third floor. The breakfast was not "
      "good. Check out is at noon."_s,
      u"I bought the kettle last June from an online shop. It weighs about 900 grams. I hated the lid."_s,
      u"We went there on a Friday night with my parents. The service was never boring! We paid 80 euros for "
      "two people."_s};
}

std::vector<EntailmentExample> entailmentExamples() {
  // One pair of each kind of edit the model was trained on (tools/train/entailment_data.py), then one with
  // words outside its vocabulary.
  return {{u"A young man is sleeping on the beach"_s, u"A man is sleeping"_s},
          {u"The farmer is eating near the river"_s, u"The farmer is not eating near the river"_s},
          {u"All dogs are running in the park"_s, u"All animals are running in the park"_s},
          {u"Some students are swimming"_s, u"Some people are swimming near the big house"_s},
          {u"A tall woman is playing on the street"_s, u"A short woman is playing on the street"_s},
          {u"Some cats are sleeping in the garden"_s, u"No cats are sleeping in the garden"_s},
          {u"The spaceship is landing near the house"_s, u"The dog is landing near the house"_s}};
}

QString EntailmentExample::display() const { return premise + u"  \u21d2  "_s + hypothesis; }

QStringList headlineExamples() {
  // One sentence of each kind the model was trained on (tools/train/headlines_data.py, from held-out keys), the
  // longest with the optional clauses a headline drops, then one with words and a name it never saw.
  return {
      u"Zenith confirmed on Monday that it will build 500 new homes in Madrid next year, in a decision that was "
      "welcomed by local business leaders and residents."_s,
      u"Police in Krakow arrested a 55 year old woman after a chase."_s,
      u"Voters in Dublin elected Grace Kim as their new mayor on Sunday."_s,
      u"Toronto Wanderers defeated Cardiff Albion 1 0 in the league on Thursday."_s,
      u"Veltro opened a new museum in Hamburg on Sunday."_s,
      u"The price of electricity rose by 15 percent in November, the statistics office announced."_s,
      u"Elena Petrova announced that she will step down as team captain of Acme in November."_s,
      u"Heavy flooding closed 500 roads in the east."_s,
      u"Astronomers in Chile discovered a comet on Friday."_s};
}

QStringList speechExamples() {
  // Words of the kind the model heard (1-4 random English words), then a longer phrase.
  return {u"the quick brown fox"_s, u"seven green apples"_s, u"hello world"_s, u"attention is all you need"_s,
          u"please call stella"_s};
}

const AlignmentPage& AlignmentModel::page() const { return alignmentPageFor(*this); }

QStringList AlignmentModel::warnings() const {
  QStringList out;
  for (const auto& w : seq2seq      ? seq2seq->warnings()
                       : classifier ? classifier->warnings()
                       : entailment ? entailment->warnings()
                                    : std::vector<std::string>()) {
    out.append(fromStd(w));
  }
  return out;
}

attn::Result<AlignmentModel> loadAlignmentModel(const QString& nameOrFolder) {
  auto bundled = resolveModelName(nameOrFolder, bundledModels());
  if (!bundled) return std::unexpected(bundled.error());
  return *bundled ? loadBundled(**bundled) : loadFolder(nameOrFolder);
}

std::optional<AlignmentModelInput> alignmentModelInput(const QString& nameOrFolder) {
  auto bundled = resolveModelName(nameOrFolder, bundledModels());
  if (!bundled) return std::nullopt;
  AlignmentModelInput input;
  QString configPath;
  ModelConfigFile config;
  if (*bundled) {
    input.name = (*bundled)->name;
    configPath = (*bundled)->resource + u"/config.json"_s;
    auto read = readModelConfig(configPath);
    if (!read) return std::nullopt;
    config = std::move(*read);
  } else {
    auto opened = openModelFolder(nameOrFolder);
    if (!opened) return std::nullopt;
    input.name = opened->name;
    configPath = opened->configPath;
    config = std::move(opened->config);
  }
  if (config.architecture == QLatin1String(kSeq2Seq)) {
    auto parsed = attn::models::Seq2SeqConfig::parse(config.bytes.toStdString(), pathBytes(configPath).toStdString());
    if (!parsed) return std::nullopt;
    input.audio = parsed->frames;
  } else if (config.architecture != QLatin1String(kClassifier) && config.architecture != QLatin1String(kEntailment)) {
    return std::nullopt;  // not the tab's: loading refuses it by name
  }
  return input;
}

QString folderArchitecture(const QString& path) {
  const QString configPath = QDir(modelFolderOf(path)).filePath(u"config.json"_s);
  auto config = readModelConfig(configPath);
  return config ? config->architecture : QString();
}

bool isAlignmentArchitecture(const QString& architecture) {
  return architecture == QLatin1String(kSeq2Seq) || architecture == QLatin1String(kClassifier) ||
         architecture == QLatin1String(kEntailment);
}

}  // namespace attn::ui
