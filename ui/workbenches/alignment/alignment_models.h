// The models of the Alignment tab: the bundled ones (resources/models/<name>/ with config.json,
// model.safetensors and MODEL_CARD.md, embedded in the binary as Qt resources under ":/models/<name>/")
// and model folders on disk, each a character seq2seq (AttnScopeSeq2Seq), a review classifier
// (AttnScopeClassifier) or a word-by-word entailment model (AttnScopeEntailment). One loader for the tab's worker and
// attnscope-cli align: a bundled model is read from memory (config parsed from the resource's JSON, SafeTensors::parse
// over its bytes, from_parts), a folder by the engine's own loader; every error names the file.
#pragma once

#include "attn/error.h"
#include "attn/models/classifier.h"
#include "attn/models/entailment.h"
#include "attn/models/seq2seq.h"
#include "workbenches/alignment/alignment_page.h"
#include "workbenches/common/model_files.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

namespace attn::ui {

// What this build embeds, in menu order: the dates models, then the reviews models, then any other folder
// that was bundled (by name). Empty when the build found none.
std::vector<BundledModel> bundledModels();
std::optional<BundledModel> findBundledModel(const QString& key);
QStringList bundledModelKeys();

// What the tab opens on start, so a new user sees a clean alignment at once.
QString defaultAlignmentModel();  // "date-bahdanau"
QString defaultDateText();        // "Saturday, 21 November 2026"
QString defaultReviewText();
// Example inputs for the model's task, the default first.
QStringList dateExamples();
QStringList reviewExamples();
QStringList headlineExamples();
QStringList speechExamples();
struct EntailmentExample {
  QString premise, hypothesis;
  QString display() const;  // "premise  ⇒  hypothesis", as the examples box lists it
};
std::vector<EntailmentExample> entailmentExamples();

struct AlignmentModel {
  QString key;          // the bundled model's key; empty for a folder
  QString path;         // the folder, or ":/models/<key>"
  QString name;         // the bundled model's name, or the folder's
  QString description;  // the engine's one line: task, variant, parameters
  QString trainedOn;    // config.json's "trained_on": the training data in a sentence; may be empty
  QString modelCard;    // MODEL_CARD.md (Markdown), empty when there is none
  std::shared_ptr<const attn::models::Seq2SeqModel> seq2seq;
  std::shared_ptr<const attn::models::ClassifierModel> classifier;
  std::shared_ptr<const attn::models::EntailmentModel> entailment;
  bool isSeq2Seq() const { return seq2seq != nullptr; }
  bool isEntailment() const { return entailment != nullptr; }
  const AlignmentPage& page() const;  // the page that shows it (alignmentPageFor)
  QStringList warnings() const;       // the load-time warnings of its network: tensors not used, non-finite weights
};

// A bundled model's key, or a model folder (or its config.json or model.safetensors). A name without a
// path separator that is a bundled key means the bundled model.
attn::Result<AlignmentModel> loadAlignmentModel(const QString& nameOrFolder);

// What the model named reads, from its config.json alone (no weights are read), so that an input of the other kind
// is refused before anything loads: its name as loadAlignmentModel gives it, and whether it hears audio (a seq2seq
// model with "unit": "frame"). nullopt when the config cannot be read or parsed: loading then says why.
struct AlignmentModelInput {
  QString name;
  bool audio = false;
};
std::optional<AlignmentModelInput> alignmentModelInput(const QString& nameOrFolder);

// "architectures"[0] of a folder's config.json (or of the folder a config.json or model.safetensors is
// in); empty when there is none or it cannot be read.
QString folderArchitecture(const QString& path);
// True when folderArchitecture names one of the Alignment tab's families.
bool isAlignmentArchitecture(const QString& architecture);

}  // namespace attn::ui
