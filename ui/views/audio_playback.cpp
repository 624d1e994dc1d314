#include "views/audio_playback.h"

#include <algorithm>
#include <cmath>
#include <utility>

#if ATTN_HAVE_MULTIMEDIA
#include <QAudioDevice>
#include <QAudioFormat>
#include <QAudioSink>
#include <QBuffer>
#include <QByteArray>
#include <QMediaDevices>
#include <QTimer>
#endif

namespace attn::ui {

#if ATTN_HAVE_MULTIMEDIA

struct AudioPlayback::Impl {
  QByteArray pcm;  // 16-bit signed samples, what the sink reads through `buffer`
  QBuffer buffer;
  QAudioSink* sink = nullptr;  // a child of the AudioPlayback while it plays; deleted later once stopped
  QTimer ticker;
  int bytesPerSecond = 0;
};

AudioPlayback::AudioPlayback(QObject* parent) : QObject(parent), impl_(std::make_unique<Impl>()) {
  impl_->ticker.setInterval(30);
  connect(&impl_->ticker, &QTimer::timeout, this, [this] {
    if (!impl_->sink || impl_->bytesPerSecond <= 0) return;
    // processedUSecs() counts what the output has taken; what it holds in its buffer is still to be heard.
    const qint64 held = std::max<qint64>(0, impl_->sink->bufferSize() - impl_->sink->bytesFree());
    const double seconds = double(impl_->sink->processedUSecs()) / 1e6 - double(held) / impl_->bytesPerSecond;
    emit positionChanged(std::max(0.0, seconds));
  });
}

AudioPlayback::~AudioPlayback() {
  // The sinks (the one playing, and stopped ones whose deleteLater has not run) go before the buffer they read.
  for (QAudioSink* sink : findChildren<QAudioSink*>(Qt::FindDirectChildrenOnly)) {
    const QSignalBlocker block(sink);
    sink->stop();
    delete sink;
  }
}

bool AudioPlayback::builtIn() { return true; }

QString AudioPlayback::unavailableText() { return QString(); }

bool AudioPlayback::play(std::span<const float> samples, int rate, QString* error) {
  stop();
  const QAudioDevice device = QMediaDevices::defaultAudioOutput();
  if (device.isNull()) {
    *error = tr("No audio output: the audio system (PulseAudio or PipeWire) has no output device, or is not running.");
    return false;
  }
  QAudioFormat format;
  format.setSampleRate(rate);
  format.setChannelCount(1);
  format.setSampleFormat(QAudioFormat::Int16);
  if (!device.isFormatSupported(format)) {
    *error = tr("The audio output \u201c%1\u201d does not play %2 Hz mono 16-bit audio.")
                 .arg(device.description())
                 .arg(rate);
    return false;
  }
  impl_->pcm.resize(qsizetype(samples.size() * sizeof(qint16)));
  auto* out = reinterpret_cast<qint16*>(impl_->pcm.data());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    out[i] = qint16(std::lround(std::clamp(samples[i], -1.0f, 1.0f) * 32767.0f));
  }
  impl_->buffer.setBuffer(&impl_->pcm);
  impl_->buffer.open(QIODevice::ReadOnly);
  impl_->bytesPerSecond = rate * int(sizeof(qint16));
  impl_->sink = new QAudioSink(device, format, this);
  connect(impl_->sink, &QAudioSink::stateChanged, this, [this](QAudio::State state) {
    if (!impl_->sink) return;
    if (state == QAudio::IdleState) {  // everything was taken: the end
      emit positionChanged(double(impl_->pcm.size()) / impl_->bytesPerSecond);
      stop();
    } else if (state == QAudio::StoppedState && impl_->sink->error() != QAudio::NoError) {
      end(impl_->sink->error() == QAudio::OpenError ? tr("The audio output could not be opened.")
                                                    : tr("The audio output failed while playing."));
    }
  });
  impl_->sink->start(&impl_->buffer);
  if (impl_->sink->error() != QAudio::NoError) {
    delete std::exchange(impl_->sink, nullptr);
    impl_->buffer.close();
    *error = tr("The audio output \u201c%1\u201d could not be opened.").arg(device.description());
    return false;
  }
  impl_->ticker.start();
  return true;
}

void AudioPlayback::stop() { end(QString()); }

void AudioPlayback::end(const QString& error) {
  if (!impl_->sink) return;
  impl_->ticker.stop();
  QAudioSink* sink = std::exchange(impl_->sink, nullptr);
  {
    const QSignalBlocker block(sink);
    sink->stop();
  }
  sink->deleteLater();  // not now: stop() may be called from the sink's own stateChanged
  impl_->buffer.close();
  emit finished(error);
}

bool AudioPlayback::isPlaying() const { return impl_->sink != nullptr; }

#else  // built without Qt Multimedia

struct AudioPlayback::Impl {};

AudioPlayback::AudioPlayback(QObject* parent) : QObject(parent), impl_(std::make_unique<Impl>()) {}
AudioPlayback::~AudioPlayback() = default;

bool AudioPlayback::builtIn() { return false; }

QString AudioPlayback::unavailableText() {
  return tr("This build has no Qt Multimedia (Debian's qt6-multimedia-dev when it was built): no playback.");
}

bool AudioPlayback::play(std::span<const float>, int, QString* error) {
  *error = unavailableText();
  return false;
}

void AudioPlayback::stop() {}
void AudioPlayback::end(const QString&) {}
bool AudioPlayback::isPlaying() const { return false; }

#endif

}  // namespace attn::ui
