#include "workbenches/alignment/speech/speech_page.h"

#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/speech/speech_cli.h"
#include "workbenches/alignment/speech/speech_run.h"

#include <QCoreApplication>

namespace attn::ui {

namespace {

class SpeechPage final : public AlignmentPage {
 public:
  QString name() const override { return QStringLiteral("speech"); }
  bool shows(const AlignmentModel& model) const override { return model.seq2seq && model.seq2seq->config().frames; }
  AlignmentTaskText text() const override {
    return {tr("&Say: a few words (espeak-ng speaks them)"),
            tr("Said by espeak-ng and recognised as you type; the phonemes and the alignment over "
               "the audio follow every keystroke. The model knows espeak-ng's synthetic voices, "
               "not human ones."),
            tr("A few English words, e.g. the quick brown fox"),
            stepToolTip(tr("steps of audio")),
            tr("The input is empty: type a few words to hear them said and recognised. The view "
               "shows the last input."),
            tr("steps of audio")};
  }
  AlignmentPageParts parts() const override { return {.decodes = true, .audio = true}; }
  std::unique_ptr<AlignmentRunner> runner(const AlignmentModel& model) const override {
    return makeSpeechRunner(model);
  }
  AlignStep runCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                   RenderReport& report) const override {
    return runSpeechCli(job, model, timer, report);
  }
  QStringList examples() const override { return speechExamples(); }

 private:
  // Under the translation context the tab's texts have always had.
  static QString tr(const char* text) { return QCoreApplication::translate("AlignmentModels", text); }
};

}  // namespace

std::unique_ptr<const AlignmentPage> makeSpeechPage() { return std::make_unique<SpeechPage>(); }

}  // namespace attn::ui
