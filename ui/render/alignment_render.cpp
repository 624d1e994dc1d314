#include "render/alignment_render.h"
#include "render/strings.h"

#include "render/heatmap_render.h"
#include "render/token_lines_render.h"

#include <QCoreApplication>

#include <algorithm>
#include <functional>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui::render {
namespace {

// This file's texts, under the translation context "AlignmentRender" (Qt's AlignmentRender::tr() outside a QObject).
struct AlignmentRender {
  Q_DECLARE_TR_FUNCTIONS(AlignmentRender)
};

// Code points in `text` (what a user calls characters here: the models read one per code point).
int codePoints(const QString& text) {
  int n = 0;
  for (qsizetype i = 0; i < text.size(); ++i) {
    if (!text[i].isLowSurrogate()) ++n;
  }
  return n;
}

}  // namespace

QString percentText(float p) {
  if (p > 0.9995f && p < 1.0f) return u"> 99.9 %"_s;
  if (p < 0.0005f && p > 0.0f) return u"< 0.1 %"_s;
  return QString::number(100.0 * double(p), 'f', 1) + u" %"_s;
}

QString logProbText(float logProb) {
  const double v = double(logProb);
  if (v != 0.0 && std::abs(v) < 0.0005) return QString::number(v, 'g', 2);
  return QString::number(v, 'f', 3);
}

attn::Labels sourceColumnLabels(const attn::models::Seq2SeqRun& run) {
  attn::Labels labels = run.source;
  for (std::size_t j = 0; j < labels.size() && j < run.unknown.size(); ++j) {
    if (run.unknown[j]) labels[j] += " (unk)";
  }
  return labels;
}

