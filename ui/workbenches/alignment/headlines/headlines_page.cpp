#include "workbenches/alignment/headlines/headlines_page.h"

#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/alignment_cli.h"
#include "workbenches/alignment/alignment_run.h"

#include <QCoreApplication>

namespace attn::ui {

namespace {

class HeadlinesPage final : public AlignmentPage {
 public:
  QString name() const override { return QStringLiteral("headlines"); }
  bool shows(const AlignmentModel& model) const override {
    return model.seq2seq && !model.seq2seq->config().frames && model.seq2seq->config().words;
  }
  AlignmentTaskText text() const override {
    return {tr("&Source: a news sentence"),
            tr("Summarised as you type; the headline and the alignment follow every keystroke"),
            tr("A news sentence, e.g. Police in Leeds arrested a man after a robbery."),
            stepToolTip(tr("words")),
            tr("The input is empty: type a news sentence to see its headline and alignment. The "
               "view shows the last input."),
            tr("words")};
  }
  AlignmentPageParts parts() const override { return {.decodes = true}; }
  std::unique_ptr<AlignmentRunner> runner(const AlignmentModel& model) const override {
    return textSeq2SeqRunner(model);
  }
  AlignStep runCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                   RenderReport& report) const override {
    return runTextSeq2SeqCli(job, model, timer, report);
  }
  QStringList examples() const override { return headlineExamples(); }

 private:
  // Under the translation context the tab's texts have always had.
  static QString tr(const char* text) { return QCoreApplication::translate("AlignmentModels", text); }
};

}  // namespace

std::unique_ptr<const AlignmentPage> makeHeadlinesPage() { return std::make_unique<HeadlinesPage>(); }

}  // namespace attn::ui
