// attnscope-cli: the lab, the glimpse workbench, the transformer, alignment and captioning tabs without a window.
// Parses arguments and hands them to attn_cli's subcommands, which call the engine as the tabs do and draw with
// the render layer's painters and exporters (render/heatmap_figure.h, render/figure_export.h): no widget, so a
// QGuiApplication is enough.
//
// Exit codes: 0 success, 1 bad input or a file that could not be written, 2 usage errors.
#include "cli/align_cli.h"
#include "cli/speech_cli.h"
#include "cli/caption_cli.h"
#include "cli/glimpse_cli.h"
#include "cli/attribute_cli.h"
#include "cli/corpus_cli.h"
#include "cli/heads_cli.h"
#include "cli/headless.h"
#include "cli/patch_cli.h"
#include "cli/transformer_cli.h"
#include "app/versions.h"
#include "app/command_line.h"
#include "app/platform.h"
#include "render/strings.h"
#include "attn/io/read_file.h"
#include "attn/lab/lab.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/caption/caption_models.h"

#include <QGuiApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace Qt::StringLiterals;

namespace {

constexpr int kExitInput = 1;
constexpr int kExitUsage = 2;
// --generate's bound: new tokens a request may ask for (the model's context and the memory estimate bound it further).
constexpr qlonglong kMaxGenerate = 1'000'000;

void print(FILE* stream, const QString& text) { std::fputs(text.toLocal8Bit().constData(), stream); }

int usageError(const QString& message) {
  print(stderr, u"attnscope-cli: "_s + message + u"\nTry 'attnscope-cli --help'.\n"_s);
  return kExitUsage;
}

using attn::app::pathValue;
using attn::app::rawOption;

std::vector<QCommandLineOption> countOptions() {
  std::vector<QCommandLineOption> out;
  for (const auto& c : attn::lab::count_params()) {
    QStringList names;
    if (!c.alias.empty()) names << QString::fromUtf8(c.alias.data(), qsizetype(c.alias.size()));
    names << QString::fromUtf8(c.key.data(), qsizetype(c.key.size()));
    const QString help =
        QString::fromUtf8(c.help.data(), qsizetype(c.help.size())) + u" (%1 to %2)."_s.arg(c.min).arg(c.max);
    out.emplace_back(names, help, u"n"_s);
  }
  return out;
}

struct Options {
  QCommandLineOption mechanism{u"mechanism"_s, u"Mechanism key or score name (default: global). See --list."_s,
                               u"key"_s};
  QCommandLineOption query{u"query"_s, u"Query sentence (default: the lab's example)."_s, u"text"_s};
  QCommandLineOption source{u"source"_s, u"Source sentence (default: the lab's example)."_s, u"text"_s};
  QCommandLineOption input{
      u"input"_s, u"Read query and source from a text file: first non-empty line = query, rest = source."_s, u"file"_s};
  QCommandLineOption score{u"score"_s, u"Score function: dot, scaled-dot, general, concat, additive, cosine."_s,
                           u"name"_s};
  QCommandLineOption normaliser{u"normaliser"_s, u"softmax or sparsemax."_s, u"name"_s};
  QCommandLineOption temperature{u"temperature"_s, u"Softmax temperature T > 0."_s, u"T"_s};
  QCommandLineOption window{u"window"_s, u"Local attention half-width D."_s, u"D"_s};
  QCommandLineOption sigma{u"sigma"_s, u"Gaussian width of local-p; <= 0 means D/2."_s, u"sigma"_s};
  QCommandLineOption heads{u"heads"_s, u"Number of heads."_s, u"n"_s};
  // --hops, --iterations, -k/--rank, --buckets, --chunk, --hashes, --classes: attn::lab::count_params().
  std::vector<QCommandLineOption> counts = countOptions();
  QCommandLineOption causal{u"causal"_s, u"Causal mask: tokens attend only to earlier tokens."_s};
  QCommandLineOption shuffle{u"shuffle"_s,
                             u"Pooling: also pool the words shuffled, with and without positions (the maps and "
                             "|c' - c| / |c|)."_s};
  QCommandLineOption positions{u"positions"_s, u"Positions added to embeddings: none, sinusoidal, learned."_s,
                               u"kind"_s};
  QCommandLineOption seed{u"seed"_s, u"Seed of the random weights."_s, u"n"_s};
  QCommandLineOption dim{u"dim"_s, u"Embedding and model size."_s, u"n"_s};
  QCommandLineOption map{
      u"map"_s,
      u"Which map: 0-based index, a map's title, or 'all' for the grid of every map (each with its colour "
      "bar; maps of few rows keep square cells, so the grid may be shorter than --height)."_s,
      u"N|name|all"_s};
  QCommandLineOption out{u"out"_s, u"Image to write: .png, .svg or .pdf."_s, u"file"_s};
  QCommandLineOption csv{u"csv"_s, u"Also write the map's matrix as CSV."_s, u"file"_s};
  QCommandLineOption width{u"width"_s, u"Image width in pixels (default 900)."_s, u"px"_s};
  QCommandLineOption height{u"height"_s, u"Image height in pixels (default 700)."_s, u"px"_s};
  QCommandLineOption colormap{u"colormap"_s, u"viridis, magma, inferno, plasma, cividis or greys."_s, u"name"_s};
  QCommandLineOption list{u"list"_s, u"List the mechanisms with their formulas and papers."_s};
  QCommandLineOption outDir{u"out-dir"_s, u"Directory for the demo images."_s, u"dir"_s};
  // glimpse
  QCommandLineOption image{
      u"image"_s, u"Photo to read: PNG, JPEG, BMP, TIFF or WebP (told by its bytes, not its name)."_s, u"file"_s};
  QCommandLineOption gaussian{
      u"gaussian"_s,
      u"A DRAW Gaussian glimpse, as comma-separated key=value (pixels, 0-based): cx, cy (window centre) or u, ux, uy "
      "(first filter's centre); d, dx, dy (stride); s, sx, sy (sigma); N, Nx, Ny (filters per axis); gamma. Or the "
      "paper's gx~, gy~, logsigma2, logdelta~, loggamma (all five) with N. Unset values: 12 x 12 filters centred on "
      "the image over half its shorter side, sigma half the stride, gamma 1."_s,
      u"spec"_s};
  QCommandLineOption stn{
      u"stn"_s,
      u"A spatial-transformer glimpse, as comma-separated key=value: family=no-shear (sx, sy, tx, ty; the default), "
      "similarity (scale, rotation in radians or e.g. 30deg, tx, ty), translation-scale (scale, tx, ty) or affine "
      "(theta=a;b;c;d;e;f); w, h (output size, default 64 x 64); sampling=bilinear|nearest; padding=zeros|border. "
      "Scales and shifts are normalised: scale 1 and shift 0 cover the whole image."_s,
      u"spec"_s};
  QCommandLineOption glimpseOut{u"out"_s, u"Image to write, magnified: .png (or .jpg, .bmp, .tif, .webp)."_s,
                                u"file"_s};
  QCommandLineOption json{
      u"json"_s, u"Also write the glimpse's settings as JSON (the workbench's Export parameters)."_s, u"file"_s};
  QCommandLineOption scale{u"scale"_s,
                           u"Magnify each glimpse pixel to K x K (default: the smallest K that makes the longer side "
                           "at least 256 px)."_s,
                           u"K"_s};
  // run
  QCommandLineOption model{u"model"_s, u"A transformer folder: config.json + *.safetensors (+ tokenizer files)."_s,
                           u"dir"_s};
  QCommandLineOption dumpIn{u"dump-in"_s,
                            u"Render an attention dump (*.attn.safetensors) instead of running a model."_s, u"file"_s};
  QCommandLineOption text{u"text"_s, u"The text for a text model (BERT, DistilBERT, GPT-2)."_s, u"text"_s};
  QCommandLineOption textFile{u"text-file"_s, u"The text read from a UTF-8 file (a long document)."_s, u"file"_s};
  QCommandLineOption ids{u"ids"_s,
                         u"Token ids instead of a text (a model without tokenizer files), separated by commas or "
                         "spaces: --ids 5,17,3 or --ids \"5 17 3\"; run as given (BERT's [CLS] and [SEP] included)."_s,
                         u"list"_s};
  QCommandLineOption pair{
      u"pair"_s, u"The second sentence: BERT's (token type 1) in run; an entailment model's hypothesis in align."_s,
      u"text"_s};
  QCommandLineOption runImage{u"image"_s, u"The photo for a vision transformer (ViT)."_s, u"file"_s};
  QCommandLineOption dump{u"dump"_s,
                          u"Write the run's attention as an attention dump (*.attn.safetensors; version 2 when the "
                          "run keeps its attention on demand, a decoder whose maps would pass 1 GiB)."_s,
                          u"file"_s};
  QCommandLineOption tile{
      u"tile"_s,
      u"With --render layer=L,head=H: only query rows r0..r1-1 and keys c0..c1-1, exactly (0-based, "
      "end excluded; at most 4,096 x 4,096)."_s,
      u"r0:r1,c0:c1"_s};
  QCommandLineOption runCsv{
      u"csv"_s, u"With --render layer=L,head=H: also write the head's weights (or --tile's) as CSV."_s, u"file"_s};
  QCommandLineOption render{
      u"render"_s, u"Which map to draw: layer=L,head=H or layer=L,head=mean (0-based), or rollout."_s, u"spec"_s};
  QCommandLineOption view{
      u"view"_s, u"matrix (default), head (BertViz lines), model (every layer x head) or overlay (ViT)."_s, u"name"_s};
  QCommandLineOption runOut{u"out"_s, u"Image to write: .png (the matrix also .svg or .pdf)."_s, u"file"_s};
  QCommandLineOption generate{u"generate"_s,
                              u"Decoders: generate up to N tokens after the text (with the key/value cache), print "
                              "them; the run (and --dump) then holds every generated token's attention."_s,
                              u"N"_s};
  QCommandLineOption genTemperature{u"temperature"_s, u"Sampling temperature (default 0: greedy)."_s, u"T"_s};
  QCommandLineOption topK{u"top-k"_s, u"Sample from the K most likely tokens only (default 0: all)."_s, u"K"_s};
  QCommandLineOption topP{u"top-p"_s, u"Then from the fewest tokens whose probability reaches P (default 1)."_s,
                          u"P"_s};
  QCommandLineOption genSeed{u"seed"_s, u"Seed of the sampling (default 0)."_s, u"S"_s};
  QCommandLineOption onDemand{u"on-demand"_s,
                              u"Text models: keep the attention on demand (queries, keys and row statistics; no maps) "
                              "however short the text, so that --dump writes a version-2 dump."_s};
  QCommandLineOption ablate{u"ablate"_s,
                            u"Ablate these heads: their output (z = A V, before the output projection) set to 0 (or, "
                            "with --ablate-mode mean, to its mean over the positions) at every position; prints the "
                            "predictions with and without. L.H[,L.H...], 0-based."_s,
                            u"heads"_s};
  QCommandLineOption ablateMode{u"ablate-mode"_s, u"zero (default) or mean."_s, u"mode"_s};
  // patch
  QCommandLineOption patchClean{u"clean"_s, u"The clean input: a text (a ViT: an image file)."_s, u"text"_s};
  QCommandLineOption patchCorrupt{
      u"corrupt"_s, u"The corrupted input, of the same token count: a text (a ViT: an image file)."_s, u"text"_s};
  QCommandLineOption patchAnswer{u"answer"_s, u"The answer: one token of the model (a ViT: a class name or index)."_s,
                                 u"token"_s};
  QCommandLineOption patchWrong{u"wrong"_s, u"The wrong answer, for logit-diff: one token (or class)."_s, u"token"_s};
  QCommandLineOption patchOver{u"over"_s,
                               u"The sweep: heads, layers-positions, heads-positions, attn-out-positions or "
                               "mlp-out-positions."_s,
                               u"sweep"_s};
  QCommandLineOption patchMetric{
      u"metric"_s, u"logit-diff (default: answer minus wrong), logprob or logit (of the answer), kl."_s, u"name"_s};
  QCommandLineOption patchPosition{
      u"position"_s,
      u"The measured position (0-based; default: the last token, BERT's first [MASK], ViT's class token)."_s, u"P"_s};
  QCommandLineOption patchCsv{
      u"csv"_s, u"Write the normalised recoveries: a header row, then one row per layer (or layer.head)."_s, u"file"_s};
  QCommandLineOption patchOut{u"out"_s, u"Also draw them as a heatmap: .png, .svg or .pdf."_s, u"file"_s};
  // align
  QCommandLineOption alignModel{
      u"model"_s,
      u"A bundled model by name (attnscope-cli align --list) or a model folder (config.json + "
      "model.safetensors of an AttnScopeSeq2Seq, AttnScopeClassifier or AttnScopeEntailment model)."_s,
      u"name|dir"_s};
  QCommandLineOption alignText{u"text"_s, u"The input: a date in any form, a review, or an entailment premise."_s,
                               u"text"_s};
  QCommandLineOption beam{u"beam"_s, u"Beam width, 1 (greedy, the default) to 16."_s, u"K"_s};
  QCommandLineOption hypothesis{u"hypothesis"_s, u"Which hypothesis to draw, 0 = the best (the default)."_s, u"N"_s};
  QCommandLineOption step{u"step"_s,
                          u"Outline this output step (an entailment model: hypothesis word) in the heatmap (0 = the "
                          "first); the shading view shades the source (the premise) by it."_s,
                          u"N"_s};
  QCommandLineOption alignView{u"view"_s,
                               u"heatmap (the alignment, the default for date and entailment models) or shading (the "
                               "source characters or premise words shaded by the step's attention). Classifiers "
                               "always write their word shading."_s,
                               u"name"_s};
  QCommandLineOption alignLayer{u"layer"_s,
                                u"A ConvS2S model's decoder layer (0 = the first) for --out and --csv, instead of the "
                                "layers' mean."_s,
                                u"L"_s};
  QCommandLineOption alignOut{u"out"_s, u"Picture to write: .png, .svg or .pdf."_s, u"file"_s};
  QCommandLineOption alignCsv{
      u"csv"_s,
      u"Also write the matrix as CSV (the alignment; a classifier's heads x words; hypothesis x premise words)."_s,
      u"file"_s};
  QCommandLineOption alignAttribution{
      u"attribution"_s,
      u"A review or entailment model: also shade the words by an attribution of the predicted label, grad-x-input or "
      "integrated-gradients (256 steps from the zero embedding)."_s,
      u"method"_s};
  QCommandLineOption alignList{u"list"_s, u"List the bundled models."_s};
  QCommandLineOption alignWav{u"wav"_s, u"A speech model's audio file (WAV, FLAC, Ogg, AIFF), instead of --text."_s,
                              u"file"_s};
  QCommandLineOption alignVoice{
      u"voice"_s, u"The espeak-ng voice a speech model's --text is said in (default en-us)."_s, u"name"_s};
  QCommandLineOption sharpen{u"sharpen"_s,
                             u"A speech model's weights as softmax(beta e): above 1 sharper, below flatter (default 1, "
                             "the model's own)."_s,
                             u"beta"_s};
  QCommandLineOption smooth{u"smooth"_s, u"A speech model's weights as sigmoid(e) / sum sigmoid(e)."_s};
  QCommandLineOption attendTopK{u"top-k"_s,
                                u"A speech model attends only its k highest-scoring steps (default: all)."_s, u"k"_s};
  QCommandLineOption attendWindow{
      u"window"_s, u"A speech model attends only the steps within +-W of its previous attention's median."_s, u"W"_s};
  // speech
  QCommandLineOption speechText{u"text"_s, u"Say this with espeak-ng (in-process)."_s, u"text"_s};
  QCommandLineOption speechWav{u"wav"_s, u"Read this audio file instead (WAV, FLAC, Ogg, AIFF)."_s, u"file"_s};
  QCommandLineOption voice{u"voice"_s, u"espeak-ng voice: en-us (the default), en-us+f2, en+m3, ..."_s, u"name"_s};
  QCommandLineOption rate{u"rate"_s, u"Words per minute, 80 to 450 (default 175)."_s, u"N"_s};
  QCommandLineOption pitch{u"pitch"_s, u"Pitch, 0 to 99 (default 50)."_s, u"N"_s};
  QCommandLineOption noise{u"noise"_s, u"Add white noise of this standard deviation (samples in [-1, 1])."_s, u"x"_s};
  QCommandLineOption noiseSeed{u"seed"_s, u"Seed of the noise (default 0)."_s, u"S"_s};
  QCommandLineOption wavOut{u"wav-out"_s, u"Write the 16 kHz mono audio the models hear (WAV)."_s, u"file"_s};
  QCommandLineOption speechJson{u"json"_s, u"Write the phonemes' time spans and the log-mel spectrogram (JSON)."_s,
                                u"file"_s};
  QCommandLineOption batch{u"batch"_s,
                           u"A corpus: one utterance per line ({\"text\", \"voice\", \"rate\", \"pitch\", "
                           "\"noise\", \"seed\"}), written to --out-dir."_s,
                           u"file.jsonl"_s};
  QCommandLineOption batchDir{u"out-dir"_s, u"Where --batch writes features.safetensors and utterances.jsonl."_s,
                              u"dir"_s};
  // caption
  QCommandLineOption captionModel{
      u"model"_s,
      u"A bundled captioner by name (caption-soft, the default, or caption-hard; see --list) "
      "or a model folder (config.json + model.safetensors of an AttnScopeCaptioner)."_s,
      u"name|dir"_s};
  QCommandLineOption captionImage{
      u"image"_s,
      u"The image: PNG, JPEG, BMP, TIFF or WebP (told by its bytes), or "
      "sample:astronaut|chelsea|coffee|rocket. It is resized to the model's square input."_s,
      u"file"_s};
  QCommandLineOption scene{u"scene"_s, u"Caption a generated scene of this seed instead of an image."_s, u"seed"_s};
  QCommandLineOption captionBeam{u"beam"_s, u"Beam width, 1 (greedy, the default) to 10."_s, u"K"_s};
  QCommandLineOption perRow{u"per-row"_s, u"Pictures per row of the grid (default 5)."_s, u"N"_s};
  QCommandLineOption captionSigma{
      u"sigma"_s,
      u"Smoothing of the upsampled attention in pixels at 24 pixels per grid cell (default 8, "
      "the tutorial's; 0 = bilinear only)."_s,
      u"sigma"_s};
  QCommandLineOption opacity{u"opacity"_s,
                             u"Opacity of the overlay at the most attended pixels, 0 to 1 (default 0.8)."_s, u"a"_s};
  QCommandLineOption threshold{
      u"threshold"_s, u"Leave values below this fraction of each word's maximum transparent (default 0.15)."_s, u"f"_s};
  // (Not --style: QApplication takes that one for its widget style.)
  QCommandLineOption lightMask{u"light-mask"_s,
                               u"Dim the image where attention is low (the paper's figures) instead "
                               "of drawing a colour map over it."_s};
  QCommandLineOption captionOut{u"out"_s, u"The grid to write: .png, .svg or .pdf."_s, u"file"_s};
  // attribute
  QCommandLineOption attrMethod{u"method"_s,
                                u"grad-x-input, integrated-gradients, attn-grad, attnlrp, rollout, flow, attention or "
                                "random."_s,
                                u"name"_s};
  QCommandLineOption attrTarget{u"target"_s,
                                u"The token explained: one token of the model (a ViT: a class name or index); default: "
                                "the model's top prediction."_s,
                                u"token"_s};
  QCommandLineOption attrPosition{u"position"_s,
                                  u"The position whose prediction is explained (default: the last token of a causal "
                                  "model, the first [MASK] of BERT)."_s,
                                  u"N"_s};
  QCommandLineOption attrSteps{u"steps"_s, u"Integrated gradients: steps of the Riemann sum, 1 to 1024 (default 32)."_s,
                               u"N"_s};
  QCommandLineOption attrBaseline{u"baseline"_s,
                                  u"Integrated gradients: zero (default) or pad (every token the pad or [MASK] "
                                  "token)."_s,
                                  u"zero|pad"_s};
  QCommandLineOption attrCsv{u"csv"_s, u"Write index,token,score, one row per input token."_s, u"file"_s};
  QCommandLineOption attrOut{
      u"out"_s, u"Also draw the scores (per layer where the method has them): .png, .svg or .pdf."_s, u"file"_s};
  // heads
  QCommandLineOption detect{u"detect"_s,
                            u"The detectors, separated by commas: previous-token, duplicate-token, induction, sink."_s,
                            u"names"_s};
  QCommandLineOption headsCsv{u"csv"_s,
                              u"Write one row per head: layer,head,previous_token,duplicate_token,induction,"
                              "induction_offset,sink (a detector not asked leaves its columns empty)."_s,
                              u"file"_s};
  QCommandLineOption headsOut{u"out"_s, u"Picture to write: .png (or .svg, .pdf), a layers x heads map per detector."_s,
                              u"file"_s};
  QCommandLineOption length{u"length"_s, u"Tokens in the random sequence S, which is repeated (default 20)."_s, u"R"_s};
  QCommandLineOption sequences{u"sequences"_s, u"Random sequences averaged over (default 4, at most 256)."_s, u"B"_s};
  QCommandLineOption headsSeed{u"seed"_s, u"Seed of the random sequences (default 0)."_s, u"S"_s};
  QCommandLineOption maxOffset{
      u"max-offset"_s, u"Induction: offsets 1 to K after the earlier occurrence are tried (default 3)."_s, u"K"_s};
  // corpus
  QCommandLineOption corpusInput{u"input"_s,
                                 u"The corpus: a text file (one input per line) or JSON Lines (.jsonl: {\"text\": "
                                 "...} or {\"text\": ..., \"pair\": ...})."_s,
                                 u"file"_s};
  QCommandLineOption corpusDb{u"db"_s,
                              u"The SQLite database written (a run: created, or resumed when it exists; merge: the "
                              "output)."_s,
                              u"file"_s};
  QCommandLineOption corpusShard{u"shard"_s, u"Take only the inputs whose line number mod N is i (default 0/1)."_s,
                                 u"i/N"_s};
  QCommandLineOption corpusMaxTokens{
      u"max-tokens"_s, u"Truncate each input to K tokens (default: the model's positions); counted in the summary."_s,
      u"K"_s};
  QCommandLineOption corpusTopK{u"top-k"_s, u"Strongest query -> key pairs kept per head and input (default 5)."_s,
                                u"K"_s};
  QCommandLineOption corpusThreads{u"threads"_s,
                                   u"Threads of this run (default: every core; 1 where shards run side by side, a "
                                   "shard per core, as GNU parallel runs them)."_s,
                                   u"N"_s};
  QCommandLineOption alphabet{u"alphabet"_s,
                              u"Draw S from this text's distinct tokens (default: every ordinary token; a vocabulary "
                              "of at most 512 tokens: the letters a-z)."_s,
                              u"text"_s};
};

template <class T>
bool parseNumber(const QCommandLineParser& parser, const QCommandLineOption& option, T& target, QString& error) {
  if (!parser.isSet(option)) return true;
  const QString text = parser.value(option);
  bool ok = false;
  if constexpr (std::is_same_v<T, float>) {
    target = text.toFloat(&ok);
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    target = text.toULongLong(&ok);
  } else {
    target = text.toInt(&ok);
  }
  if (!ok) error = u"--%1: '%2' is not a number"_s.arg(option.names().front(), text);
  if constexpr (std::is_floating_point_v<T>) {
    // Qt reads "nan" and "inf" as numbers: none of the options means anything by them.
    if (ok && !std::isfinite(target)) {
      error = u"--%1: '%2' is not a finite number"_s.arg(option.names().front(), text);
      return false;
    }
  }
  return ok;
}

// Prints what a render wrote (or why it failed) and gives the exit code.
int reportRender(const std::expected<attn::ui::RenderReport, attn::ui::RenderFailure>& report) {
  if (!report) {
    print(stderr, u"attnscope-cli: "_s + attn::ui::failureText(report.error()) + u'\n');
    return report.error().kind == attn::ui::RenderFailure::Kind::Usage ? kExitUsage : kExitInput;
  }
  // On stderr, so that a model with NaN weights cannot pass for a good one in a script that reads stdout.
  for (const auto& warning : report->warnings) print(stderr, u"attnscope-cli: warning: "_s + warning + u'\n');
  print(stdout, report->summary + u'\n');
  for (const auto& note : report->notes) print(stdout, u"  "_s + note + u'\n');
  for (const auto& path : report->written) print(stdout, u"wrote "_s + path + u'\n');
  return 0;
}

int runLab(QCommandLineParser& parser, const Options& o) {
  if (parser.isSet(o.list)) {
    print(stdout, attn::ui::mechanismListing());
    return 0;
  }
  attn::ui::RenderJob job;
  auto& request = job.request;
  request.query = std::string(attn::lab::kDefaultQuery);
  request.source = std::string(attn::lab::kDefaultSource);
  auto& p = request.params;

  if (parser.isSet(o.input)) {
    const auto text = attn::io::read_file(attn::ui::toPath(pathValue(parser, o.input)), attn::io::kMaxTextFileBytes);
    if (!text) {
      print(stderr, u"attnscope-cli: %1\n"_s.arg(QString::fromStdString(text.error().message())));
      return kExitInput;
    }
    auto [query, source] = attn::ui::splitQuerySource(QByteArray::fromStdString(*text));
    request.query = std::move(query);
    request.source = std::move(source);
    // The budget's refusal names the file, as every refusal of an input does, unless both sentences were typed.
    if (!parser.isSet(o.query) || !parser.isSet(o.source)) job.what = pathValue(parser, o.input).toStdString();
  }
  if (parser.isSet(o.query)) request.query = rawOption("query").value_or(parser.value(o.query).toStdString());
  if (parser.isSet(o.source)) request.source = rawOption("source").value_or(parser.value(o.source).toStdString());

  if (parser.isSet(o.mechanism)) {
    if (!attn::lab::select_mechanism(p, parser.value(o.mechanism).toStdString())) {
      return usageError(u"--mechanism: unknown mechanism '%1' (--list shows them)"_s.arg(parser.value(o.mechanism)));
    }
  }
  if (parser.isSet(o.score)) {
    const auto* score = attn::lab::find_score(parser.value(o.score).toStdString());
    if (!score) return usageError(u"--score: unknown score '%1'"_s.arg(parser.value(o.score)));
    p.score = *score;
  }
  if (parser.isSet(o.normaliser)) {
    const auto* normaliser = attn::lab::find_normaliser(parser.value(o.normaliser).toStdString());
    if (!normaliser) {
      return usageError(u"--normaliser: expected softmax or sparsemax, got '%1'"_s.arg(parser.value(o.normaliser)));
    }
    p.normaliser = *normaliser;
  }
  if (parser.isSet(o.positions)) {
    const auto* positions = attn::lab::find_positions(parser.value(o.positions).toStdString());
    if (!positions) {
      return usageError(
          u"--positions: expected none, sinusoidal or learned, got '%1'"_s.arg(parser.value(o.positions)));
    }
    p.positions = *positions;
  }
  if (parser.isSet(o.colormap)) {
    const auto map = attn::ui::render::findColormap(parser.value(o.colormap));
    if (!map) return usageError(u"--colormap: unknown colour map '%1'"_s.arg(parser.value(o.colormap)));
    job.colormap = *map;
  }
  p.causal = parser.isSet(o.causal);
  p.shuffle = parser.isSet(o.shuffle);
  int width = 900;
  int height = 700;
  QString error;
  if (!parseNumber(parser, o.temperature, p.temperature, error) || !parseNumber(parser, o.window, p.window, error) ||
      !parseNumber(parser, o.sigma, p.sigma, error) || !parseNumber(parser, o.heads, p.heads, error) ||
      !parseNumber(parser, o.seed, p.seed, error) || !parseNumber(parser, o.dim, p.dim, error) ||
      !parseNumber(parser, o.width, width, error) || !parseNumber(parser, o.height, height, error)) {
    return usageError(error);
  }
  for (std::size_t i = 0; i < o.counts.size(); ++i) {
    if (!parseNumber(parser, o.counts[i], p.*attn::lab::count_params()[i].field, error)) return usageError(error);
  }
  job.size = QSize(width, height);
  job.map = parser.value(o.map);
  job.imagePath = pathValue(parser, o.out);
  job.csvPath = pathValue(parser, o.csv);
  if (job.imagePath.isEmpty() && job.csvPath.isEmpty()) return usageError(u"lab: give --out FILE and/or --csv FILE"_s);

  auto report = attn::ui::renderLab(job);
  // A warning about the query or the source names the file they came from ("notes.txt: source truncated ...").
  if (report && parser.isSet(o.input)) {
    for (QString& warning : report->warnings) {
      if ((warning.startsWith(u"source"_s) && !parser.isSet(o.source)) ||
          (warning.startsWith(u"query"_s) && !parser.isSet(o.query))) {
        warning = pathValue(parser, o.input) + u": "_s + warning;
      }
    }
  }
  return reportRender(report);
}

int runDemo(QCommandLineParser& parser, const Options& o) {
  if (!parser.isSet(o.outDir)) return usageError(u"demo: give --out-dir DIR"_s);
  const QString dir = pathValue(parser, o.outDir);
  if (!QDir().mkpath(dir)) {
    print(stderr, u"attnscope-cli: %1: cannot create the directory\n"_s.arg(dir));
    return kExitInput;
  }
  int failures = 0;
  for (const auto& demo : attn::ui::demoViews()) {
    attn::ui::RenderJob job;
    job.request = demo.request;
    job.map = demo.map;
    job.imagePath = QDir(dir).filePath(demo.file);
    if (demo.map == u"all"_s) job.size = QSize(1100, 900);
    const auto report = attn::ui::renderLab(job);
    if (!report) {
      print(stderr, u"attnscope-cli: %1: %2\n"_s.arg(demo.file, attn::ui::failureText(report.error())));
      ++failures;
      continue;
    }
    print(stdout, job.imagePath + u"  ("_s + demo.description + u")\n"_s);
  }
  return failures == 0 ? 0 : kExitInput;
}

int runGlimpse(QCommandLineParser& parser, const Options& o) {
  if (!parser.isSet(o.image)) return usageError(u"glimpse: give --image FILE"_s);
  const bool gaussian = parser.isSet(o.gaussian);
  if (gaussian == parser.isSet(o.stn)) {
    return usageError(gaussian ? u"glimpse: give --gaussian or --stn, not both"_s
                               : u"glimpse: give --gaussian SPEC or --stn SPEC"_s);
  }
  if (!parser.isSet(o.glimpseOut)) return usageError(u"glimpse: give --out FILE"_s);
  attn::ui::GlimpseJob job;
  job.imagePath = pathValue(parser, o.image);
  job.kind = gaussian ? attn::ui::GlimpseJob::Kind::Gaussian : attn::ui::GlimpseJob::Kind::Stn;
  const char* specOption = gaussian ? "gaussian" : "stn";
  job.spec = rawOption(specOption).value_or(parser.value(gaussian ? o.gaussian : o.stn).toStdString());
  job.outPath = pathValue(parser, o.glimpseOut);
  job.jsonPath = pathValue(parser, o.json);
  QString error;
  if (!parseNumber(parser, o.scale, job.scale, error)) return usageError(error);
  if (parser.isSet(o.scale) && (job.scale < 1 || job.scale > 256)) {
    return usageError(u"--scale: expected a whole number from 1 to 256, got '%1'"_s.arg(parser.value(o.scale)));
  }

  return reportRender(attn::ui::renderGlimpse(job));
}

// run's --ablate and --ablate-mode into `job`; the usage error, or empty. (The heads are checked against the model
// once it is loaded.)
QString readAblation(const QCommandLineParser& parser, const Options& o, attn::ui::TransformerJob& job) {
  if (parser.isSet(o.ablate)) {
    job.ablate = parser.value(o.ablate).toStdString();
    if (job.ablate.empty()) return u"--ablate: give the heads as L.H[,L.H...] (0-based), e.g. 0.1,3.5"_s;
    if (parser.isSet(o.dumpIn)) return u"--ablate runs a model (--model), not a dump"_s;
    if (job.generate > 0) return u"--ablate goes with a run of the text, not with --generate"_s;
    if (job.onDemand) return u"--ablate keeps the maps; --on-demand does not"_s;
  }
  if (parser.isSet(o.ablateMode)) {
    const auto mode = attn::models::parse_ablation_mode(parser.value(o.ablateMode).toStdString());
    if (!mode || *mode == attn::models::AblationMode::Resample)
      return u"--ablate-mode: expected zero or mean, got '%1'"_s.arg(parser.value(o.ablateMode));
    if (job.ablate.empty()) return u"--ablate-mode goes with --ablate L.H[,L.H...]"_s;
    job.ablateMode = *mode;
  }
  return {};
}

int runModel(QCommandLineParser& parser, const Options& o) {
  attn::ui::TransformerJob job;
  if (parser.isSet(o.model) == parser.isSet(o.dumpIn)) {
    return usageError(parser.isSet(o.model) ? u"run: give --model or --dump-in, not both"_s
                                            : u"run: give --model DIR or --dump-in FILE"_s);
  }
  job.modelDir = pathValue(parser, o.model);
  job.dumpIn = pathValue(parser, o.dumpIn);
  if (parser.isSet(o.text)) {
    job.text = rawOption("text").value_or(parser.value(o.text).toStdString());
    job.hasText = true;
  }
  if (parser.isSet(o.textFile)) {
    if (parser.isSet(o.text)) return usageError(u"run: give --text or --text-file, not both"_s);
    const auto bytes =
        attn::io::read_file(attn::ui::toPath(pathValue(parser, o.textFile)), attn::io::kMaxTextFileBytes);
    if (!bytes) return usageError(u"--text-file: %1"_s.arg(attn::ui::fromStd(bytes.error().message())));
    job.text.assign(bytes->data(), bytes->size());
    job.hasText = true;
  }
  if (parser.isSet(o.ids)) {
    if (job.hasText) return usageError(u"run: give --text or --ids, not both"_s);
    job.ids = parser.value(o.ids).toStdString();
    job.hasIds = true;
  }
  if (parser.isSet(o.pair)) job.pair = rawOption("pair").value_or(parser.value(o.pair).toStdString());
  if (job.hasIds && parser.isSet(o.runImage)) return usageError(u"run: give --ids or --image, not both"_s);
  if (job.hasText && parser.isSet(o.runImage)) return usageError(u"run: give --text or --image, not both"_s);
  job.imagePath = pathValue(parser, o.runImage);
  job.dumpOut = pathValue(parser, o.dump);
  job.onDemand = parser.isSet(o.onDemand);
  if (job.onDemand && parser.isSet(o.dumpIn)) return usageError(u"run: --on-demand is for --model, not --dump-in"_s);
  if (parser.isSet(o.render)) job.render = rawOption("render").value_or(parser.value(o.render).toStdString());
  if (parser.isSet(o.render) && job.render.empty()) job.render = " ";  // reported as an empty spec
  if (parser.isSet(o.view)) {
    const auto view = attn::ui::findTransformerView(parser.value(o.view));
    if (!view)
      return usageError(u"--view: expected matrix, head, model or overlay, got '%1'"_s.arg(parser.value(o.view)));
    job.view = *view;
  }
  if (parser.isSet(o.colormap)) {
    const auto map = attn::ui::render::findColormap(parser.value(o.colormap));
    if (!map) return usageError(u"--colormap: unknown colour map '%1'"_s.arg(parser.value(o.colormap)));
    job.colormap = *map;
  }
  job.outPath = pathValue(parser, o.runOut);
  job.csvPath = pathValue(parser, o.runCsv);
  if (parser.isSet(o.tile)) job.tile = parser.value(o.tile).toStdString();
  int width = 900;
  int height = 700;
  QString error;
  if (!parseNumber(parser, o.width, width, error) || !parseNumber(parser, o.height, height, error))
    return usageError(error);
  job.size = QSize(width, height);
  if (parser.isSet(o.generate)) {
    // Read wide, so that 10^10 is "out of range", not "not a number"; the engine then checks the estimate of what the
    // request needs against the memory there is.
    bool whole = false;
    const qlonglong n = parser.value(o.generate).toLongLong(&whole);
    if (!whole) return usageError(u"--generate: '%1' is not a whole number"_s.arg(parser.value(o.generate)));
    if (n < 1 || n > kMaxGenerate) {
      return usageError(u"--generate: N is from 1 to %1 new tokens; got %2"_s.arg(
          QString::fromStdString(attn::with_commas(kMaxGenerate)), QString::fromStdString(attn::with_commas(n))));
    }
    job.generate = int(n);
  }
  if (!parseNumber(parser, o.genTemperature, job.sampling.temperature, error) ||
      !parseNumber(parser, o.topK, job.sampling.top_k, error) ||
      !parseNumber(parser, o.topP, job.sampling.top_p, error) ||
      !parseNumber(parser, o.genSeed, job.sampling.seed, error)) {
    return usageError(error);
  }
  if (!(job.sampling.temperature >= 0.0f) || job.sampling.top_k < 0 || !(job.sampling.top_p > 0.0f) ||
      job.sampling.top_p > 1.0f) {
    return usageError(u"--temperature is 0 or more, --top-k 0 or more, --top-p in (0, 1]"_s);
  }
  const bool sampling =
      parser.isSet(o.genTemperature) || parser.isSet(o.topK) || parser.isSet(o.topP) || parser.isSet(o.genSeed);
  if (sampling && job.generate == 0)
    return usageError(u"--temperature, --top-k, --top-p and --seed go with --generate N"_s);
  if (const QString error = readAblation(parser, o, job); !error.isEmpty()) return usageError(error);
  // The model view draws every map, so --view model --out FILE is enough; other views need --render SPEC.
  const bool modelView = job.view == attn::ui::TransformerView::Model && !job.outPath.isEmpty();
  if (job.dumpOut.isEmpty() && job.render.empty() && !modelView && job.generate == 0 && job.ablate.empty()) {
    return usageError(
        u"run: give --generate N, --ablate L.H, --dump FILE and/or --render SPEC --out FILE (or --csv FILE), or "
        "--view model --out FILE"_s);
  }
  return reportRender(attn::ui::runTransformer(job));
}

int runPatchCommand(QCommandLineParser& parser, const Options& o) {
  attn::ui::PatchJob job;
  if (!parser.isSet(o.model)) return usageError(u"patch: give --model DIR"_s);
  job.modelDir = pathValue(parser, o.model);
  if (!parser.isSet(o.patchClean) || !parser.isSet(o.patchCorrupt))
    return usageError(u"patch: give --clean and --corrupt (two inputs of the same token count)"_s);
  job.clean = rawOption("clean").value_or(parser.value(o.patchClean).toStdString());
  job.corrupt = rawOption("corrupt").value_or(parser.value(o.patchCorrupt).toStdString());
  if (parser.isSet(o.patchAnswer)) job.answer = rawOption("answer").value_or(parser.value(o.patchAnswer).toStdString());
  if (parser.isSet(o.patchWrong)) job.wrong = rawOption("wrong").value_or(parser.value(o.patchWrong).toStdString());
  if (!parser.isSet(o.patchOver)) return usageError(u"patch: give --over heads|layers-positions|heads-positions"_s);
  const auto over = attn::models::parse_sweep(parser.value(o.patchOver).toStdString());
  if (!over)
    return usageError(
        u"--over: expected heads, layers-positions, heads-positions, attn-out-positions or "
        "mlp-out-positions, got '%1'"_s.arg(parser.value(o.patchOver)));
  job.over = *over;
  if (parser.isSet(o.patchMetric)) {
    const auto metric = attn::models::parse_metric(parser.value(o.patchMetric).toStdString());
    if (!metric)
      return usageError(
          u"--metric: expected logit-diff, logprob, logit or kl, got '%1'"_s.arg(parser.value(o.patchMetric)));
    job.metric = *metric;
  }
  if (parser.isSet(o.patchPosition)) {
    bool whole = false;
    job.position = parser.value(o.patchPosition).toInt(&whole);
    if (!whole || job.position < 0)
      return usageError(u"--position: '%1' is not a position (0 or more)"_s.arg(parser.value(o.patchPosition)));
  }
  if (!parser.isSet(o.patchCsv)) return usageError(u"patch: give --csv FILE (and --out FILE.png for a heatmap)"_s);
  job.csvPath = pathValue(parser, o.patchCsv);
  job.outPath = pathValue(parser, o.patchOut);
  int width = 900;
  int height = 700;
  QString error;
  if (!parseNumber(parser, o.width, width, error) || !parseNumber(parser, o.height, height, error))
    return usageError(error);
  job.size = QSize(width, height);
  return reportRender(attn::ui::runPatch(job));
}

int runAttributeCommand(QCommandLineParser& parser, const Options& o) {
  attn::ui::AttributeJob job;
  if (!parser.isSet(o.model)) return usageError(u"attribute: give --model DIR"_s);
  job.modelDir = pathValue(parser, o.model);
  if (parser.isSet(o.text) == parser.isSet(o.runImage))
    return usageError(u"attribute: give --text TEXT (a ViT: --image FILE)"_s);
  job.input = parser.isSet(o.text) ? rawOption("text").value_or(parser.value(o.text).toStdString())
                                   : pathValue(parser, o.runImage).toStdString();
  if (!parser.isSet(o.attrMethod)) return usageError(u"attribute: give --method NAME"_s);
  const auto method = attn::models::parse_method(parser.value(o.attrMethod).toStdString());
  if (!method) return usageError(u"--method: "_s + QString::fromStdString(method.error().reason));
  job.options.method = *method;
  if (parser.isSet(o.attrTarget)) job.target = rawOption("target").value_or(parser.value(o.attrTarget).toStdString());
  if (parser.isSet(o.attrPosition)) {
    bool whole = false;
    job.position = parser.value(o.attrPosition).toInt(&whole);
    if (!whole || job.position < 0)
      return usageError(u"--position: '%1' is not a position (0 or more)"_s.arg(parser.value(o.attrPosition)));
  }
  QString error;
  if (!parseNumber(parser, o.attrSteps, job.options.steps, error)) return usageError(error);
  if (job.options.steps < 1 || job.options.steps > attn::models::kMaxSteps)
    return usageError(u"--steps: %1 is outside 1..%2"_s.arg(job.options.steps).arg(attn::models::kMaxSteps));
  if (parser.isSet(o.attrBaseline)) {
    const QString b = parser.value(o.attrBaseline);
    if (b != u"zero"_s && b != u"pad"_s) return usageError(u"--baseline: expected zero or pad, got '%1'"_s.arg(b));
    job.options.baseline =
        b == u"pad"_s ? attn::models::AttributeOptions::Baseline::Pad : attn::models::AttributeOptions::Baseline::Zero;
  }
  if (!parser.isSet(o.attrCsv)) return usageError(u"attribute: give --csv FILE (and --out FILE.png for a picture)"_s);
  job.csvPath = pathValue(parser, o.attrCsv);
  job.outPath = pathValue(parser, o.attrOut);
  int width = job.size.width(), height = job.size.height();
  if (!parseNumber(parser, o.width, width, error) || !parseNumber(parser, o.height, height, error))
    return usageError(error);
  job.size = QSize(width, height);
  return reportRender(attn::ui::runAttribute(job));
}

int runAlignCommand(QCommandLineParser& parser, const Options& o) {
  if (parser.isSet(o.alignList)) {
    print(stdout, attn::ui::alignModelList());
    return 0;
  }
  attn::ui::AlignJob job;
  job.model = pathValue(parser, o.alignModel);
  if (parser.isSet(o.alignText)) {
    job.text = rawOption("text").value_or(parser.value(o.alignText).toStdString());
    job.hasText = true;
  }
  if (parser.isSet(o.pair)) {
    job.pair = rawOption("pair").value_or(parser.value(o.pair).toStdString());
    job.hasPair = true;
  }
  job.wavPath = pathValue(parser, o.alignWav);
  if (parser.isSet(o.alignVoice)) job.voice = parser.value(o.alignVoice).toStdString();
  QString error;
  if (!parseNumber(parser, o.beam, job.beam, error) || !parseNumber(parser, o.hypothesis, job.hypothesis, error) ||
      !parseNumber(parser, o.step, job.step, error) || !parseNumber(parser, o.alignLayer, job.layer, error) ||
      !parseNumber(parser, o.sharpen, job.shaping.sharpen, error) ||
      !parseNumber(parser, o.attendTopK, job.shaping.top_k, error) ||
      !parseNumber(parser, o.attendWindow, job.shaping.window, error)) {
    return usageError(error);
  }
  job.shaping.smooth = parser.isSet(o.smooth);
  job.beamSet = parser.isSet(o.beam);
  job.hypothesisSet = parser.isSet(o.hypothesis);
  job.stepSet = parser.isSet(o.step);
  job.layerSet = parser.isSet(o.alignLayer);
  if (parser.isSet(o.alignView)) {
    const QString name = parser.value(o.alignView);
    if (name != u"heatmap"_s && name != u"shading"_s) {
      return usageError(u"--view: expected heatmap or shading, got '%1'"_s.arg(name));
    }
    job.view = name == u"heatmap"_s ? attn::ui::AlignJob::View::Heatmap : attn::ui::AlignJob::View::Shading;
    job.viewSet = true;
  }
  if (parser.isSet(o.colormap)) {
    const auto map = attn::ui::render::findColormap(parser.value(o.colormap));
    if (!map) return usageError(u"--colormap: unknown colour map '%1'"_s.arg(parser.value(o.colormap)));
    job.colormap = *map;
  }
  if (parser.isSet(o.alignAttribution)) {
    const QString name = parser.value(o.alignAttribution);
    for (const auto method : {attn::models::WordAttributionMethod::GradientXInput,
                              attn::models::WordAttributionMethod::IntegratedGradients}) {
      if (name.toStdString() == attn::models::word_method_name(method)) job.attribution = method;
    }
    if (!job.attribution) {
      return usageError(u"--attribution: expected grad-x-input or integrated-gradients, got '%1'"_s.arg(name));
    }
  }
  job.outPath = pathValue(parser, o.alignOut);
  job.csvPath = pathValue(parser, o.alignCsv);
  int width = 900;
  int height = 700;
  if (!parseNumber(parser, o.width, width, error) || !parseNumber(parser, o.height, height, error))
    return usageError(error);
  job.size = QSize(width, height);
  return reportRender(attn::ui::runAlign(job));
}

int runSpeechCommand(QCommandLineParser& parser, const Options& o) {
  attn::ui::SpeechJob job;
  if (parser.isSet(o.speechText)) {
    job.text = rawOption("text").value_or(parser.value(o.speechText).toStdString());
    job.hasText = true;
  }
  job.wavIn = pathValue(parser, o.speechWav);
  if (parser.isSet(o.voice)) job.voice.name = parser.value(o.voice).toStdString();
  QString error;
  int seed = 0;
  if (!parseNumber(parser, o.rate, job.voice.words_per_minute, error) ||
      !parseNumber(parser, o.pitch, job.voice.pitch, error) || !parseNumber(parser, o.noiseSeed, seed, error))
    return usageError(error);
  job.seed = unsigned(seed);
  if (parser.isSet(o.noise)) {
    bool ok = false;
    job.noise = parser.value(o.noise).toDouble(&ok);
    if (!ok || !std::isfinite(job.noise) || job.noise < 0 || job.noise > 1)
      return usageError(u"--noise: expected a number from 0 to 1, got '%1'"_s.arg(parser.value(o.noise)));
  }
  job.wavOut = pathValue(parser, o.wavOut);
  job.jsonOut = pathValue(parser, o.speechJson);
  job.batch = pathValue(parser, o.batch);
  job.outDir = pathValue(parser, o.batchDir);
  return reportRender(attn::ui::runSpeech(job));
}

int runHeadsCommand(QCommandLineParser& parser, const Options& o) {
  attn::ui::HeadsJob job;
  if (!parser.isSet(o.model)) return usageError(u"heads: give --model DIR"_s);
  if (!parser.isSet(o.detect))
    return usageError(u"heads: give --detect NAMES (previous-token, duplicate-token, induction, sink)"_s);
  if (!parser.isSet(o.headsCsv) && !parser.isSet(o.headsOut))
    return usageError(u"heads: give --csv FILE or --out FILE"_s);
  job.modelDir = pathValue(parser, o.model);
  auto detectors = attn::ui::parseDetectors(parser.value(o.detect));
  if (!detectors) return usageError(detectors.error());
  job.detectors = std::move(*detectors);
  QString error;
  auto& options = job.options;
  if (!parseNumber(parser, o.length, options.sequence_length, error) ||
      !parseNumber(parser, o.sequences, options.sequences, error) ||
      !parseNumber(parser, o.headsSeed, options.seed, error) ||
      !parseNumber(parser, o.maxOffset, options.max_offset, error)) {
    return usageError(error);
  }
  if (parser.isSet(o.alphabet)) {
    options.alphabet = rawOption("alphabet").value_or(parser.value(o.alphabet).toStdString());
    if (options.alphabet.empty()) return usageError(u"--alphabet: give a text to draw tokens from"_s);
  }
  job.csvPath = pathValue(parser, o.headsCsv);
  job.outPath = pathValue(parser, o.headsOut);
  return reportRender(attn::ui::runHeads(job));
}

// attnscope-cli corpus --model M --input F --db D [--shard i/N] [--max-tokens K] [--top-k K] [--threads N], or
// attnscope-cli corpus merge --db OUT SHARD...
int runCorpusCommand(QCommandLineParser& parser, const Options& o) {
  const QStringList positional = parser.positionalArguments();
  if (!parser.isSet(o.corpusDb)) return usageError(u"corpus: give --db FILE.sqlite"_s);
  if (positional.size() > 1 && positional.at(1) == u"merge"_s) {
    if (positional.size() < 3) return usageError(u"corpus merge: give the shard files after --db OUT.sqlite"_s);
    return reportRender(attn::ui::runCorpusMerge(pathValue(parser, o.corpusDb), positional.mid(2)));
  }
  if (positional.size() > 1) return usageError(u"unexpected argument '%1' (corpus merge?)"_s.arg(positional.at(1)));
  if (!parser.isSet(o.model)) return usageError(u"corpus: give --model DIR (or a .gguf file)"_s);
  if (!parser.isSet(o.corpusInput)) return usageError(u"corpus: give --input FILE (.txt or .jsonl)"_s);
  attn::ui::CorpusJob job;
  job.modelPath = pathValue(parser, o.model);
  job.inputPath = pathValue(parser, o.corpusInput);
  job.dbPath = pathValue(parser, o.corpusDb);
  if (parser.isSet(o.corpusShard)) {
    auto shard = attn::analysis::parse_shard(parser.value(o.corpusShard).toStdString());
    if (!shard) return usageError(QString::fromStdString(shard.error().reason));
    job.shard = *shard;
  }
  QString error;
  if (!parseNumber(parser, o.corpusMaxTokens, job.maxTokens, error) ||
      !parseNumber(parser, o.corpusTopK, job.topK, error) ||
      !parseNumber(parser, o.corpusThreads, job.threads, error)) {
    return usageError(error);
  }
  if (parser.isSet(o.corpusThreads) && (job.threads < 1 || job.threads > 1024)) {
    return usageError(u"--threads: give 1 to 1024"_s);
  }
  if (parser.isSet(o.corpusMaxTokens) && job.maxTokens < 1) return usageError(u"--max-tokens: give 1 or more"_s);
  if (job.topK < 0 || job.topK > 100) return usageError(u"--top-k: give 0 to 100"_s);
  auto outcome = attn::ui::runCorpus(job);
  if (!outcome) return reportRender(std::unexpected(outcome.error()));
  const int code = reportRender(outcome->report);
  return outcome->interrupted ? 130 : code;
}

int runCaptionCommand(QCommandLineParser& parser, const Options& o) {
  if (parser.isSet(o.alignList)) {
    const auto models = attn::ui::bundledCaptionModels();
    if (models.empty()) print(stdout, u"This build bundles no captioners.\n"_s);
    for (const auto& model : models) print(stdout, u"%1  %2\n"_s.arg(model.key, -24).arg(model.name));
    return 0;
  }
  attn::ui::CaptionJob job;
  if (parser.isSet(o.captionModel)) job.model = pathValue(parser, o.captionModel);
  job.imagePath = pathValue(parser, o.captionImage);
  if (parser.isSet(o.captionImage) && job.imagePath.isEmpty()) return usageError(u"--image: give a file name"_s);
  if (parser.isSet(o.scene)) {
    bool ok = false;
    const std::uint64_t seed = parser.value(o.scene).toULongLong(&ok);
    if (!ok) return usageError(u"--scene: '%1' is not a seed (a whole number from 0)"_s.arg(parser.value(o.scene)));
    job.scene = seed;
  }
  QString error;
  float sigma = float(job.overlay.sigma), opacity = float(job.overlay.opacity),
        threshold = float(job.overlay.threshold);
  if (!parseNumber(parser, o.captionBeam, job.beam, error) ||
      !parseNumber(parser, o.hypothesis, job.hypothesis, error) || !parseNumber(parser, o.perRow, job.perRow, error) ||
      !parseNumber(parser, o.captionSigma, sigma, error) || !parseNumber(parser, o.opacity, opacity, error) ||
      !parseNumber(parser, o.threshold, threshold, error)) {
    return usageError(error);
  }
  if (!(opacity >= 0.0f && opacity <= 1.0f)) return usageError(u"--opacity: expected 0 to 1"_s);
  if (!(threshold >= 0.0f && threshold < 1.0f)) return usageError(u"--threshold: expected 0 to below 1"_s);
  job.overlay.sigma = sigma;
  job.overlay.opacity = opacity;
  job.overlay.threshold = threshold;
  if (parser.isSet(o.lightMask)) job.overlay.mode = attn::ui::render::CaptionOverlayMode::LightMask;
  if (parser.isSet(o.colormap)) {
    const auto map = attn::ui::render::findColormap(parser.value(o.colormap));
    if (!map) return usageError(u"--colormap: unknown colour map '%1'"_s.arg(parser.value(o.colormap)));
    job.overlay.colormap = *map;
  }
  job.outPath = pathValue(parser, o.captionOut);
  return reportRender(attn::ui::runCaption(job));
}

// Qt's platform chatter on a headless machine ("XDG_RUNTIME_DIR not set", notes of the offscreen
// plugin) would read as problems with the user's command. ATTNSCOPE_DEBUG=1 shows it again.
void quietMessageHandler(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  if (type == QtDebugMsg || type == QtInfoMsg || type == QtWarningMsg) return;
  print(stderr, qFormatLogMessage(type, context, message) + u'\n');
}

QString commandsHelp() {
  return u"Commands:\n"
         "  lab      Run a mechanism of the Mechanism Lab and write its view (--out) and matrix (--csv).\n"
         "           attnscope-cli lab --mechanism additive --query \"...\" --source \"...\" --out map.png [--csv "
         "m.csv]\n"
         "           attnscope-cli lab --list\n"
         "  demo     Render the bundled demo views to PNG files: attnscope-cli demo --out-dir DIR\n"
         "  glimpse  Read one glimpse of a photo and write it magnified (--out) and its settings (--json).\n"
         "           attnscope-cli glimpse --image photo.jpg --gaussian cx=200,cy=150,d=4,s=2,N=12 --out g.png\n"
         "           attnscope-cli glimpse --image photo.jpg --stn family=similarity,scale=0.5,rotation=30deg --out "
         "s.png\n"
         "  run      Run a transformer (or read an attention dump), write its attention (--dump) and draw a view.\n"
         "           attnscope-cli run --model DIR --text \"The cat sat.\" --render layer=1,head=2 --view head --out "
         "h.png\n"
         "           attnscope-cli run --model vit-dir --image photo.jpg --render rollout --view overlay --out r.png\n"
         "           attnscope-cli run --model DIR --text \"...\" --dump run.attn.safetensors\n"
         "           attnscope-cli run --model DIR --text \"Once upon a time\" --generate 40 [--temperature 0.8 "
         "--top-k 40 --top-p 0.95 --seed 1]\n"
         "           attnscope-cli run --model DIR --ids 5,17,3 --render layer=0,head=mean --out m.png  (no "
         "tokenizer)\n"
         "           attnscope-cli run --dump-in run.attn.safetensors --render layer=0,head=mean --out m.png\n"
         "           attnscope-cli run --model DIR --text \"...\" --ablate 0.1,1.3 [--ablate-mode mean]  (predictions "
         "with and without)\n"
         "  patch    Patch each head, layer or position from a clean run into a corrupted one (activation patching).\n"
         "           attnscope-cli patch --model DIR --clean \"...\" --corrupt \"...\" --answer \" Mary\" --wrong \" "
         "John\" "
         "--over heads --csv p.csv [--out p.png]\n"
         "  align    Run a bundled date, review or entailment model (or a model folder) and write its alignment or "
         "word "
         "shading.\n"
         "           attnscope-cli align --model date-bahdanau --text \"21 Nov 2026\" --out a.png [--csv a.csv]\n"
         "           attnscope-cli align --model date-luong-local-p --text \"Nov 21st 2026\" --beam 4 --hypothesis 2 "
         "--out h.png\n"
         "           attnscope-cli align --model sentiment-hierarchical --text \"The food was not good. We paid 80 "
         "euros.\" --out r.png\n"
         "           attnscope-cli align --model entailment-wbw --text \"A man is sleeping on the beach\" --pair \"A "
         "person is sleeping\" --out e.png\n"
         "           attnscope-cli align --model speech-location --text \"the quick brown fox\" --beam 5 --out s.png\n"
         "           attnscope-cli align --model speech-location --wav recording.wav --out s.png\n"
         "           attnscope-cli align --list\n"
         "  caption  Caption an image or a generated scene (Show, Attend and Tell) and write the grid of its words'\n"
         "           attention: attnscope-cli caption --scene 7 --out grid.png [--model caption-hard] [--beam 3]\n"
         "           attnscope-cli caption --image photo.jpg --per-row 4 --sigma 8 --light-mask --out grid.pdf\n"
         "           attnscope-cli caption --list\n"
         "  attribute Which input tokens a prediction depends on (gradient x input, integrated gradients,\n"
         "           attention x gradient, AttnLRP, rollout, attention flow; a row per token):\n"
         "           attnscope-cli attribute --model DIR --text \"The capital of France is\" --method attnlrp --csv "
         "a.csv [--out a.png]\n"
         "  heads    Score every head of a text transformer as a previous-token, duplicate-token, induction (with\n"
         "           its offset) and sink head, on repeated random sequences; write a row per head and a map per\n"
         "           detector: attnscope-cli heads --model DIR --detect previous-token,induction --csv h.csv --out "
         "h.png\n"
         "  corpus   Every head's statistics over a corpus (a line or JSON line per input) into SQLite; shards,\n"
         "           resumes, merges: attnscope-cli corpus --model DIR --input c.txt --db c.sqlite [--shard 0/4]\n"
         "           attnscope-cli corpus merge --db all.sqlite c0.sqlite c1.sqlite ...\n"
         "  speech   Say a text with espeak-ng (or read an audio file) and write the 16 kHz audio, the phonemes' time\n"
         "           spans and the log-mel spectrogram a speech model hears:\n"
         "           attnscope-cli speech --text \"the quick brown fox\" --voice en-us+f2 --wav-out s.wav --json "
         "s.json\n"
         "           attnscope-cli speech --batch corpus.jsonl --out-dir DIR\n"
         "Run 'attnscope-cli <command> --help' for a command's options.\n"_s;
}

}  // namespace

