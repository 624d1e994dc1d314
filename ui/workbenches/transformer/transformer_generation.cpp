// The Transformer tab's generation (decoders): the Generate group (new tokens, temperature, top-k, top-p, seed,
// Generate / Stop, tokens per second), the scrubber over the generated tokens, and the logit lens tab.
#include "workbenches/transformer/transformer_workbench.h"

#include "render/heatmap_render.h"
#include "render/strings.h"
#include "views/logit_lens_view.h"
#include "views/token_lines_view.h"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QShortcut>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

// The end of a long continuation: what was written last is what a reader follows.
QString lastChars(const QString& text, int n) { return text.size() <= n ? text : QChar(0x2026) + text.right(n); }

}  // namespace

QGroupBox* TransformerWorkbench::buildGenerateGroup(QWidget* panel) {
  generateGroup_ = new QGroupBox(tr("Generate"), panel);
  generateGroup_->setObjectName(u"generateGroup"_s);
  auto* layout = new QVBoxLayout(generateGroup_);
  auto* form = new QFormLayout();
  newTokensSpin_ = new QSpinBox(generateGroup_);
  newTokensSpin_->setRange(1, 4096);
  newTokensSpin_->setValue(40);
  newTokensSpin_->setToolTip(tr("At most this many new tokens; generation also stops at the model's end token"));
  form->addRow(tr("&New tokens:"), newTokensSpin_);
  temperatureSpin_ = new QDoubleSpinBox(generateGroup_);
  temperatureSpin_->setRange(0.0, 5.0);
  temperatureSpin_->setSingleStep(0.1);
  temperatureSpin_->setDecimals(2);
  temperatureSpin_->setSpecialValueText(tr("0 (greedy)"));
  temperatureSpin_->setToolTip(
      tr("0 takes the most likely token every time; above 0 samples from softmax(logits / T)"));
  form->addRow(tr("Temperat&ure:"), temperatureSpin_);
  topKSpin_ = new QSpinBox(generateGroup_);
  topKSpin_->setRange(0, 100000);
  topKSpin_->setSpecialValueText(tr("all"));
  topKSpin_->setToolTip(tr("Sample among the K most likely tokens only (0: all)"));
  form->addRow(tr("Top-&k:"), topKSpin_);
  topPSpin_ = new QDoubleSpinBox(generateGroup_);
  topPSpin_->setRange(0.01, 1.0);
  topPSpin_->setSingleStep(0.05);
  topPSpin_->setValue(1.0);
  topPSpin_->setToolTip(tr("Then among the fewest tokens whose probabilities reach P"));
  form->addRow(tr("Top-p:"), topPSpin_);
  seedSpin_ = new QSpinBox(generateGroup_);
  seedSpin_->setRange(0, 1'000'000'000);
  seedSpin_->setToolTip(tr("The same seed and settings give the same tokens"));
  form->addRow(tr("Seed:"), seedSpin_);
  layout->addLayout(form);
  auto* buttons = new QHBoxLayout();
  generateButton_ = new QPushButton(tr("Gene&rate"), generateGroup_);
  generateButton_->setObjectName(u"generate"_s);
  generateButton_->setToolTip(tr("Continue the text (Ctrl+Return in the text box)"));
  stopButton_ = new QPushButton(tr("Sto&p"), generateGroup_);
  stopButton_->setObjectName(u"stopGenerating"_s);
  stopButton_->setEnabled(false);
  buttons->addWidget(generateButton_);
  buttons->addWidget(stopButton_);
  layout->addLayout(buttons);
  generationLabel_ = new QLabel(generateGroup_);
  generationLabel_->setObjectName(u"generationStatus"_s);
  generationLabel_->setWordWrap(true);
  generationLabel_->setTextFormat(Qt::PlainText);
  layout->addWidget(generationLabel_);
  scrubber_ = new QSlider(Qt::Horizontal, generateGroup_);
  scrubber_->setObjectName(u"generationScrubber"_s);
  scrubber_->setToolTip(
      tr("Pick a generated token: the views pin it as the query, its attention over the prompt "
         "and the tokens before it"));
  scrubLabel_ = new QLabel(generateGroup_);
  scrubLabel_->setTextFormat(Qt::PlainText);
  scrubLabel_->setWordWrap(true);
  layout->addWidget(scrubber_);
  layout->addWidget(scrubLabel_);
  connect(generateButton_, &QPushButton::clicked, this, &TransformerWorkbench::generate);
  connect(stopButton_, &QPushButton::clicked, this, &TransformerWorkbench::stopGenerating);
  connect(scrubber_, &QSlider::valueChanged, this, &TransformerWorkbench::scrubTo);
  connect(worker_.get(), &TransformerWorker::generationProgress, this, &TransformerWorkbench::onGenerationProgress);
  auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), textEdit_);
  shortcut->setContext(Qt::WidgetShortcut);
  shortcut->setWhatsThis(tr("Generate (in the text box)"));  // Help > Keyboard Shortcuts says it
  connect(shortcut, &QShortcut::activated, this, &TransformerWorkbench::generate);
  generateGroup_->setVisible(false);
  return generateGroup_;
}

