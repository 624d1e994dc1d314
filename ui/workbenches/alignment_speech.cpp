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

using namespace Qt::StringLiterals;

namespace attn::ui {

attn::Result<SpeechInput> speechInput(const std::string& text, const QString& wavPath, const std::string& voice) {
  SpeechInput input;
  if (!wavPath.isEmpty()) {
    auto read = attn::audio::read_audio(wavPath.toStdString());
    if (!read) return std::unexpected(read.error());
    input.audio = std::move(*read);
    input.file = wavPath;
  } else {
    auto said = attn::audio::synthesise(text, attn::audio::Voice{voice});
    if (!said) return std::unexpected(said.error());
    input.audio = std::move(said->audio);
    input.phonemes = std::move(said->phonemes);
    input.voice = QString::fromStdString(voice);
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