// The command's own options (and its line in --help); false for a command there is not.
bool addCommandOptions(QCommandLineParser& parser, const QString& command, const Options& o) {
  if (command == u"lab"_s) {
    parser.addPositionalArgument(u"lab"_s, u"Run a mechanism and write its view."_s, u"lab [options]"_s);
    parser.addOptions({o.mechanism, o.query, o.source, o.input,   o.score,     o.normaliser, o.temperature, o.window,
                       o.sigma,     o.heads, o.causal, o.shuffle, o.positions, o.seed,       o.dim,         o.map,
                       o.out,       o.csv,   o.width,  o.height,  o.colormap,  o.list});
    for (const auto& option : o.counts) parser.addOption(option);
  } else if (command == u"demo"_s) {
    parser.addPositionalArgument(u"demo"_s, u"Render the bundled demo views to PNG files."_s, u"demo [options]"_s);
    parser.addOption(o.outDir);
  } else if (command == u"glimpse"_s) {
    parser.addPositionalArgument(u"glimpse"_s, u"Read one glimpse of a photo and write it magnified."_s,
                                 u"glimpse [options]"_s);
    parser.addOptions({o.image, o.gaussian, o.stn, o.glimpseOut, o.json, o.scale});
  } else if (command == u"run"_s) {
    parser.addPositionalArgument(
        u"run"_s, u"Run a transformer or read an attention dump; write and draw its attention."_s, u"run [options]"_s);
    parser.addOption(o.ids);
    parser.addOptions({o.model, o.dumpIn,  o.text,     o.textFile, o.pair,     o.runImage, o.dump,           o.render,
                       o.view,  o.runOut,  o.width,    o.height,   o.colormap, o.generate, o.genTemperature, o.topK,
                       o.topP,  o.genSeed, o.onDemand, o.tile,     o.runCsv,   o.ablate,   o.ablateMode});
  } else if (command == u"patch"_s) {
    parser.addPositionalArgument(
        u"patch"_s,
        u"Patch each head, layer or position from a clean run into a corrupted one; write the recoveries."_s,
        u"patch [options]"_s);
    parser.addOptions({o.model, o.patchClean, o.patchCorrupt, o.patchAnswer, o.patchWrong, o.patchOver, o.patchMetric,
                       o.patchPosition, o.patchCsv, o.patchOut, o.width, o.height});
  } else if (command == u"align"_s) {
    parser.addPositionalArgument(
        u"align"_s, u"Run a model of the Alignment tab (%1); write its alignment."_s.arg(attn::ui::alignKinds()),
        u"align [options]"_s);
    parser.addOptions(
        {o.alignModel, o.alignText,  o.pair,     o.beam,   o.hypothesis, o.step,         o.alignLayer,
         o.alignView,  o.alignOut,   o.alignCsv, o.width,  o.height,     o.colormap,     o.alignList,
         o.alignWav,   o.alignVoice, o.sharpen,  o.smooth, o.attendTopK, o.attendWindow, o.alignAttribution});
  } else if (command == u"caption"_s) {
    parser.addPositionalArgument(u"caption"_s,
                                 u"Caption an image or a scene; write the grid of each word's attention."_s,
                                 u"caption [options]"_s);
    parser.addOptions({o.captionModel, o.captionImage, o.scene, o.captionBeam, o.hypothesis, o.perRow, o.captionSigma,
                       o.opacity, o.threshold, o.lightMask, o.colormap, o.captionOut, o.alignList});
  } else if (command == u"attribute"_s) {
    parser.addPositionalArgument(u"attribute"_s,
                                 u"Which input tokens a prediction depends on: one method, a score per token."_s,
                                 u"attribute [options]"_s);
    parser.addOptions({o.model, o.text, o.runImage, o.attrMethod, o.attrTarget, o.attrPosition, o.attrSteps,
                       o.attrBaseline, o.attrCsv, o.attrOut, o.width, o.height});
  } else if (command == u"heads"_s) {
    parser.addPositionalArgument(u"heads"_s, u"Score every head with the head detectors; write a CSV and a picture."_s,
                                 u"heads [options]"_s);
    parser.addOptions(
        {o.model, o.detect, o.headsCsv, o.headsOut, o.length, o.sequences, o.headsSeed, o.maxOffset, o.alphabet});
  } else if (command == u"corpus"_s) {
    parser.addPositionalArgument(u"corpus"_s,
                                 u"Every head's statistics over a corpus, into SQLite (or: corpus merge --db OUT "
                                 "SHARD...)."_s,
                                 u"corpus [merge SHARD...] [options]"_s);
    parser.addOptions(
        {o.model, o.corpusInput, o.corpusDb, o.corpusShard, o.corpusMaxTokens, o.corpusTopK, o.corpusThreads});
  } else if (command == u"speech"_s) {
    parser.addPositionalArgument(
        u"speech"_s, u"Say a text with espeak-ng (or read an audio file); write what a speech model hears."_s,
        u"speech [options]"_s);
    parser.addOptions({o.speechText, o.speechWav, o.voice, o.rate, o.pitch, o.noise, o.noiseSeed, o.wavOut,
                       o.speechJson, o.batch, o.batchDir});
  } else {
    return false;
  }
  return true;
}

