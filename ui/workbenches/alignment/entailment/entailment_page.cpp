#include "workbenches/alignment/entailment/entailment_page.h"

#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/entailment/entailment_cli.h"
#include "workbenches/alignment/entailment/entailment_run.h"

#include <QCoreApplication>

namespace attn::ui {

namespace {

class EntailmentPage final : public AlignmentPage {
 public:
  QString name() const override { return QStringLiteral("entailment"); }
  bool shows(const AlignmentModel& model) const override { return model.entailment != nullptr; }
  AlignmentTaskText text() const override {
    return {tr("&Premise: a sentence about a scene"),
            tr("Classified as you type; the shading follows every keystroke"),
            tr("A sentence, e.g. a young man is sleeping on the beach"),
            tr("The hypothesis word in view (Left/Right, Home/End): its row of the heatmap is outlined "
               "and the premise is shaded by its attention. A click on a heatmap row goes to that "
               "word."),
            QString(),
            tr("words"),
            tr("Hypothesis &word:")};
  }
  AlignmentPageParts parts() const override { return {.pair = true, .attribution = true}; }
  std::unique_ptr<AlignmentRunner> runner(const AlignmentModel& model) const override {
    return makeEntailmentRunner(model);
  }
  AlignStep runCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                   RenderReport& report) const override {
    return runEntailmentCli(job, model, timer, report);
  }
  QStringList examples() const override {
    QStringList premises;
    for (const auto& example : entailmentExamples()) premises.append(example.premise);
    return premises;
  }
  QStringList exampleLabels() const override {
    QStringList labels;
    for (const auto& example : entailmentExamples()) labels.append(example.display());
    return labels;
  }
  QString examplePair(int index) const override {
    const auto examples = entailmentExamples();
    return index >= 0 && std::size_t(index) < examples.size() ? examples[std::size_t(index)].hypothesis : QString();
  }

 private:
  // Under the translation context the tab's texts have always had.
  static QString tr(const char* text) { return QCoreApplication::translate("AlignmentModels", text); }
};

}  // namespace

std::unique_ptr<const AlignmentPage> makeEntailmentPage() { return std::make_unique<EntailmentPage>(); }

}  // namespace attn::ui
