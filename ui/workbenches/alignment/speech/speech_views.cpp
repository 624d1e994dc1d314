// A speech model's views (speech_views.h): the spectrogram with the step's attention, playback, the audio file, the
// shaping of the weights.
#include "workbenches/alignment/speech/speech_views.h"

#include "workbenches/alignment/speech/speech_session.h"
#include "views/audio_playback.h"
#include "views/speech_view.h"
#include "workbenches/alignment/alignment_step_page.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

std::unique_ptr<AlignmentViews> makeSpeechViews(const AlignmentPage& page, QObject* parent) {
  return std::make_unique<SpeechViews>(page, parent);
}

void SpeechViews::buildSteps(AlignmentStepPage& steps, QVBoxLayout& column) {
  Seq2SeqViews::buildSteps(steps, column);
  speechPanel_ = new QWidget(&steps);
  speechPanel_->hide();
  auto* panel = new QVBoxLayout(speechPanel_);
  panel->setContentsMargins(0, 0, 0, 0);
  auto* row = new QHBoxLayout();
  playButton_ = new QPushButton(tr("\u25b6 &Play"), speechPanel_);
  playButton_->setObjectName(u"alignmentPlay"_s);
  playbackLabel_ = new QLabel(speechPanel_);
  playbackLabel_->setObjectName(u"alignmentPlayback"_s);
  playbackLabel_->setTextFormat(Qt::PlainText);
  row->addWidget(playButton_);
  row->addWidget(playbackLabel_, 1);
  panel->addLayout(row);
  speechView_ = new SpeechView(speechPanel_);
  speechView_->setObjectName(u"alignmentSpeech"_s);
  panel->addWidget(speechView_, 1);
  column.addWidget(speechPanel_);
  connect(speechView_, &SpeechView::stepClicked, this, &AlignmentViews::stepClicked);

  playback_ = new AudioPlayback(this);
  if (AudioPlayback::builtIn()) {
    playButton_->setToolTip(
        tr("Play the audio (Alt+P; again to stop): a line follows the time heard over the spectrogram, and the "
           "step moves to the phoneme that attends there, so its attended frames follow the sound."));
  } else {
    playButton_->setEnabled(false);
    playButton_->setToolTip(AudioPlayback::unavailableText());
    playbackLabel_->setText(AudioPlayback::unavailableText());
  }
  connect(playButton_, &QPushButton::clicked, this, &SpeechViews::play);
  connect(playback_, &AudioPlayback::positionChanged, this, &SpeechViews::followPlayback);
  connect(playback_, &AudioPlayback::finished, this, [this](const QString& error) {
    playButton_->setText(tr("\u25b6 &Play"));
    speechView_->setPlayhead(-1.0);
    playbackLabel_->setText(error.isEmpty() && speechView_->input() ? playbackTime(-1.0) : error);
  });
}

void SpeechViews::play() {
  if (playback_->isPlaying()) {
    playback_->stop();
    return;
  }
  if (!speechView_->input()) return;
  QString error;
  if (!playback_->play(speechView_->input()->audio.samples, attn::audio::kSampleRate, &error)) {
    playbackLabel_->setText(error);
    return;
  }
  playButton_->setText(tr("\u25a0 Sto&p"));
  followPlayback(0.0);
}

QString SpeechViews::playbackTime(double seconds) const {
  const double total = speechView_->input() ? speechView_->input()->audio.seconds() : 0.0;
  if (seconds < 0.0) return tr("%1 s of audio").arg(total, 0, 'f', 2);
  return tr("%1 / %2 s").arg(std::min(seconds, total), 0, 'f', 2).arg(total, 0, 'f', 2);
}

void SpeechViews::followPlayback(double seconds) {
  if (!speechView_->input()) return;
  speechView_->setPlayhead(seconds);
  playbackLabel_->setText(playbackTime(seconds));
  const int step = speechView_->stepAt(seconds);
  if (step >= 0) emit stepRequested(step);
}

void SpeechViews::buildInput(QWidget* group, QVBoxLayout& layout) {
  audioButton_ = new QPushButton(tr("Open Au&dio File\u2026"), group);
  audioButton_->setObjectName(u"alignmentOpenAudio"_s);
  audioButton_->setToolTip(
      tr("Recognise a recording instead of the typed words (WAV, FLAC, Ogg or AIFF; mixed to "
         "mono, resampled to 16 kHz, cut at 10 minutes). Typing says the words again. The model "
         "knows espeak-ng's synthetic voices, not human ones."));
  audioButton_->hide();
  connect(audioButton_, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(qobject_cast<QWidget*>(parent()), tr("Open Audio File"), QString(),
                                     tr("Audio (*.wav *.flac *.ogg *.aiff *.aif);;All files (*)"));
    if (!path.isEmpty()) openAudio(path);
  });
  layout.addWidget(audioButton_);
}