int main(int argc, char* argv[]) {
  if (qEnvironmentVariableIsEmpty("ATTNSCOPE_DEBUG")) qInstallMessageHandler(quietMessageHandler);
  attn::ui::useOffscreenPlatformWithoutDisplay();
  QGuiApplication app(argc, argv);
  attn::app::setRawArguments(argc, argv);  // after Qt took its own options (-platform ...) out of argv
  QGuiApplication::setApplicationName(u"attnscope-cli"_s);
  QGuiApplication::setApplicationVersion(attn::ui::appVersion());

  QCommandLineParser parser;
  parser.setApplicationDescription(u"AttnScope without a window: renders attention views to files."_s);
  const QCommandLineOption helpOption = parser.addHelpOption();
  const QCommandLineOption versionOption(u"version"_s, u"Print the versions of AttnScope and its libraries."_s);
  parser.addOption(versionOption);
  parser.addPositionalArgument(u"command"_s,
                               u"lab, demo, glimpse, run, patch, attribute, heads, corpus, align, caption or speech"_s,
                               u"<command>"_s);
  // First pass: find the command; its own options are added below and checked in the second pass.
  parser.parse(QGuiApplication::arguments());
  const QStringList positional = parser.positionalArguments();
  const QString command = positional.isEmpty() ? QString() : positional.front();

  if (command.isEmpty()) {
    if (parser.isSet(versionOption)) {
      print(stdout, attn::ui::versionReport(u"attnscope-cli"_s));
      return 0;
    }
    if (parser.isSet(helpOption)) {
      print(stdout, parser.helpText() + u'\n' + commandsHelp());
      return 0;
    }
    return usageError(
        u"no command given (lab, demo, glimpse, run, patch, attribute, heads, corpus, align, caption or speech)"_s);
  }

  Options o;
  parser.clearPositionalArguments();
  if (!addCommandOptions(parser, command, o)) {
    return usageError(
        u"unknown command '%1' (lab, demo, glimpse, run, patch, attribute, heads, corpus, align, caption or speech)"_s
            .arg(command));
  }
  if (!parser.parse(QGuiApplication::arguments())) return usageError(parser.errorText());
  if (parser.isSet(helpOption)) {
    print(stdout, parser.helpText());
    return 0;
  }
  if (command == u"corpus"_s) return runCorpusCommand(parser, o);
  if (parser.positionalArguments().size() > 1) {
    return usageError(u"unexpected argument '%1'"_s.arg(parser.positionalArguments().at(1)));
  }
  if (command == u"glimpse"_s) return runGlimpse(parser, o);
  if (command == u"run"_s) return runModel(parser, o);
  if (command == u"patch"_s) return runPatchCommand(parser, o);
  if (command == u"align"_s) return runAlignCommand(parser, o);
  if (command == u"caption"_s) return runCaptionCommand(parser, o);
  if (command == u"speech"_s) return runSpeechCommand(parser, o);
  if (command == u"heads"_s) return runHeadsCommand(parser, o);
  if (command == u"attribute"_s) return runAttributeCommand(parser, o);
  return command == u"lab"_s ? runLab(parser, o) : runDemo(parser, o);
}
