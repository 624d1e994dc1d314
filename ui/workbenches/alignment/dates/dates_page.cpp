#include "workbenches/alignment/dates/dates_page.h"

#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/alignment_cli.h"
#include "workbenches/alignment/alignment_run.h"

#include <QCoreApplication>

namespace attn::ui {

namespace {

class DatesPage final : public AlignmentPage {
 public:
  QString name() const override { return QStringLiteral("dates"); }
  bool shows(const AlignmentModel& model) const override {
    return model.seq2seq && !model.seq2seq->config().frames && !model.seq2seq->config().words;
  }
  AlignmentTaskText text() const override {
    return {tr("&Source: a date in any form"),
            tr("Decoded as you type; the output and the alignment follow every keystroke"),
            tr("A date in any form, e.g. 21 Nov 2026"),
            stepToolTip(tr("characters")),
            tr("The input is empty: type a date in any form to see its alignment. The view shows "
               "the last input."),
            tr("characters")};
  }
  AlignmentPageParts parts() const override { return {.decodes = true}; }
  std::unique_ptr<AlignmentRunner> runner(const AlignmentModel& model) const override {
    return textSeq2SeqRunner(model);
  }
  AlignStep runCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                   RenderReport& report) const override {
    return runTextSeq2SeqCli(job, model, timer, report);
  }
  QStringList examples() const override { return dateExamples(); }

 private:
  // Under the translation context the tab's texts have always had.
  static QString tr(const char* text) { return QCoreApplication::translate("AlignmentModels", text); }
};

}  // namespace

std::unique_ptr<const AlignmentPage> makeDatesPage() { return std::make_unique<DatesPage>(); }

}  // namespace attn::ui