void SpeechViews::buildSide(QWidget* parent, QVBoxLayout& layout) {
  shapingGroup_ = new QGroupBox(tr("Attention weights"), parent);
  shapingGroup_->setObjectName(u"alignmentShaping"_s);
  shapingGroup_->hide();
  auto* form = new QFormLayout(shapingGroup_);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  sharpenSpin_ = new QDoubleSpinBox(shapingGroup_);
  sharpenSpin_->setObjectName(u"alignmentSharpen"_s);
  sharpenSpin_->setRange(0.1, 20.0);
  sharpenSpin_->setSingleStep(0.25);
  sharpenSpin_->setDecimals(2);
  sharpenSpin_->setValue(1.0);
  sharpenSpin_->setToolTip(
      tr("Sharpening (Chorowski et al. 2015): the weights are softmax(\u03b2 e). Above 1 the attention narrows "
         "onto its best frames, below 1 it spreads; 1 is the model's own."));
  smoothCheck_ = new QCheckBox(tr("Smooth: s&igmoid instead of softmax"), shapingGroup_);
  smoothCheck_->setObjectName(u"alignmentSmooth"_s);
  smoothCheck_->setToolTip(
      tr("Smoothing (Chorowski et al. 2015): sigmoid(e) / sum sigmoid(e), which spreads the weight over every "
         "frame that scores well. This model was not trained with it: it loses its place and repeats."));
  const auto stepsSpin = [this](const QString& name) {  // 0: every step
    auto* spin = new QSpinBox(shapingGroup_);
    spin->setObjectName(name);
    spin->setRange(0, 1000);
    spin->setSpecialValueText(tr("every step"));
    return spin;
  };
  topKSpin_ = stepsSpin(u"alignmentTopK"_s);
  topKSpin_->setToolTip(
      tr("Only the k encoder steps (30 ms each) with the highest scores are attended, "
         "their weights renormalised."));
  windowSpin_ = stepsSpin(u"alignmentWindow"_s);
  windowSpin_->setPrefix(tr("\u00b1 "));
  windowSpin_->setSuffix(tr(" steps"));
  windowSpin_->setToolTip(
      tr("Only the encoder steps within this many of the median of the previous step's attention (where it "
         "was), as Bahdanau et al. 2016 decode long utterances."));
  auto* note = new QLabel(tr("The model learnt with the plain softmax over every step: anything else is an "
                             "experiment on how it reads."),
                          shapingGroup_);
  note->setWordWrap(true);
  note->setForegroundRole(QPalette::PlaceholderText);
  auto* reset = new QPushButton(tr("The Model's &Own"), shapingGroup_);
  reset->setObjectName(u"alignmentShapingReset"_s);
  reset->setToolTip(tr("Back to the softmax over every step"));
  form->addRow(tr("Sharpen &\u03b2:"), sharpenSpin_);
  form->addRow(smoothCheck_);
  form->addRow(tr("Top &k:"), topKSpin_);
  form->addRow(tr("Wi&ndow:"), windowSpin_);
  form->addRow(note);
  form->addRow(reset);
  connect(sharpenSpin_, &QDoubleSpinBox::valueChanged, this, &AlignmentViews::inputChanged);
  connect(smoothCheck_, &QCheckBox::toggled, this, [this](bool smooth) {
    sharpenSpin_->setEnabled(!smooth);  // the sigmoid has no beta
    emit inputChanged();
  });
  connect(topKSpin_, &QSpinBox::valueChanged, this, &AlignmentViews::inputChanged);
  connect(windowSpin_, &QSpinBox::valueChanged, this, &AlignmentViews::inputChanged);
  connect(reset, &QPushButton::clicked, this, [this] { setShaping({}); });
  layout.addWidget(shapingGroup_);
}

void SpeechViews::setOpen(bool open) {
  speechPanel_->setVisible(open);
  audioButton_->setVisible(open);
  shapingGroup_->setVisible(open);
  playback_->stop();
  speechView_->clear();
  if (!open) {
    audioPath_.clear();
    return;
  }
  steps_->figureView()->setVisible(false);  // the spectrogram instead
}

void SpeechViews::setShapingWidgets(const attn::models::AttentionShaping& shaping) {
  const QSignalBlocker a(sharpenSpin_), b(smoothCheck_), c(topKSpin_), d(windowSpin_);
  sharpenSpin_->setValue(double(shaping.sharpen));
  smoothCheck_->setChecked(shaping.smooth);
  sharpenSpin_->setEnabled(!shaping.smooth);
  topKSpin_->setValue(shaping.top_k);
  windowSpin_->setValue(shaping.window);
}

void SpeechViews::setShaping(const attn::models::AttentionShaping& shaping) {
  if (shaping == this->shaping()) return;
  setShapingWidgets(shaping);
  emit inputChanged();
}

attn::models::AttentionShaping SpeechViews::shaping() const {
  attn::models::AttentionShaping s;
  s.smooth = smoothCheck_->isChecked();
  s.sharpen = s.smooth ? 1.0f : float(sharpenSpin_->value());
  s.top_k = topKSpin_->value();
  s.window = windowSpin_->value();
  return s;
}

void SpeechViews::openAudio(const QString& path) {
  audioPath_ = path;
  emit inputChanged();
}

void SpeechViews::addToRequest(AlignmentRequest& request) const {
  request.wavPath = audioPath_;
  request.shaping = shaping();
}

void SpeechViews::save(AlignmentSection& section, const QString& /*pair*/) const {
  setSpeechShaping(section, shaping());
}

void SpeechViews::restore(const AlignmentSection& section, QString& /*pair*/) {
  if (const auto saved = speechShaping(section); saved != shaping()) setShapingWidgets(saved);
}

void SpeechViews::showFigure(const AlignmentViewState& state, const render::DecodingFigureOptions& options) {
  const auto& outcome = state.outcome;
  if (!outcome->speech) {
    Seq2SeqViews::showFigure(state, options);
    return;
  }
  if (speechView_->input() != outcome->speech) {  // another input: what plays is not its audio
    playback_->stop();
    if (AudioPlayback::builtIn()) {
      playbackLabel_->setText(tr("%1 s of audio").arg(outcome->speech->audio.seconds(), 0, 'f', 2));
    }
  }
  speechView_->setColormap(state.colormap);
  speechView_->setRun(outcome->speech, outcome->seq2seq, state.hypothesis);
  speechView_->setStep(state.step);
}

}  // namespace attn::ui
