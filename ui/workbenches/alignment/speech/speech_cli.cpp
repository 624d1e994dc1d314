#include "workbenches/alignment/speech/speech_cli.h"

#include "render/strings.h"
#include "workbenches/alignment/speech/speech_input.h"

#include <QObject>

using namespace Qt::StringLiterals;

namespace attn::ui {

AlignStep runSpeechCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                       RenderReport& report) {
  // --wav read, or --text said by espeak-ng (its phonemes and spans among the notes), then the log-mel frames
  // decoded.
  const auto decode = [&](attn::models::Seq2SeqRunner& session, const attn::models::DecodeOptions& options,
                          RenderReport& notes) -> std::expected<attn::models::Seq2SeqRun, RenderFailure> {
    if (job.view == AlignJob::View::Shading) {
      return std::unexpected(
          usageFailure(QObject::tr("--view shading is for text; a speech model writes its heatmap")));
    }
    auto input = speechInput(job.text, job.wavPath, job.voice);
    if (!input) return std::unexpected(engineFailure(RenderFailure::Kind::Input, input.error()));
    if (!input->phonemes.empty()) {
      QStringList phonemes;
      for (const auto& p : input->phonemes) phonemes << fromStd(p.name);
      notes.notes.append(QObject::tr("said by espeak-ng (%1): %2 s, the phonemes %3")
                             .arg(input->voice)
                             .arg(input->audio.seconds(), 0, 'f', 2)
                             .arg(phonemes.join(u' ')));
    }
    for (const auto& w : input->audio.warnings) notes.notes.append(u"warning: "_s + fromStd(w));
    auto run = session.run_frames(input->logMel, options);
    if (!run) return std::unexpected(engineFailure(RenderFailure::Kind::Input, run.error()));
    return std::move(*run);
  };
  return runSeq2SeqCli(job, model, timer, report, decode);
}

}  // namespace attn::ui