namespace {

// "0–N" (the range of N + 1 indices), for labels such as "step 5 (0–10)".
QString indexRange(std::size_t count) { return count > 0 ? u"0\u2013%1"_s.arg(count - 1) : u"none"_s; }

// The decoded output: one range per step, "</s>" for the end, the step in view in focus.
ShadedText outputShading(const attn::models::Seq2SeqRun& run, std::size_t hypothesis, int step, Colormap colormap) {
  const auto& hyp = run.hypotheses[hypothesis];
  const int steps = int(hyp.ids.size());
  ShadedText output;
  const QString outputText = fromStd(hyp.text);
  output.large = true;
  output.caption = run.hypotheses.size() > 1
                       ? AlignmentRender::tr("Output \u00b7 hypothesis %1 (%2) \u00b7 log p %3")
                             .arg(hypothesis)
                             .arg(indexRange(run.hypotheses.size()))
                             .arg(logProbText(hyp.log_prob))
                       : AlignmentRender::tr("Output \u00b7 log p %1").arg(logProbText(hyp.log_prob));
  output.text = outputText;
  output.colormap = colormap;
  int at = 0;
  for (int t = 0; t < steps; ++t) {
    ShadedRange range;
    const bool end = hyp.finished && t == steps - 1;
    if (end) {
      output.text += u" </s>"_s;
      range.begin = int(output.text.size()) - 4;
      range.end = int(output.text.size());
      range.toolTip = AlignmentRender::tr("step %1: the end of the output (</s>)").arg(t);
    } else {
      if (at >= outputText.size()) break;
      range.begin = at;
      if (run.words) {
        // hyp.text is the labels with a space between.
        at += int(fromStd(hyp.labels[std::size_t(t)]).size());
        range.end = at++;
      } else {
        at += outputText[at].isHighSurrogate() && at + 1 < outputText.size() ? 2 : 1;
        range.end = at;
      }
      range.toolTip =
          AlignmentRender::tr("step %1: %2").arg(t).arg(quoted(outputText.mid(range.begin, range.end - range.begin)));
    }
    range.focus = t == step;
    output.ranges.push_back(range);
  }
  if (!hyp.finished) {
    output.tail = run.words ? AlignmentRender::tr("(no end within %1 words)").arg(steps)
                            : AlignmentRender::tr("(no end within %1 characters)").arg(steps);
  }
  return output;
}

// The source shaded by the step's row of attention; `unknown` counts the characters outside the vocabulary.
ShadedText sourceShading(const attn::models::Seq2SeqRun& run, std::size_t hypothesis, int step, std::string_view input,
                         const DecodingFigureOptions& options, int& unknown) {
  const auto& hyp = run.hypotheses[hypothesis];
  ShadedText source;
  source.large = true;
  source.colormap = options.colormap;
  std::size_t shown = run.spans.empty() ? input.size() : std::size_t(std::max(0, run.spans.back().end));
  int restWords = 0;  // a word model's words after the last one read (truncated)
  if (run.words && shown < input.size()) {
    for (const auto& w : attn::models::split_words(input.substr(shown)).words)
      restWords += w != "." && w != "!" && w != "?";
    if (restWords == 0) shown = input.size();  // only punctuation after the last word: shown as typed
  }
  const Utf16Text text = toUtf16(input.substr(0, std::min(shown, input.size())));
  source.text = text.text;
  const bool haveRow = step >= 0 && step < hyp.attention.rows();
  // Relative to the step's own largest weight: a step that spreads its attention still shows where it
  // looks most (the heatmap next to it keeps the absolute scale; the tool tips give the exact weights).
  source.scale = haveRow && hyp.attention.cols() > 0 ? std::max(hyp.attention.row(step).maxCoeff(), 1e-6f) : 1.0f;
  const bool local = options.window > 0 && step >= 0 && std::size_t(step) < hyp.positions.size();
  const double p = local ? double(hyp.positions[std::size_t(step)]) : 0.0;
  unknown = 0;
  for (std::size_t j = 0; j < run.spans.size(); ++j) {
    const auto& span = run.spans[j];
    if (span.begin < 0 || std::size_t(span.end) >= text.offsets.size() || span.end <= span.begin) continue;
    ShadedRange range;
    range.begin = text.offsets[std::size_t(span.begin)];
    range.end = text.offsets[std::size_t(span.end)];
    range.weight = haveRow && Index(j) < hyp.attention.cols() ? hyp.attention(step, Index(j)) : 0.0f;
    range.unknown = j < run.unknown.size() && run.unknown[j];
    range.marked = local && std::abs(double(j) - p) <= double(options.window);
    const QString character = tokenLabel(j < run.source.size() ? run.source[j] : std::string());
    range.toolTip = range.unknown
                        ? AlignmentRender::tr("%1 (position %2) is not in the vocabulary: read as <unk>\nweight %3")
                              .arg(quoted(character))
                              .arg(j)
                              .arg(exactValue(range.weight))
                        : AlignmentRender::tr("%1 (position %2)\nweight %3")
                              .arg(quoted(character))
                              .arg(j)
                              .arg(exactValue(range.weight));
    if (range.unknown) ++unknown;
    source.ranges.push_back(range);
  }
  if (shown < input.size() && run.words) {
    source.tail = restWords == 1
                      ? AlignmentRender::tr("\u2026 and 1 more word the model does not read")
                      : AlignmentRender::tr("\u2026 and %1 more words the model does not read").arg(restWords);
  } else if (shown < input.size()) {
    const int rest = codePoints(fromStd(input.substr(shown)));
    source.tail = rest == 1 ? AlignmentRender::tr("\u2026 and 1 more character the model does not read")
                            : AlignmentRender::tr("\u2026 and %1 more characters the model does not read").arg(rest);
  }
  if (local) {
    source.caption = AlignmentRender::tr(" \u00b7 p = %1 \u00b7 window %2 \u2013 %3 (D = %4)")
                         .arg(p, 0, 'f', 2)
                         .arg(p - options.window, 0, 'f', 1)
                         .arg(p + options.window, 0, 'f', 1)
                         .arg(options.window);
  }
  return source;
}

}  // namespace

