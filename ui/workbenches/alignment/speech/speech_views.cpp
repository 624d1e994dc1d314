#include "views/audio_playback.h"
#include "views/speech_view.h"
#include "workbenches/alignment/alignment_workbench.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

// The speech page's widgets: the spectrogram with the step's attention, playback, the audio file, the shaping.
namespace attn::ui {

QWidget* AlignmentWorkbench::makeSpeechView() {
  speechPanel_ = new QWidget(decodingPage_);
  speechPanel_->hide();
  auto* column = new QVBoxLayout(speechPanel_);
  column->setContentsMargins(0, 0, 0, 0);
  auto* row = new QHBoxLayout();
  playButton_ = new QPushButton(tr("\u25b6 &Play"), speechPanel_);
  playButton_->setObjectName(u"alignmentPlay"_s);
  playbackLabel_ = new QLabel(speechPanel_);
  playbackLabel_->setObjectName(u"alignmentPlayback"_s);
  playbackLabel_->setTextFormat(Qt::PlainText);
  row->addWidget(playButton_);
  row->addWidget(playbackLabel_, 1);
  column->addLayout(row);
  speechView_ = new SpeechView(speechPanel_);
  column->addWidget(speechView_, 1);
  connect(speechView_, &SpeechView::stepClicked, this, &AlignmentWorkbench::goToClickedStep);

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
  connect(playButton_, &QPushButton::clicked, this, [this] {
    if (playback_->isPlaying()) {
      playback_->stop();
      return;
    }
    if (!outcome_ || !outcome_->speech) return;
    QString error;
    if (!playback_->play(outcome_->speech->audio.samples, attn::audio::kSampleRate, &error)) {
      playbackLabel_->setText(error);
      return;
    }
    playButton_->setText(tr("\u25a0 Sto&p"));
    followPlayback(0.0);
  });
  connect(playback_, &AudioPlayback::positionChanged, this, &AlignmentWorkbench::followPlayback);
  connect(playback_, &AudioPlayback::finished, this, [this](const QString& error) {
    playButton_->setText(tr("\u25b6 &Play"));
    speechView_->setPlayhead(-1.0);
    playbackLabel_->setText(error.isEmpty() && outcome_ && outcome_->speech ? playbackTime(-1.0) : error);
  });
  return speechPanel_;
}

QString AlignmentWorkbench::playbackTime(double seconds) const {
  const double total = outcome_ && outcome_->speech ? outcome_->speech->audio.seconds() : 0.0;
  if (seconds < 0.0) return tr("%1 s of audio").arg(total, 0, 'f', 2);
  return tr("%1 / %2 s").arg(std::min(seconds, total), 0, 'f', 2).arg(total, 0, 'f', 2);
}

void AlignmentWorkbench::followPlayback(double seconds) {
  if (!outcome_ || !outcome_->speech) return;
  speechView_->setPlayhead(seconds);
  playbackLabel_->setText(playbackTime(seconds));
  const int step = speechView_->stepAt(seconds);
  if (step >= 0) setStep(step);
}

void AlignmentWorkbench::stopPlayback() { playback_->stop(); }

QPushButton* AlignmentWorkbench::makeAudioButton(QWidget* parent) {
  audioButton_ = new QPushButton(tr("Open Au&dio File\u2026"), parent);
  audioButton_->setObjectName(u"alignmentOpenAudio"_s);
  audioButton_->setToolTip(
      tr("Recognise a recording instead of the typed words (WAV, FLAC, Ogg or AIFF; mixed to "
         "mono, resampled to 16 kHz, cut at 10 minutes). Typing says the words again. The model "
         "knows espeak-ng's synthetic voices, not human ones."));
  audioButton_->hide();
  connect(audioButton_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Audio File"), QString(),
                                                      tr("Audio (*.wav *.flac *.ogg *.aiff *.aif);;All files (*)"));
    if (!path.isEmpty()) openAudio(path);
  });
  connect(textEdit_, &QPlainTextEdit::textChanged, this, [this] { audioPath_.clear(); });
  return audioButton_;
}

QGroupBox* AlignmentWorkbench::makeShapingGroup(QWidget* parent) {
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
  connect(sharpenSpin_, &QDoubleSpinBox::valueChanged, this, &AlignmentWorkbench::post);
  connect(smoothCheck_, &QCheckBox::toggled, this, [this](bool smooth) {
    sharpenSpin_->setEnabled(!smooth);  // the sigmoid has no beta
    post();
  });
  connect(topKSpin_, &QSpinBox::valueChanged, this, &AlignmentWorkbench::post);
  connect(windowSpin_, &QSpinBox::valueChanged, this, &AlignmentWorkbench::post);
  connect(reset, &QPushButton::clicked, this, [this] { setShaping({}); });
  return shapingGroup_;
}

void AlignmentWorkbench::setShaping(const attn::models::AttentionShaping& shaping) {
  if (shaping == this->shaping()) return;
  {
    const QSignalBlocker a(sharpenSpin_), b(smoothCheck_), c(topKSpin_), d(windowSpin_);
    sharpenSpin_->setValue(double(shaping.sharpen));
    smoothCheck_->setChecked(shaping.smooth);
    sharpenSpin_->setEnabled(!shaping.smooth);
    topKSpin_->setValue(shaping.top_k);
    windowSpin_->setValue(shaping.window);
  }
  post();
}

attn::models::AttentionShaping AlignmentWorkbench::shaping() const {
  attn::models::AttentionShaping s;
  s.smooth = smoothCheck_->isChecked();
  s.sharpen = s.smooth ? 1.0f : float(sharpenSpin_->value());
  s.top_k = topKSpin_->value();
  s.window = windowSpin_->value();
  return s;
}

void AlignmentWorkbench::openAudio(const QString& path) {
  audioPath_ = path;
  post();
}

void AlignmentWorkbench::updateSpeechView() {
  if (speechView_->input() != outcome_->speech) {  // another input: what plays is not its audio
    playback_->stop();
    if (AudioPlayback::builtIn()) playbackLabel_->setText(playbackTime(-1.0));
  }
  speechView_->setColormap(colormap_);
  speechView_->setRun(outcome_->speech, outcome_->seq2seq, hypothesis_);
  speechView_->setStep(step_);
}

}  // namespace attn::ui
