#include "workbenches/alignment_speech.h"

#include "views/audio_playback.h"
#include "views/speech_view.h"
#include "workbenches/alignment_workbench.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
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
  audioButton_ = new QPushButton(tr("Open &Audio File\u2026"), parent);
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