TextFigure decodingFigure(const attn::models::Seq2SeqRun& run, std::size_t hypothesis, int step, std::string_view input,
                          const DecodingFigureOptions& options) {
  TextFigure figure;
  if (hypothesis >= run.hypotheses.size()) return figure;
  const auto& hyp = run.hypotheses[hypothesis];
  const int steps = int(hyp.ids.size());
  step = steps > 0 ? std::clamp(step, 0, steps - 1) : -1;
  ShadedText output = outputShading(run, hypothesis, step, options.colormap);
  int unknown = 0;
  ShadedText source = sourceShading(run, hypothesis, step, input, options, unknown);
  // The caption names the step in view by its output character; sourceShading left the local-p part.
  QString what;
  if (step >= 0 && std::size_t(step) < output.ranges.size()) {
    const auto& r = output.ranges[std::size_t(step)];
    what = hyp.finished && step == steps - 1 ? u"</s>"_s : quoted(output.text.mid(r.begin, r.end - r.begin));
  }
  source.caption = (step >= 0 ? AlignmentRender::tr("Source \u00b7 attention of step %1 (%2): %3")
                                    .arg(step)
                                    .arg(indexRange(std::size_t(steps)))
                                    .arg(what)
                              : AlignmentRender::tr("Source")) +
                   source.caption;
  figure.elements.emplace_back(std::move(output));
  figure.elements.emplace_back(std::move(source));
  if (unknown > 0 && run.words) {
    figure.elements.emplace_back(FigureNote{
        unknown == 1 ? AlignmentRender::tr("1 word is not in the model's vocabulary (red, underlined): it is read as "
                                           "<unk> and the rest is still decoded.")
                     : AlignmentRender::tr("%1 words are not in the model's vocabulary (red, underlined): they are "
                                           "read as <unk> and the rest is still decoded.")
                           .arg(unknown),
        true});
  } else if (unknown > 0) {
    figure.elements.emplace_back(FigureNote{
        unknown == 1 ? AlignmentRender::tr(
                           "1 character is not in the model's vocabulary (red, underlined): it is read as <unk> and "
                           "the rest is still decoded.")
                     : AlignmentRender::tr(
                           "%1 characters are not in the model's vocabulary (red, underlined): they are read as <unk> "
                           "and the rest is still decoded.")
                           .arg(unknown),
        true});
  }
  return figure;
}

