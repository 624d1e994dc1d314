// `attnscope-cli align`'s job, and what the kinds' parts of it share. cli/align_cli.cpp checks what the job asks of
// every kind, loads the model and hands the job to the page that shows it (AlignmentPage::runCli); the page runs
// it on its model and writes what the tab draws with the same renderers (<kind>/<kind>_cli.cpp, or
// runTextSeq2SeqCli for a seq2seq over text). Widget-free (attn_runs), as the pages are.
#pragma once

#include "attn/models/seq2seq.h"
#include "attn/models/word_attribution.h"
#include "attn/trace.h"
#include "render/alignment_overlay.h"
#include "render/alignment_render.h"
#include "render/colormap.h"
#include "workbenches/common/render_report.h"

#include <QElapsedTimer>
#include <QSize>
#include <QString>

#include <cstddef>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::ui {

struct AlignmentModel;

struct AlignJob {
  QString model;     // a bundled model's key or a model folder
  std::string text;  // raw bytes, as the engine's offsets refer to them
  bool hasText = false;
  QString wavPath;              // a speech model's audio file (instead of --text, which it says with espeak-ng)
  std::string voice = "en-us";  // the espeak-ng voice a speech model's --text is said in
  attn::models::AttentionShaping shaping;  // a speech model's weights (--sharpen, --smooth, --top-k, --window)
  std::string pair;                        // an entailment model's hypothesis, raw bytes
  bool hasPair = false;
  int beam = 1;  // seq2seq: 1 = greedy
  bool beamSet = false;
  int hypothesis = 0;  // 0 = the best
  bool hypothesisSet = false;
  bool stepSet = false;
  int step = -1;   // the output step to outline (0 = the first); -1: none
  int layer = -1;  // a ConvS2S model's decoder layer (0 = the first); -1: the layers' mean
  bool layerSet = false;
  enum class View { Heatmap, Shading } view = View::Heatmap;
  bool viewSet = false;
  QString outPath;  // .png, .svg or .pdf
  QString csvPath;
  QSize size{900, 700};  // the heatmap exactly; the width of the shading figure
  render::Colormap colormap = render::Colormap::Viridis;
  // A review or entailment model: the words also shaded by this attribution of the predicted label (--attribution).
  std::optional<attn::models::WordAttributionMethod> attribution;
};

// A step of the job that may fail.
using AlignStep = std::expected<void, RenderFailure>;

// --csv, when given: `map` as CSV, added to the files written.
AlignStep writeAlignmentCsv(const AlignJob& job, const attn::AttentionMap& map, RenderReport& report);
// --out as the tab's heatmap: `map` with `overlay` drawn over it, job.size exactly.
AlignStep writeAlignmentHeatmap(const AlignJob& job, const std::shared_ptr<const attn::AttentionMap>& map,
                                const render::AlignmentOverlay& overlay);
// "probabilities: negative 0.0123, positive 0.9877".
QString probabilitiesNote(const std::vector<float>& probabilities, const std::function<QString(int)>& label);
// --attribution: `compute` run with the options the job asks for, as the figures shade it, and a note of the label's
// logit and the words with the largest scores each way (`words`: the scores' words, `label`: a label's name); an
// empty shading when the job asks for none. A refused attribution is the job's failure.
std::expected<render::AttributionShading, RenderFailure> alignAttribution(
    const AlignJob& job,
    const std::function<attn::Result<attn::models::WordAttribution>(const attn::models::WordAttributionOptions&)>&
        compute,
    const attn::Labels& words, const std::function<QString(int)>& label, RenderReport& report);
// A classifier's notes after its probabilities: how many words it read as <unk>, and the run's warnings.
void addWordRunNotes(std::ptrdiff_t unknown, const std::vector<std::string>& warnings, RenderReport& report);

// How a seq2seq kind decodes the job's input with `session` (text, or the audio a speech model hears), adding any
// notes of its input to the report.
using Seq2SeqDecode = std::function<std::expected<attn::models::Seq2SeqRun, RenderFailure>(
    attn::models::Seq2SeqRunner& session, const attn::models::DecodeOptions& options, RenderReport& report)>;
// The seq2seq kinds' part (dates, headlines, speech): refuses --pair, decodes by `decode`, checks the hypothesis,
// step and layer asked for, and writes the summary, the notes, --out (the alignment heatmap or the decoding
// figure) and --csv. `timer` started before the model loaded: the summary's time counts both.
AlignStep runSeq2SeqCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                        RenderReport& report, const Seq2SeqDecode& decode);
// A seq2seq over text (the dates' and the headlines' pages share it): refuses --wav, decodes job.text.
AlignStep runTextSeq2SeqCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                            RenderReport& report);

}  // namespace attn::ui