void TransformerWorkbench::buildLensTab() {
  lensView_ = new LogitLensView(viewTabs_);
  lensView_->setPlaceholder(
      tr("The logit lens reads every layer's residual stream through the model's final norm and output embedding: "
         "what the model would predict if it stopped at that layer.\nOpen a decoder (Llama, Qwen, Gemma, Phi, "
         "Mistral) or GPT-2 to use it."));
  viewTabs_->addTab(lensView_, tr("Logit L&ens"));
  connect(viewTabs_, &QTabWidget::currentChanged, this, [this] {
    matrixActive_ = false;
    // The lens is read when its tab is in view: the run in view is read again with its hidden states.
    if (readsLens() && outcome_ && !outcome_->lens && !isGenerating()) post();  // a generated run stays one
  });
}

// Causal language models with their head generate: GPT-2 and the decoders.
bool TransformerWorkbench::generates() const {
  return source_ && source_->model && source_->model->config().causal() && source_->model->has_prediction_head();
}

attn::models::GenerateOptions TransformerWorkbench::generation() const {
  attn::models::GenerateOptions g;
  g.max_new_tokens = newTokensSpin_->value();
  g.temperature = static_cast<float>(temperatureSpin_->value());
  g.top_k = topKSpin_->value();
  g.top_p = static_cast<float>(topPSpin_->value());
  g.seed = static_cast<std::uint64_t>(seedSpin_->value());
  return g;
}