namespace {

// "3 words are not in the model's vocabulary (red, underlined): ...", in the warning colour.
FigureNote unknownWordsNote(int unknown) {
  return FigureNote{
      unknown == 1
          ? AlignmentRender::tr("1 word is not in the model's vocabulary (red, underlined): it is read as <unk>.")
          : AlignmentRender::tr("%1 words are not in the model's vocabulary (red, underlined): they are read as "
                                "<unk>.")
                .arg(unknown),
      true};
}

QString classLabel(const attn::models::ClassifierConfig& config, int i) {
  return i >= 0 && std::size_t(i) < config.labels.size() ? fromStd(config.labels[std::size_t(i)])
                                                         : AlignmentRender::tr("class %1").arg(i);
}

BarChart probabilityChart(const std::vector<float>& probabilities, int predicted,
                          const std::function<QString(int)>& label) {
  BarChart chart;
  chart.caption = AlignmentRender::tr("Class probabilities");
  for (std::size_t i = 0; i < probabilities.size(); ++i) {
    Bar bar;
    bar.label = label(int(i));
    bar.value = probabilities[i];
    bar.valueText = percentText(probabilities[i]);
    bar.strong = int(i) == predicted;
    // The predicted class stands out; no colour says "good" or "bad" (a label may be either).
    bar.colour = bar.strong ? QColor(0x3f, 0x6a, 0x9a) : QColor(0xa8, 0xa8, 0xa8);
    chart.bars.push_back(bar);
  }
  return chart;
}

BarChart probabilityChart(const attn::models::ClassifierRun& run, const attn::models::ClassifierConfig& config) {
  return probabilityChart(run.probabilities, run.predicted, [&](int i) { return classLabel(config, i); });
}

// A text shaded by one weight per word (the words' byte spans into `text`, unknown ones marked); what(w) follows
// word w's weight in its tool tip.
ShadedText shadeWords(const attn::Labels& words, const std::vector<Span>& spans, const std::vector<bool>& unknown,
                      const Utf16Text& text, const RowVector& weights, const QString& caption,
                      const std::function<QString(int)>& what) {
  ShadedText shaded;
  shaded.text = text.text;
  shaded.caption = caption;
  for (int w = 0; w < int(words.size()) && w < weights.size() && std::size_t(w) < spans.size(); ++w) {
    const auto& span = spans[std::size_t(w)];
    if (span.begin < 0 || std::size_t(span.end) >= text.offsets.size() || span.end <= span.begin) continue;
    ShadedRange range;
    range.begin = text.offsets[std::size_t(span.begin)];
    range.end = text.offsets[std::size_t(span.end)];
    range.weight = weights(w);
    range.unknown = std::size_t(w) < unknown.size() && unknown[std::size_t(w)];
    const QString word = fromStd(words[std::size_t(w)]);
    QString tip = range.unknown ? AlignmentRender::tr("%1 is not in the vocabulary: read as <unk>").arg(quoted(word))
                                : quoted(word);
    tip += u"\n"_s + AlignmentRender::tr("weight %1").arg(exactValue(range.weight));
    if (what) tip += what(w);
    range.toolTip = tip;
    shaded.ranges.push_back(range);
  }
  return shaded;
}

// What an attribution's caption says after "Attribution of “label”": the logit, the method, the colours, the scale.
QString attributionDetails(const AttributionShading& shading, float scale) {
  const QString method = shading.method == attn::models::WordAttributionMethod::IntegratedGradients
                             ? AlignmentRender::tr("integrated gradients")
                             : AlignmentRender::tr("gradient \u00d7 input");
  return AlignmentRender::tr("(logit %1) \u00b7 %2 \u00b7 red for it, blue against, \u00b1%3 at full colour")
      .arg(double(shading.attribution->value), 0, 'f', 3)
      .arg(method)
      .arg(double(scale), 0, 'g', 3);
}

// After the shading: integrated gradients' steps and how far the scores' sum misses the logit's rise (a note
// wraps, a caption does not), or why there is no attribution.
void addAttributionNote(const AttributionShading& shading, TextFigure& figure) {
  if (shading.attribution && shading.method == attn::models::WordAttributionMethod::IntegratedGradients) {
    const auto& a = *shading.attribution;
    figure.elements.emplace_back(FigureNote{
        AlignmentRender::tr("Integrated gradients: %1 steps from the zero embedding, where the logit is %2; the "
                            "scores sum to %3 of the %4 between the two (completeness gap %5).")
            .arg(shading.steps)
            .arg(double(a.baseline_value), 0, 'f', 3)
            .arg(double(a.value - a.baseline_value + a.gap), 0, 'f', 3)
            .arg(double(a.value - a.baseline_value), 0, 'f', 3)
            .arg(double(a.gap), 0, 'g', 3),
        false});
  } else if (!shading.attribution && !shading.note.isEmpty()) {
    figure.elements.emplace_back(FigureNote{AlignmentRender::tr("No attribution: %1").arg(shading.note), true});
  }
}

// Words `first` .. `first + count - 1` of an attribution's scores as a row of weights.
RowVector attributionScores(const attn::models::WordAttribution& a, int first, int count) {
  RowVector row = RowVector::Zero(std::max(0, count));
  for (int w = 0; w < count && first + w < int(a.scores.size()); ++w) row(w) = a.scores(first + w);
  return row;
}

// An attribution's shading of one text: RdBu, signed, at `scale`.
ShadedText signedShading(ShadedText shaded, float scale) {
  shaded.colormap = Colormap::RdBu;
  shaded.signedWeights = true;
  shaded.scale = scale;
  return shaded;
}

QString attributionTip() {
  return u"\n"_s + AlignmentRender::tr("an attribution score: above 0 for the label, below 0 against it");
}

float largestScore(const attn::models::WordAttribution& a) {
  const float top = a.scores.size() > 0 ? a.scores.cwiseAbs().maxCoeff() : 0.0f;
  return std::isfinite(top) && top > 0.0f ? top : 1.0f;
}

// The review's text shaded by one weight per word.
ShadedText shadeWords(const attn::models::ClassifierRun& run, const Utf16Text& text, const RowVector& weights,
                      const QString& caption, const std::function<QString(int)>& what) {
  return shadeWords(run.input.words, run.input.spans, run.unknown, text, weights, caption, what);
}

// Head `h`'s word attention over the review's text.
ShadedText wordShading(const attn::models::ClassifierRun& run, const attn::models::ClassifierConfig& config,
                       const Utf16Text& text, int h, Colormap colormap) {
  const int heads = int(run.word_attention.rows());
  const QString caption =
      config.hierarchical
          ? (heads > 1 ? AlignmentRender::tr("Word attention within each sentence \u00b7 head %1").arg(h)
                       : AlignmentRender::tr("Word attention within each sentence"))
          : (heads > 1 ? AlignmentRender::tr("Word attention \u00b7 head %1").arg(h)
                       : AlignmentRender::tr("Word attention"));
  ShadedText shaded = shadeWords(run, text, run.word_attention.row(h), caption, [&](int w) {
    QString tip = heads > 1 ? AlignmentRender::tr(" (head %1)").arg(h) : QString();
    if (config.hierarchical && std::size_t(w) < run.input.sentence.size()) {
      tip += AlignmentRender::tr(" within sentence %1").arg(run.input.sentence[std::size_t(w)]);
    }
    return tip;
  });
  if (heads > 1) {
    shaded.tint = headColor(h);
  } else {
    shaded.colormap = colormap;
  }
  return shaded;
}

// The caption of a reading: "LSTM forget gate · predicts negative (> 99.9 %) · held-out: 14.2 % on the
// deciding words".
QString readingCaption(const SaliencyReading& reading) {
  const auto& config = reading.model->config();
  const auto& run = *reading.run;
  const float p =
      std::size_t(run.predicted) < run.probabilities.size() ? run.probabilities[std::size_t(run.predicted)] : 0.0f;
  QString name = fromStd(attn::models::kind_name(config.kind));
  name[0] = name[0].toUpper();
  if (config.kind == attn::models::ClassifierKind::AttentionPooling && config.heads > 1) {
    name += AlignmentRender::tr(" (mean of %1 heads)").arg(config.heads);
  }
  QString caption =
      AlignmentRender::tr("%1 \u00b7 predicts %2 (%3)").arg(name, classLabel(config, run.predicted), percentText(p));
  if (config.held_out_saliency >= 0.0) {
    caption += AlignmentRender::tr(" \u00b7 held-out: %1 % of its saliency on the deciding words")
                   .arg(100.0 * config.held_out_saliency, 0, 'f', 1);
  }
  return caption;
}

// A hierarchical classifier's attention over its sentences, one bar each.
BarChart sentenceChart(const attn::models::ClassifierRun& run, const Utf16Text& text, Colormap colormap) {
  const int words = int(run.input.words.size());
  BarChart sentences;
  sentences.caption = AlignmentRender::tr("Sentence attention");
  sentences.maximum = std::max(run.sentence_attention.maxCoeff(), 1e-6f);
  for (Index s = 0; s < run.sentence_attention.size(); ++s) {
    int first = -1, last = -1;
    for (int w = 0; w < words && std::size_t(w) < run.input.sentence.size(); ++w) {
      if (run.input.sentence[std::size_t(w)] != int(s)) continue;
      if (first < 0) first = w;
      last = w;
    }
    QString sentence;
    if (first >= 0) {
      const int b = text.offsets[std::size_t(run.input.spans[std::size_t(first)].begin)];
      const int e = text.offsets[std::size_t(run.input.spans[std::size_t(last)].end)];
      sentence = text.text.mid(b, e - b).simplified();
    }
    Bar bar;
    bar.label = AlignmentRender::tr("%1 \u00b7 %2").arg(s).arg(sentence);
    bar.value = run.sentence_attention(s);
    bar.colour = QColor::fromRgb(sample(colormap, 0.55));
    bar.toolTip = AlignmentRender::tr("sentence %1: %2\nweight %3").arg(s).arg(quoted(sentence), exactValue(bar.value));
    sentences.bars.push_back(bar);
  }
  return sentences;
}

}  // namespace

