#include "cli/run_notes.h"

#include "render/strings.h"

#include <QObject>
#include <QStringList>

#include <algorithm>
#include <string>
#include <vector>

using namespace Qt::StringLiterals;

namespace attn::ui {

// "generated 40 tokens in 12.3 ms (3,252 tokens/s): , there was a little girl ..."
QString generationNote(const attn::models::TransformerModel& model, const attn::models::TransformerRun& run,
                       double seconds) {
  const auto first = run.ids.begin() + run.prompt_tokens;
  const std::vector<int> generated(first, run.ids.end());
  std::string text;
  if (const auto* tok = model.tokenizer()) {
    text = tok->decode(generated);
  } else {
    for (const int id : generated) text += (text.empty() ? "" : " ") + std::to_string(id);
  }
  return QObject::tr("generated %1 tokens in %2 ms (%3 tokens/s, the prompt included): %4")
      .arg(generated.size())
      .arg(seconds * 1e3, 0, 'f', 1)
      .arg(seconds > 0 ? double(generated.size()) / seconds : 0.0, 0, 'f', 0)
      .arg(fromStd(text));
}

// "memory: about 12 MB estimated for the generation (the budget: 20.3 GB)": what the engine checked before it began.
QString memoryNote(const attn::models::TransformerRun& run) {
  const auto text = [](double b) {
    return b >= 1e9 ? u"%1 GB"_s.arg(b / 1e9, 0, 'f', 1) : u"%1 MB"_s.arg(b / 1e6, 0, 'f', 1);
  };
  return QObject::tr("memory: about %1 estimated for the generation (the budget: %2)")
      .arg(text(double(run.memory_estimate)), run.memory_budget ? text(double(run.memory_budget)) : u"unknown"_s);
}

// --ablate: what was ablated, and each prediction beside the unablated run's, with the change in probability.
void addAblationNotes(const TransformerJob& job, const attn::Result<attn::models::TransformerRun>& baseline,
                      const attn::models::TransformerRun& run, RenderReport& report) {
  const QString mode = job.ablateMode == attn::models::AblationMode::Mean
                           ? QObject::tr("replaced by its mean over the positions")
                           : QObject::tr("set to 0");
  report.notes.append(QObject::tr("ablated heads %1: each head's output (z = A V, before the output projection) %2 "
                                  "at every position")
                          .arg(fromStd(job.ablate), mode));
  if (!baseline) {
    report.notes.append(
        QObject::tr("without the ablation: the run failed: %1").arg(fromStd(baseline.error().message())));
    return;
  }
  for (const auto& before : baseline->predictions) {
    const auto after = std::find_if(run.predictions.begin(), run.predictions.end(),
                                    [&](const auto& p) { return p.position == before.position; });
    QStringList top;
    for (const auto& c : before.top) {
      QString change;
      if (after != run.predictions.end()) {
        const auto same =
            std::find_if(after->top.begin(), after->top.end(), [&](const auto& a) { return a.id == c.id; });
        change = same == after->top.end() ? QObject::tr(", not in the ablated top %1").arg(after->top.size())
                                          : u", ablated %1"_s.arg(double(same->probability), 0, 'f', 3);
      }
      top.append(u"%1 (%2%3)"_s.arg(fromStd(c.text)).arg(double(c.probability), 0, 'f', 3).arg(change));
    }
    report.notes.append(
        QObject::tr("without the ablation, prediction at %1: %2").arg(before.position).arg(top.join(u", "_s)));
  }
}

// The run's warnings, predictions and classes as notes; the engine's warning that the predictions are not finite
// (engine/src/models/hf/prediction_checks.cpp) goes to stderr with the other warnings, once: printed among the
// notes only, NaN probabilities would pass for predictions.
void addRunNotes(const attn::models::TransformerRun& run, RenderReport& report) {
  for (const auto& w : run.warnings) {
    if (w.starts_with("the predictions at ") && w.find(" positions are not finite ") != std::string::npos) {
      report.warnings.append(fromStd(w));
    } else {
      report.notes.append(u"warning: "_s + fromStd(w));
    }
  }
  for (const auto& p : run.predictions) {
    if (!run.labels.empty()) break;  // ViT: the classes below say the same
    QStringList top;
    for (const auto& c : p.top) top.append(u"%1 (%2)"_s.arg(fromStd(c.text)).arg(double(c.probability), 0, 'f', 3));
    report.notes.append(QObject::tr("prediction at %1: %2").arg(p.position).arg(top.join(u", "_s)));
  }
  for (const auto& label : run.labels) report.notes.append(QObject::tr("class: %1").arg(fromStd(label)));
}

}  // namespace attn::ui