void TransformerWorkbench::setGeneration(const attn::models::GenerateOptions& g) {
  newTokensSpin_->setValue(g.max_new_tokens);
  temperatureSpin_->setValue(g.temperature);
  topKSpin_->setValue(g.top_k);
  topPSpin_->setValue(g.top_p);
  seedSpin_->setValue(static_cast<int>(std::min<std::uint64_t>(g.seed, 1'000'000'000)));
}

void TransformerWorkbench::generate() {
  if (!generates()) return;
  TransformerRequest request;
  request.text = textEdit_->toPlainText().toStdString();
  request.rollout = rolloutOptions();
  request.run.top_k = 5;
  request.lens = readsLens();
  request.run.hidden_states = request.lens;
  request.generation = generation();
  ++submitted_;
  generating_ = submitted_;
  worker_->submit(submitted_, source_, std::move(request));
  generateButton_->setEnabled(false);
  stopButton_->setEnabled(true);
  generationLabel_->setText(tr("Generating\u2026"));
  armBusy();
}

void TransformerWorkbench::stopGenerating() {
  if (!generating_) return;
  worker_->stopGeneration();
  stopButton_->setEnabled(false);
}

void TransformerWorkbench::onGenerationProgress(quint64 generation, int tokens, const QString& text, double ms) {
  if (generation != generating_) return;
  busyRow_->setProgress(tokens, std::max(tokens, newTokensSpin_->value()),
                        tr("Generating: %1 tokens \u00b7 %2 tokens/s (Cancel keeps them)")
                            .arg(tokens)
                            .arg(ms > 0 ? 1000.0 * tokens / ms : 0.0, 0, 'f', 0));
  generationLabel_->setText(tr("%1 tokens \u00b7 %2 tokens/s\n%3")
                                .arg(tokens)
                                .arg(ms > 0 ? 1000.0 * tokens / ms : 0.0, 0, 'f', 0)
                                .arg(lastChars(text, 400)));
}

void TransformerWorkbench::updateGenerationControls() {
  const bool causal = generates();
  generateGroup_->setVisible(causal);
  if (generating_ && (!outcome_ || outcome_->generation < generating_)) return;  // still running
  generating_ = 0;
  generateButton_->setEnabled(causal);
  stopButton_->setEnabled(false);
}

QString TransformerWorkbench::continuation(const attn::models::TransformerRun& run) const {
  const auto* tok = source_ && source_->model ? source_->model->tokenizer() : nullptr;
  if (run.prompt_tokens <= 0) return {};
  const std::vector<int> generated(run.ids.begin() + run.prompt_tokens, run.ids.end());
  if (tok) return fromStd(tok->decode(generated));
  QStringList ids;  // no tokenizer: the ids, as they would be typed
  for (const int id : generated) ids.append(QString::number(id));
  return tr("ids: %1").arg(ids.join(u' '));
}

// What the accepted generation was estimated to hold (its maps, hidden states and cache, checked before the first
// token against the budget), as attnscope-cli's memory note says it: " · memory about 1.2 MiB of 18.4 GiB available".
QString TransformerWorkbench::memoryText(const attn::models::TransformerRun& run) {
  if (run.memory_estimate == 0) return {};
  const QString need = dataSize(qint64(run.memory_estimate));
  if (run.memory_budget == 0) return tr(" \u00b7 memory about %1").arg(need);
  return tr(" \u00b7 memory about %1 of %2 available").arg(need, dataSize(qint64(run.memory_budget)));
}

// After an outcome: the scrubber spans its generated tokens (hidden for a plain run); a new run starts at its last
// token, a step of the same run keeps the scrubber where it is.
void TransformerWorkbench::updateScrubber() {
  const auto run = outcome_ ? outcome_->run : nullptr;
  const int generated = run && run->prompt_tokens > 0 ? static_cast<int>(run->ids.size()) - run->prompt_tokens : 0;
  scrubber_->setVisible(generated > 0);
  scrubLabel_->setVisible(generated > 0);
  if (generated == 0) {
    scrubbedRun_.reset();
    if (outcome_ && !outcome_->request.generation) generationLabel_->clear();
    return;
  }
  const double ms = outcome_->generationMs;
  generationLabel_->setText(tr("%1 tokens in %2 ms \u00b7 %3 tokens/s (the prompt included)%4\n%5")
                                .arg(generated)
                                .arg(ms, 0, 'f', 0)
                                .arg(ms > 0 ? 1000.0 * generated / ms : 0.0, 0, 'f', 0)
                                .arg(memoryText(*run))
                                .arg(lastChars(continuation(*run), 400)));
  const QSignalBlocker block(scrubber_);
  if (scrubbedRun_.lock() != run) {
    scrubbedRun_ = run;
    requestedStep_ = outcome_->request.step;
    scrubber_->setRange(0, generated - 1);
    scrubber_->setValue(std::clamp(outcome_->request.step.value_or(generated - 1), 0, generated - 1));
  }
  scrubTo(scrubber_->value());
}

// A generated token picked: pinned as the head view's query and the lens column at once; every view then shows the
// run up to it (its prefix, read by the worker from the run it keeps) and the statistics of its row.
void TransformerWorkbench::scrubTo(int step) {
  const auto* run = outcome_ ? outcome_->run.get() : nullptr;
  if (!run || run->prompt_tokens <= 0) return;
  const int generated = static_cast<int>(run->ids.size()) - run->prompt_tokens;
  step = std::clamp(step, 0, generated - 1);
  const int position = run->prompt_tokens + step;
  tokenLines_->setSelectedToken(render::TokenHit{render::TokenSide::Query, position});
  const QString token = position < static_cast<int>(run->attention.tokens.size())
                            ? render::tokenLabel(run->attention.tokens[static_cast<std::size_t>(position)], 24)
                            : QString();
  const float p = static_cast<std::size_t>(step) < run->generated_probability.size()
                      ? run->generated_probability[static_cast<std::size_t>(step)]
                      : 0.0f;
  scrubLabel_->setText(tr("Generated token %1 (0\u2013%2): %3 (p %4) at position %5; every view shows its attention "
                          "over positions 0\u2013%5")
                           .arg(step)
                           .arg(generated - 1)
                           .arg(token)
                           .arg(double(p), 0, 'f', 3)
                           .arg(position));
  if (const auto* lens = lensView_->lens()) {
    const auto it = std::find(lens->positions.begin(), lens->positions.end(), position);
    if (it != lens->positions.end()) lensView_->selectColumn(static_cast<int>(it - lens->positions.begin()));
  }
  if (requestedStep_ == step || isGenerating()) return;
  requestedStep_ = step;
  TransformerRequest request = outcome_->request;
  request.step = step;
  request.previewLayer = -1;
  ++submitted_;
  worker_->submit(submitted_, source_, std::move(request));
  armBusy();
}

bool TransformerWorkbench::readsLens() const {
  return viewTabs_->currentWidget() == lensView_ && source_ && source_->model &&
         source_->model->has_prediction_head() && source_->model->config().causal();
}

void TransformerWorkbench::updateLens() {
  if (!outcome_ || !outcome_->lens) {
    const bool can = source_ && source_->model && source_->model->config().causal();
    lensView_->setLens(nullptr, {});
    if (outcome_ && !outcome_->lensError.isEmpty()) lensView_->setPlaceholder(outcome_->lensError);
    if (!can) {
      lensView_->setPlaceholder(
          tr("The logit lens reads every layer's residual stream through the model's final norm "
             "and output embedding.\nOpen a decoder (Llama, Qwen, Gemma, Phi, Mistral) or "
             "GPT-2 to use it."));
    }
    return;
  }
  QStringList tokens;
  for (const auto& t : outcome_->run->attention.tokens) tokens.append(render::tokenLabel(t, 24));
  lensView_->setLens(outcome_->lens, tokens);
}

}  // namespace attn::ui