QString saliencyMeaning(attn::models::ClassifierKind kind) {
  using attn::models::ClassifierKind;
  switch (kind) {
    case ClassifierKind::AttentionPooling: return AlignmentRender::tr("the pooling weights, mean over the heads");
    case ClassifierKind::Hierarchical: return AlignmentRender::tr("word attention within each sentence");
    case ClassifierKind::Lstm:
      return AlignmentRender::tr(
          "the share of the final cell state each word wrote, i_t \u00b7 \u220f_{s>t} f_s "
          "summed over the units");
    case ClassifierKind::Cnn:
      return AlignmentRender::tr(
          "the words under the windows where the channels take their maxima, weighted by "
          "each channel's vote for the prediction");
  }
  return {};
}

TextFigure reviewFigure(const attn::models::ClassifierRun& run, const attn::models::ClassifierConfig& config,
                        std::string_view input, Colormap colormap, const std::vector<SaliencyReading>& readings,
                        const AttributionShading& attribution) {
  TextFigure figure;
  const float top =
      std::size_t(run.predicted) < run.probabilities.size() ? run.probabilities[std::size_t(run.predicted)] : 0.0f;
  figure.heading = AlignmentRender::tr("Predicted: %1 (%2)").arg(classLabel(config, run.predicted), percentText(top));
  figure.elements.emplace_back(probabilityChart(run, config));

  const std::size_t shown =
      run.input.spans.empty() ? input.size() : std::size_t(std::max(0, run.input.spans.back().end));
  const Utf16Text text = toUtf16(input.substr(0, std::min(shown, input.size())));
  int unknown = 0;
  for (std::size_t w = 0; w < run.input.words.size() && w < run.unknown.size(); ++w) unknown += run.unknown[w] ? 1 : 0;
  int restWords = 0;
  if (shown < input.size()) restWords = int(attn::models::split_words(input.substr(shown)).words.size());
  const QString rest = restWords == 0 ? QString()
                       : restWords == 1
                           ? AlignmentRender::tr("\u2026 and 1 more word the model does not read")
                           : AlignmentRender::tr("\u2026 and %1 more words the model does not read").arg(restWords);
  for (int h = 0; h < int(run.word_attention.rows()); ++h) {
    ShadedText shaded = wordShading(run, config, text, h, colormap);
    shaded.tail = rest;
    figure.elements.emplace_back(std::move(shaded));
  }
  // The LSTM's and the CNN's own saliency, unless the readings below show it with the others.
  if (run.word_attention.rows() == 0 && run.saliency.size() > 0 && readings.empty()) {
    ShadedText shaded = shadeWords(run, text, run.saliency.transpose(),
                                   AlignmentRender::tr("Saliency \u00b7 %1").arg(saliencyMeaning(config.kind)), {});
    shaded.colormap = colormap;
    shaded.tail = rest;
    figure.elements.emplace_back(std::move(shaded));
  }
  if (config.hierarchical && run.sentence_attention.size() > 0) {
    figure.elements.emplace_back(sentenceChart(run, text, colormap));
  }
  if (!readings.empty()) {
    QStringList meanings;
    for (const auto& reading : readings) {
      if (!reading.model) continue;
      const auto kind = reading.model->config().kind;
      meanings.append(AlignmentRender::tr("%1: %2").arg(fromStd(attn::models::kind_name(kind)), saliencyMeaning(kind)));
    }
    figure.elements.emplace_back(FigureNote{
        AlignmentRender::tr("Saliency without a query, read three ways by the bundled review classifiers (%1). Each "
                            "row is scaled to its own largest weight; the held-out figure is the share of the saliency "
                            "on the words that decide the label, over 2,000 generated reviews, the same measure for "
                            "each.")
            .arg(meanings.join(u"; "_s)),
        false});
    for (const auto& reading : readings) {
      if (!reading.model || !reading.run || reading.run->saliency.size() == 0) continue;
      const QString meaning = u" \u00b7 "_s + saliencyMeaning(reading.model->config().kind);
      ShadedText shaded = shadeWords(*reading.run, text, reading.run->saliency.transpose(), readingCaption(reading),
                                     [&](int) { return meaning; });
      shaded.colormap = colormap;
      shaded.tail = rest;
      figure.elements.emplace_back(std::move(shaded));
    }
  }
  if (attribution.attribution) {
    const auto& a = *attribution.attribution;
    const float scale = largestScore(a);
    ShadedText shaded =
        shadeWords(run, text, attributionScores(a, 0, int(run.input.words.size())),
                   AlignmentRender::tr("Attribution of %1 %2")
                       .arg(quoted(classLabel(config, a.label)), attributionDetails(attribution, scale)),
                   [](int) { return attributionTip(); });
    shaded.tail = rest;
    figure.elements.emplace_back(signedShading(std::move(shaded), scale));
  }
  addAttributionNote(attribution, figure);
  if (unknown > 0) figure.elements.emplace_back(unknownWordsNote(unknown));
  return figure;
}

