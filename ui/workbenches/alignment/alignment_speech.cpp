#include "workbenches/alignment/alignment_speech.h"

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

#include <cctype>
#include <string>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

// A paste of a book would be said whole before a model heard its first 30 s: the words up to the kMaxSaidWords-th,
// and none that starts past kMaxSaidBytes, are said (a single word longer than twice that is cut inside). 150 words
// of en-us are about 38 s of speech, said in about 0.3 s here; the bundled model reads 30 s.
constexpr int kMaxSaidWords = 150;
constexpr std::size_t kMaxSaidBytes = 1500;

std::size_t sayableLength(const std::string& text) {
  const auto space = [&](std::size_t i) { return std::isspace(static_cast<unsigned char>(text[i])) != 0; };
  int words = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (space(i) || (i > 0 && !space(i - 1))) continue;  // not the start of a word
    if (++words > kMaxSaidWords || (i >= kMaxSaidBytes && words > 1)) return i;
  }
  if (text.size() <= 2 * kMaxSaidBytes) return text.size();
  std::size_t cut = 2 * kMaxSaidBytes;  // one giant word: cut inside it, on a UTF-8 character's first byte
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

}  // namespace

attn::Result<SpeechInput> speechInput(const std::string& text, const QString& wavPath, const std::string& voice) {
  SpeechInput input;
  if (!wavPath.isEmpty()) {
    auto read = attn::audio::read_audio(wavPath.toStdString());
    if (!read) return std::unexpected(read.error());
    input.audio = std::move(*read);
    input.file = wavPath;
  } else {
    const std::size_t cut = sayableLength(text);
    const std::string said = text.substr(0, cut);
    auto speech = attn::audio::synthesise(said, attn::audio::Voice{voice});
    if (!speech) return std::unexpected(speech.error());
    input.audio = std::move(speech->audio);
    input.phonemes = std::move(speech->phonemes);
    input.voice = QString::fromStdString(voice);
    if (cut < text.size()) {
      input.audio.warnings.push_back("said the first " + std::to_string(cut) + " bytes of the text's " +
                                     std::to_string(text.size()) + " (at most " + std::to_string(kMaxSaidWords) +
                                     " words or " + std::to_string(kMaxSaidBytes) + " bytes are said)");
    }
  }
  input.logMel = attn::audio::log_mel(input.audio.samples);
  return input;
}

}  // namespace attn::ui

// ---- the Alignment tab's speech page ----

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
  connect(speechView_, &SpeechView::stepClicked, this, &AlignmentWorkbench::setStep);

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
