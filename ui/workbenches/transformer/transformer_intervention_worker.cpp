// The Transformer tab's interventions on the worker thread: head ablation as a re-run of a captured plain run
// (TransformerRunner::rerun: nothing before the first ablated layer is recomputed) and the Compare input's run.
#include "workbenches/transformer/transformer_worker.h"

#include "render/strings.h"

#include <QObject>

namespace attn::ui {

bool sameIntervention(const TransformerRequest& a, const TransformerRequest& b) {
  return a.ablated == b.ablated && (a.ablated.empty() || a.ablationMode == b.ablationMode) && a.compare == b.compare;
}

namespace {

// A run's token count.
std::size_t tokenCount(const attn::models::TransformerRun& run) { return run.attention.tokens.size(); }

}  // namespace

attn::Result<attn::models::TransformerRun> TransformerWorker::intervene(quint64 sourceSerial,
                                                                        const TransformerRequest& request,
                                                                        attn::models::RunOptions options,
                                                                        TransformerOutcome& outcome) {
  using attn::models::AblationMode;
  const bool resample = !request.ablated.empty() && request.ablationMode == AblationMode::Resample;
  const bool sameSource = last_ && last_->sourceSerial == sourceSerial && last_->ok();
  // Runs after the plain one: stopped by Cancel or a newer request between layers, no preview of their layers.
  attn::models::RunOptions quiet = options;
  quiet.on_layer = [this](const attn::LayeredTrace&) { return !cancelRun_.load() && !runWaiting_.load(); };
  quiet.on_progress = {};
  quiet.previous = nullptr;

  // The Compare input's run (captured when resample takes its head outputs).
  if (request.compare) {
    if (sameSource && last_->compareRun && last_->request.compare == request.compare &&
        (!resample || last_->compareRun->activations)) {
      outcome.compareRun = last_->compareRun;
    } else {
      auto compareOptions = quiet;
      compareOptions.capture = resample;
      auto compared = runner_->run_text(*request.compare, {}, compareOptions);
      if (!compared) {
        if (compared.error().kind == attn::ErrorKind::Cancelled) return std::unexpected(compared.error());
        outcome.interventionError =
            QObject::tr("the Compare input cannot run: %1").arg(fromStd(compared.error().message()));
      } else {
        outcome.compareRun = std::make_shared<attn::models::TransformerRun>(std::move(*compared));
      }
    }
  }
  if (request.ablated.empty()) return runText(sourceSerial, request, options);

  // The plain run, captured: re-used while only the ablated heads or the mode change.
  std::shared_ptr<const attn::models::TransformerRun> plain;
  if (sameSource && last_->plainRun && last_->plainRun->activations && last_->request.text == request.text &&
      last_->request.pair == request.pair) {
    plain = last_->plainRun;
  } else {
    options.capture = true;
    auto result = runText(sourceSerial, request, options);
    if (!result) return result;
    plain = std::make_shared<attn::models::TransformerRun>(std::move(*result));
  }
  outcome.plainRun = plain;

  const attn::models::Activations* source = nullptr;
  if (resample) {
    if (!outcome.compareRun || !outcome.compareRun->activations) {
      outcome.interventionError = QObject::tr("resample ablation takes the Compare input's run: turn Compare on");
      return *plain;
    }
    if (tokenCount(*outcome.compareRun) != tokenCount(*plain)) {
      outcome.interventionError = QObject::tr(
                                      "resample ablation needs inputs of the same token count: A is %1 "
                                      "tokens, B is %2")
                                      .arg(tokenCount(*plain))
                                      .arg(tokenCount(*outcome.compareRun));
      return *plain;
    }
    source = outcome.compareRun->activations.get();
  }
  for (const auto& head : request.ablated) {
    const auto& config = source_->model->config();
    if (head.layer < 0 || head.layer >= config.layers || head.head < 0 || head.head >= config.heads) {
      outcome.interventionError =
          QObject::tr("head %1.%2 is not in this model (%3 layers x %4 heads): nothing is ablated")
              .arg(head.layer)
              .arg(head.head)
              .arg(config.layers)
              .arg(config.heads);
      return *plain;
    }
  }
  auto rerunOptions = quiet;
  rerunOptions.capture = false;
  rerunOptions.edits = attn::models::ablation_edits(request.ablated, request.ablationMode, source);
  return runner_->rerun(*plain, rerunOptions);
}

}  // namespace attn::ui
