// One kind of model the Alignment tab shows (dates, headlines, reviews, entailment, speech): a page. Each kind
// is a folder under workbenches/alignment/ with its page (<kind>/<kind>_page.{h,cpp}), and the tab asks the
// registry (alignment_pages.cpp) instead of switching on the kind: which page shows a model, what the input box
// is called and says, and the examples it offers. No widgets here, so the command line can ask the same pages.
// Each page also makes its model's runner (<kind>/<kind>_run.cpp), which the tab's worker runs instead of
// switching on the kind, and runs `attnscope-cli align`'s job on its model (<kind>/<kind>_cli.cpp, alignment_cli.h). A
// kind is its page: the tab and the command line name it by the page (or, where a value is needed, by its name()).
// Adding a kind: a folder with a page (the CMake glob finds it) and its line in alignment_pages.cpp; only its
// *_views.{h,cpp} may include widgets.
#pragma once

#include <QElapsedTimer>
#include <QString>
#include <QStringList>

#include <expected>
#include <memory>
#include <span>

namespace attn::ui {

struct AlignJob;
struct AlignmentModel;
class AlignmentRunner;
struct RenderFailure;
struct RenderReport;

struct AlignmentTaskText {
  QString sourceLabel;     // the input box's label, with its mnemonic
  QString sourceToolTip;   // what happens as you type
  QString placeholder;     // the empty box's hint
  QString stepToolTip;     // the step slider's
  QString emptyInput;      // why an empty input is not run (an entailment model says which box is empty itself)
  QString units;           // a seq2seq model's source units: "characters", "words" or "steps of audio"
  QString stepTitle = {};  // the step slider's label, with its mnemonic; empty: "St&ep:"
};

// Which of the tab's inputs and views a kind has (the tab shows and hides its widgets by these, not by the kind).
struct AlignmentPageParts {
  bool decodes = false;      // a seq2seq: beam width, hypotheses and output steps over a decoding view
  bool pair = false;         // a second input (an entailment model's hypothesis), stepped over word by word
  bool audio = false;        // it hears audio: the spectrogram, playback, Open Audio File and the shaping group
  bool readings = false;     // the readings of saliency side by side (a review classifier's check box)
  bool attribution = false;  // the words shaded by an attribution of the predicted label (reviews, entailment)
  bool steps() const { return decodes || pair; }  // the step slider and the heatmap page (else: the shading page)
};

class AlignmentPage {
 public:
  virtual ~AlignmentPage() = default;
  // The kind's name, as `attnscope-cli align` lists the kinds: "dates", "headlines", "reviews", ... (unique: what
  // names the kind where a value is needed, e.g. a map's key).
  virtual QString name() const = 0;
  // Whether this page shows `model` (at most one page says yes to a model).
  virtual bool shows(const AlignmentModel& model) const = 0;
  // The input box's label, tool tip and hint, the step slider's tool tip, the empty input's note, the units.
  virtual AlignmentTaskText text() const = 0;
  // The examples the input box offers, the default first (an entailment model's premises).
  virtual QStringList examples() const = 0;
  // How the examples box lists them (an entailment model's "premise  ⇒  hypothesis"); the examples by default.
  virtual QStringList exampleLabels() const { return examples(); }
  // The example's second input (an entailment model's hypothesis); none by default.
  virtual QString examplePair(int /*index*/) const { return {}; }
  // Which inputs and views the tab shows for this kind.
  virtual AlignmentPageParts parts() const = 0;
  // The run (alignment_run.h): a session of `model`, which this page shows, for the tab's worker thread.
  virtual std::unique_ptr<AlignmentRunner> runner(const AlignmentModel& model) const = 0;
  // `attnscope-cli align`'s part (alignment_cli.h): runs `job` on `model`, which this page shows, after the checks
  // every kind shares, and writes what the tab draws (--out, --csv), the summary and the notes in `report`.
  // `timer` started before the model loaded (the summary's time counts both).
  virtual std::expected<void, RenderFailure> runCli(const AlignJob& job, const AlignmentModel& model,
                                                    const QElapsedTimer& timer, RenderReport& report) const = 0;

 protected:
  // The step slider's tool tip of a seq2seq page whose source is made of `units`.
  static QString stepToolTip(const QString& units);
};

// Every page, in the order the tab lists the kinds.
std::span<const std::unique_ptr<const AlignmentPage>> alignmentPages();
// The page named `name`; null when there is none.
const AlignmentPage* findAlignmentPage(const QString& name);
// The page that shows `model`; the first (the dates', the tab's with no model open) when none says so.
const AlignmentPage& alignmentPageFor(const AlignmentModel& model);

}  // namespace attn::ui