// ---------------------------------------------------------------------------------------------------------
// Entailment

namespace {

// The words of one sentence as typed (up to the last word the model reads).
Utf16Text readText(std::string_view input, const attn::models::WordSplit& words) {
  const std::size_t shown = words.spans.empty() ? input.size() : std::size_t(std::max(0, words.spans.back().end));
  return toUtf16(input.substr(0, std::min(shown, input.size())));
}

}  // namespace

TextFigure entailmentFigure(const attn::models::EntailmentRun& run, const attn::models::EntailmentConfig& config,
                            int step, std::string_view premise, std::string_view hypothesis, Colormap colormap,
                            const AttributionShading& attribution) {
  TextFigure figure;
  const auto label = [&](int i) {
    return i >= 0 && std::size_t(i) < config.labels.size() ? fromStd(config.labels[std::size_t(i)])
                                                           : AlignmentRender::tr("class %1").arg(i);
  };
  const float top =
      std::size_t(run.predicted) < run.probabilities.size() ? run.probabilities[std::size_t(run.predicted)] : 0.0f;
  figure.heading = AlignmentRender::tr("Predicted: %1 (%2)").arg(label(run.predicted), percentText(top));
  figure.elements.emplace_back(probabilityChart(run.probabilities, run.predicted, label));

  const int words = int(run.attention.rows());
  step = words > 0 ? std::clamp(step, 0, words - 1) : -1;
  const QString word = step >= 0 ? quoted(fromStd(run.hypothesis.words[std::size_t(step)])) : QString();
  // The hypothesis: the word in view outlined, unshaded (its row shades the premise).
  ShadedText h = shadeWords(run.hypothesis.words, run.hypothesis.spans, run.hypothesis_unknown,
                            readText(hypothesis, run.hypothesis), RowVector::Zero(words),
                            step >= 0 ? AlignmentRender::tr("Hypothesis \u00b7 word %1 (%2), %3, in view")
                                            .arg(step)
                                            .arg(indexRange(std::size_t(words)))
                                            .arg(word)
                                      : AlignmentRender::tr("Hypothesis"),
                            [](int) { return QString(); });
  if (step >= 0 && std::size_t(step) < h.ranges.size()) h.ranges[std::size_t(step)].focus = true;
  h.colormap = colormap;
  h.scale = 1.0f;
  figure.elements.emplace_back(std::move(h));
  if (step >= 0) {
    ShadedText p =
        shadeWords(run.premise.words, run.premise.spans, run.premise_unknown, readText(premise, run.premise),
                   run.attention.row(step),
                   AlignmentRender::tr("Premise \u00b7 attention of hypothesis word %1 (%2)").arg(step).arg(word),
                   [&](int) { return AlignmentRender::tr(" from hypothesis word %1 (%2)").arg(step).arg(word); });
    p.colormap = colormap;
    figure.elements.emplace_back(std::move(p));
  }
  if (attribution.attribution) {
    // Both sentences at one scale: the premise's words, then the hypothesis's (WordAttribution::premise_words).
    const auto& a = *attribution.attribution;
    const float scale = largestScore(a);
    const auto score = [](int) { return attributionTip(); };
    figure.elements.emplace_back(
        signedShading(shadeWords(run.premise.words, run.premise.spans, run.premise_unknown,
                                 readText(premise, run.premise), attributionScores(a, 0, int(run.premise.words.size())),
                                 AlignmentRender::tr("Premise \u00b7 attribution of %1 %2")
                                     .arg(quoted(label(a.label)), attributionDetails(attribution, scale)),
                                 score),
                      scale));
    figure.elements.emplace_back(signedShading(
        shadeWords(run.hypothesis.words, run.hypothesis.spans, run.hypothesis_unknown,
                   readText(hypothesis, run.hypothesis),
                   attributionScores(a, a.premise_words, int(run.hypothesis.words.size())),
                   AlignmentRender::tr("Hypothesis \u00b7 the same attribution, at the same scale"), score),
        scale));
  }
  addAttributionNote(attribution, figure);
  const auto count = [](const std::vector<bool>& v) { return int(std::count(v.begin(), v.end(), true)); };
  const int unknown = count(run.premise_unknown) + count(run.hypothesis_unknown);
  if (unknown > 0) figure.elements.emplace_back(unknownWordsNote(unknown));
  return figure;
}

}  // namespace attn::ui::render
